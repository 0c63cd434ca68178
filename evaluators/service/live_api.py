"""The API of live triage (issue 41): the queue of live traces worth a person's look, promoting one
to a gold case, and the promoted cases as JSONL.

* ``GET /api/v1/triage`` — the bundled ``triage`` query (negative feedback, a proven live cause, a
  trigger; by cause and recency, capped per service and per day), each row with the registry's best
  documents for its question when ``search`` is on (the index evaluation keeps already: no extra build).
* ``POST /api/v1/gold/promote`` — ``evaluators.service.promote``: the gold case is written, the trace
  evaluated again with it, and the answer says what ``attribution`` now finds.
* ``GET /api/v1/gold/promoted`` — the promoted cases as JSONL (the gold files' schema, loadable with
  ``ragfault load gold``); who promoted each and when is in the ``gold_promotions`` table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio
import orjson
from fastapi import APIRouter, Query
from fastapi.responses import Response

from collector.api.routes import protected_router
from collector.components import Context
from collector.store import promote as store_promote
from collector.store.reader import cursor_query, run_select
from evaluators.service import loading
from evaluators.service.promote import PromoteRequest, promote
from evaluators.service.runner import utcnow
from evaluators.service.scheduler import EvaluationService
from queries import load_query
from ragfault_core.jsonvalue import loads as loads_json

MAX_TRIAGE = 1000
SEARCH_HITS = 5


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return loads_json(value)
        except ValueError:
            return value
    return value


def registry_search(ctx: Context, question: str | None, k: int = SEARCH_HITS) -> list[dict[str, Any]] | None:
    """The registry's best documents for a question, from the index live attribution searches
    (None when the server evaluates nothing or the question is empty)."""
    svc = ctx.find(EvaluationService)
    refs = svc.runner.refs if svc is not None else None
    if refs is None or not question:
        return None
    from evaluators.builtin._registry_index import registry_index, terms_of

    kb = refs.kb
    index = registry_index(kb)
    out = []
    for doc_id, score in index.search(terms_of(question), k):
        doc = kb.get(doc_id)
        out.append({"doc_id": doc_id, "score": round(score, 4), "title": doc.title if doc else None})
    return out


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)
    limiter = anyio.CapacityLimiter(2)

    @r.get("/triage", summary="Live traces worth a person's look, most urgent first")
    async def triage(
        service: str | None = None,
        since: datetime | None = None,
        per_service: int | None = Query(None, gt=0, description="At most this many rows of one service."),
        per_day: int | None = Query(None, gt=0, description="At most this many rows of one day (UTC)."),
        limit: int = Query(100, gt=0, le=MAX_TRIAGE),
        search: bool = Query(True, description="Add the registry's best documents for each question."),
    ) -> dict[str, Any]:
        q = load_query("triage")
        params = q.bind(
            {
                "service": service,
                "since": since,
                "per_service": per_service,
                "per_day": per_day,
                "limit": limit,
            }
        )

        def load() -> list[dict[str, Any]]:
            con = ctx.store.cursor()
            try:
                res = run_select(con, q.sql, params, row_cap=MAX_TRIAGE)
            finally:
                con.close()
            rows = [dict(zip(res.columns, row, strict=True)) for row in res.rows]
            for row in rows:
                row["evidence"] = _json(row["evidence"])
                if search:
                    row["registry_search"] = registry_search(ctx, row["question"])
            return rows

        items = await anyio.to_thread.run_sync(load, limiter=limiter)
        return {"items": orjson.loads(orjson.dumps(items, default=str)), "count": len(items)}

    @r.post("/gold/promote", summary="Promote a live trace to a gold case; re-evaluates the trace with it")
    async def promote_route(body: PromoteRequest) -> dict[str, Any]:
        svc = ctx.find(EvaluationService)

        def evaluate(trace_ids: list[str]) -> None:
            if svc is None:
                return
            svc.evaluate_now(trace_ids)

        def work() -> dict[str, Any]:
            con = ctx.store.cursor()
            try:
                out = promote(con, lambda fn: ctx.writer.call(fn, timeout=300), evaluate, body, utcnow())
                # other traces that join the case (the same question) are evaluated again in the background
                others = [t for t in loading.traces_for_cases(con, [out["case_id"]]) if t != out["trace_id"]]
            finally:
                con.close()
            if others and svc is not None:
                svc.enqueue(others)
            out["reevaluating"] = len(others)
            return out

        return await anyio.to_thread.run_sync(work, limiter=limiter)

    @r.get("/gold/promoted", summary="The cases promoted from live traces, as JSONL")
    async def promoted(dataset: str | None = None) -> Response:
        def load() -> bytes:
            con = ctx.store.cursor()
            try:
                raws = store_promote.promoted(cursor_query(con, row_cap=10_000_000), dataset)
            finally:
                con.close()
            return b"".join(orjson.dumps(_json(raw)) + b"\n" for raw in raws)

        body = await anyio.to_thread.run_sync(load, limiter=limiter)
        return Response(body, media_type="application/x-ndjson")

    return r
