"""The API routes the web UI draws from (``/api/v1/ui/...``): the dashboard's sections in one call,
the case table and the trace list paged, sorted and filtered on the server with a total count, run
against run, the review queue for human labels, the bundled queries for the SQL console, and a
button's worth of demo data loaded into this server.

Every section is SQL: the bundled queries (``queries/``) and the UI's own files in ``collector/store/sql/ui/`` with
the same headers. Sort columns are chosen from fixed lists, never spliced from the request.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi import Query as Q
from fastapi.responses import JSONResponse

from collector.components import Context
from collector.receivers.otlp_http import check_bearer
from collector.store import ui as store_ui
from collector.store import ui_facts
from collector.store.reader import jsonable, run_select
from collector.store.sqlfiles import statement
from collector.store.ui import CASE_SORTS as CASE_SORTS
from collector.store.ui import TRACE_SORTS as TRACE_SORTS
from collector.store.ui_facts import Building, DashboardFacts
from queries import Query, all_queries, load_query
from queries.taxonomy import attribution_order
from ragfault.ui.live import LIVE_CAUSES

ROOT_CAUSES = attribution_order()
"""The root causes ``attribution`` may name, in its order (``queries.taxonomy``)."""
MAX_PAGE = 200


def ui_query(name: str) -> Query:
    """One of the UI's own statements (``collector/store/sql/ui/<name>.sql``)."""
    return statement("ui", name)


def _rows(result: Any) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, r, strict=True)) for r in result.rows]


def _filters(run_id: str | None, dataset: str | None, since: str | None, until: str | None) -> dict[str, Any]:
    return {
        "run_id": run_id or None,
        "dataset": dataset or None,
        "since": since or None,
        "until": until or None,
    }


def _order(sorts: dict[str, str], sort: str, desc: bool, tiebreak: str) -> str:
    if sort not in sorts:
        raise HTTPException(400, f"cannot sort by {sort!r}; choose one of {sorts and sorted(sorts)}")
    return store_ui.order_by(sorts, sort, desc, tiebreak)


def _page(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_PAGE:
        raise HTTPException(400, f"limit must be between 1 and {MAX_PAGE}")
    if offset < 0:
        raise HTTPException(400, "offset must be 0 or more")
    return limit, offset


def overview(con: Any) -> dict[str, Any]:
    q = ui_query("ui_overview")
    out = _rows(run_select(con, q.sql, {}, row_cap=1))[0]
    out["runs"] = _rows(run_select(con, ui_query("ui_runs").sql, {}, row_cap=10_000))
    out["datasets"] = [r[0] for r in store_ui.read(con, "datasets").rows]
    out["categories"] = [r[0] for r in store_ui.read(con, "categories").rows]
    out["root_causes"] = list(ROOT_CAUSES)
    out["live_causes"] = list(LIVE_CAUSES)
    return out


SECTIONS = ("root_causes", "layer_metrics", "refusal_table", "quadrant")
FAST = {name: "dash_" + name for name in ("root_causes", "layer_metrics", "quadrant", "trend")}
"""Each of these sections is the UI's own statement with the bundled query's definitions
(``ui_trend``'s for the trend) over the dashboard's facts (``collector.store.ui_facts``: their hourly
sums and the rows of the hours a time filter cuts): the same numbers, checked by
tests/ui/test_facts.py, without reading ``evaluations``, and a row a trace only in the hours a time
filter cuts."""
BUNDLED = {"refusal_table": ui_facts.refusal_table_sql}
"""Sections that are the bundled query itself, its first part (each trace's row) read from the facts."""


def section(name: str) -> tuple[str, Query]:
    """The SQL of a dashboard section (a complete statement: its filters are its parameters) and the
    statement (its parameters)."""
    q = ui_query(FAST[name])
    return q.sql, q


def dashboard(con: Any, filters: dict[str, Any], bucket: str) -> dict[str, Any]:
    """Each section of the dashboard, on a cursor where the facts are registered (``DashboardFacts``)."""
    out: dict[str, Any] = {"filters": filters, "timings_ms": {}}
    for name in (*SECTIONS, "trend"):
        t0 = time.perf_counter()
        if name in BUNDLED:
            q = load_query(name)
            out[name] = _rows(run_select(con, BUNDLED[name](), q.bind(filters), row_cap=50_000))
        else:
            text, q = section(name)
            params = {**filters, "bucket": bucket} if name == "trend" else filters
            out[name] = _rows(run_select(con, text, q.bind(params), row_cap=50_000))
        out["timings_ms"][name] = round((time.perf_counter() - t0) * 1000, 1)
    return out


def cases(con: Any, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int) -> dict[str, Any]:
    _order(CASE_SORTS, sort, desc, "case_id, trace_id")  # a sort key of the list, or a clear 400
    # past the first page, the count first: a page past the middle is then read from the other end
    known = store_ui.read(con, "cases_count", params).rows[0][0] if offset else None
    rows = _rows(store_ui.cases_page(con, params, sort, desc, limit, offset, list(ROOT_CAUSES), known))
    total = known
    if total is None:
        total = rows[0]["_total"] if rows else store_ui.read(con, "cases_count", params).rows[0][0]
    for r in rows:
        r.pop("_total", None)
    return {"total": total, "offset": offset, "limit": limit, "rows": rows}


def traces(
    con: Any, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int, facts: bool = False
) -> dict[str, Any]:
    """A page of the trace list and its exact total. ``facts``: the dashboard's facts are registered on
    ``con`` (the root causes are read from them), else the page's own are computed."""
    _order(TRACE_SORTS, sort, desc, "t.trace_id")  # a sort key of the list, or a clear 400
    if params.get("q") is not None:  # the count and the page from one reading of the texts
        rows = _rows(store_ui.traces_search(con, params, sort, desc, limit, offset))
        total = rows[0]["_total"] if rows else store_ui.traces_count(con, params)
        for r in rows:
            del r["_total"]
    else:
        total = store_ui.traces_count(con, params)
        rows = _rows(store_ui.traces_page(con, params, sort, desc, limit, offset, total))
    ids = [r["trace_id"] for r in rows]
    if ids:
        tokens = dict(store_ui.read(con, "trace_tokens", {"ids": ids}).rows)
        if facts:
            causes = dict(store_ui.read(con, "trace_causes", {"ids": ids}).rows)
        else:
            causes = ui_facts.root_causes(con, ids)
        fb = dict(store_ui.read(con, "trace_feedback", {"ids": ids}).rows)
        for r in rows:
            r["tokens"] = tokens.get(r["trace_id"])
            r["root_cause"] = causes.get(r["trace_id"])
            r["feedback"] = fb.get(r["trace_id"], 0)
    return {"total": total, "offset": offset, "limit": limit, "rows": rows}


def compare(con: Any, base: str, new: str) -> dict[str, Any]:
    """The cases of two runs paired (``run_diff``) and each run's root causes, over the facts. The
    metrics per slice are ``GET /api/v1/compare``'s (``ragfault compare``), which the page reads."""
    diff = load_query("run_diff")
    changes = _rows(run_select(con, diff.sql, diff.bind({"base_run": base, "new_run": new}), row_cap=100_000))
    causes = load_query("root_causes")
    by_cause = {
        side: _rows(run_select(con, causes.sql, causes.bind({"run_id": run}), row_cap=1000))
        for side, run in (("base", base), ("new", new))
    }
    return {
        "base": base,
        "new": new,
        "cases": changes,
        "root_causes": by_cause,
    }


_LABELS = {
    "judge_refusal": ["refused", "answered", "clarify"],
}
_CLAIM_LABELS = ["supported", "contradicted", "unsupported"]


def labels_for(metric: str, claim: str | None) -> list[str]:
    if metric in _LABELS:
        return _LABELS[metric]
    if claim is not None or metric in ("judge_answer_support", "judge_citation_support"):
        return _CLAIM_LABELS
    return ["pass", "fail"]


def review_queue(con: Any, size: int, week: str) -> list[dict[str, Any]]:
    q = ui_query("ui_review_queue")
    rows = _rows(run_select(con, q.sql, q.bind({"size": size, "seed": week}), row_cap=size))
    for r in rows:
        r["labels"] = labels_for(r["metric"], r["claim"])
    return rows


def review_item(con: Any, trace_id: str, metric: str, claim: str | None) -> dict[str, Any]:
    """What one review screen shows: the trace's question and answer, the final context and the judge's
    verdict on the item with its reason when the judge gave one."""
    trace = _rows(store_ui.read(con, "review_trace", {"t": trace_id}))
    if not trace:
        raise HTTPException(404, f"no trace {trace_id}")
    context = [r[0] for r in store_ui.read(con, "review_context", {"t": trace_id}, row_cap=50).rows]
    ev = _rows(store_ui.read(con, "review_verdict", {"t": trace_id, "m": metric}))
    reason = None
    if ev:
        reason = ev[0]["reason"]
        details = ev[0]["details"]
        if claim is not None and isinstance(details, str):
            import orjson

            try:
                d = orjson.loads(details)
            except orjson.JSONDecodeError:
                d = None
            for c in (d or {}).get("claims", []) if isinstance(d, dict) else []:
                if isinstance(c, dict) and c.get("claim") == claim:
                    reason = c.get("reason") or c.get("sentence") or reason
    return {"trace": trace[0], "context": context, "verdict": ev[0] if ev else None, "reason": reason}


def bundled_queries() -> list[dict[str, Any]]:
    return [
        {
            "name": q.name,
            "description": q.description,
            "params": q.params,
            "defaults": q.defaults,
            "sql": q.sql,
        }
        for q in all_queries().values()
    ]


def load_demo(ctx: Context, port: int) -> dict[str, Any]:
    """Load the demo's knowledge base and gold set into this server and send its app's traces here."""
    import httpx

    from ragfault.demo import scenarios as sc
    from ragfault.demo.run import run_app

    host = ctx.settings.host
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    headers = {"Authorization": f"Bearer {ctx.settings.api_token}"} if ctx.settings.api_token else {}
    base = resources.files("ragfault.demo")
    with httpx.Client(base_url=url, timeout=60, headers=headers) as http:
        for path, name in (("/api/v1/kb", "kb.jsonl"), ("/api/v1/gold?dataset=helpdesk-demo", "gold.jsonl")):
            http.post(path, content=base.joinpath(name).read_bytes()).raise_for_status()
    sent = run_app(url)
    return {"sent": sent, "run_id": sc.RUN_ID}


RETRY_SECONDS = 1


def building(b: Building) -> JSONResponse:
    """What a call that needs the dashboard's facts answers while they are computed in full in the
    background: 202, when that began and why, and when to ask again."""
    since = datetime.fromtimestamp(b.since, UTC).isoformat()
    body = {"building": {"since": since, "why": b.why, "retry_after": RETRY_SECONDS}, "detail": str(b)}
    return JSONResponse(body, status_code=202, headers={"Retry-After": str(RETRY_SECONDS)})


def facts_of(ctx: Context) -> DashboardFacts:
    """The dashboard's facts of this server's database, saved beside its file (``<db>.ui-facts/``).
    A lake collector (and a ``:memory:`` database) keeps them in memory only: each collector computes
    its own from the lake at start, in the background, and again after a restart."""
    found = ctx.find(DashboardFacts)
    if found is None:
        path = ctx.store.path
        on_file = ctx.settings.store == "duckdb" and path not in ("", ":memory:")
        saved = path + ".ui-facts" if on_file else None
        found = DashboardFacts(path=saved, cursor=ctx.store.cursor)
        ctx.provide(found)
    return found


class FactsKeeper:
    """The server's part in keeping the facts: brought up to date in the background at start (loaded
    from where they were saved), saved at stop."""

    def __init__(self, ctx: Context) -> None:
        self.facts = facts_of(ctx)

    def start(self) -> None:
        self.facts.start()

    def stop(self) -> None:
        self.facts.stop()


def router(ctx: Context) -> APIRouter:
    def auth(request: Request) -> None:
        check_bearer(request, ctx.settings.api_token)

    r = APIRouter(prefix="/api/v1/ui", dependencies=[Depends(auth)])
    limiter = anyio.CapacityLimiter(4)
    facts = facts_of(ctx)

    async def read(fn: Any, *args: Any, attribution: bool = False) -> Any:
        """``fn(con, *args)`` on a cursor of its own; ``attribution``: with the dashboard's facts
        registered (``attribution`` is then theirs), or 202 while they are computed in full."""

        def work() -> Any:
            con = ctx.store.cursor()
            try:
                if attribution:
                    facts.use(con, wait=False)
                return jsonable(fn(con, *args))
            finally:
                con.close()

        try:
            return await anyio.to_thread.run_sync(work, limiter=limiter)
        except Building as b:
            return building(b)

    @r.get("/overview", summary="What the database holds: counts, runs, datasets, categories")
    async def get_overview() -> Any:
        out = await read(overview)
        out["grpc_port"] = ctx.grpc_port
        return out

    @r.get("/dashboard", summary="Root causes, layered metrics, refusals, quadrant and the trend, filtered")
    async def get_dashboard(
        run_id: str | None = None, dataset: str | None = None, since: str | None = None,
        until: str | None = None, bucket: str = "day",
    ) -> Any:  # fmt: skip
        if bucket not in ("hour", "day"):
            raise HTTPException(400, "bucket must be hour or day")
        return await read(dashboard, _filters(run_id, dataset, since, until), bucket, attribution=True)

    @r.get("/cases", summary="The case table of the dashboard: one page, its total, sorted and filtered")
    async def get_cases(
        run_id: str | None = None, dataset: str | None = None, since: str | None = None, until: str | None = None,
        root_cause: str | None = None, layer: str | None = None, category: str | None = None, q: str | None = None,
        sort: str = "root_cause", desc: bool = False, limit: int = Q(50), offset: int = Q(0),
    ) -> Any:  # fmt: skip
        lim, off = _page(limit, offset)
        params = {
            **_filters(run_id, dataset, since, until), "root_cause": root_cause or None, "layer": layer or None,
            "category": category or None, "q": q or None,
        }  # fmt: skip
        return await read(cases, params, sort, desc, lim, off, attribution=True)

    @r.get("/traces", summary="The trace list: one page and its total, filtered and sorted")
    async def get_traces(
        service: str | None = None, run_id: str | None = None, root_cause: str | None = None,
        since: str | None = None, until: str | None = None, feedback: bool | None = None, q: str | None = None,
        sort: str = "start_time", desc: bool = True, limit: int = Q(50), offset: int = Q(0),
        live: bool | None = None, live_cause: str | None = None, negative_feedback: bool | None = None,
    ) -> Any:  # fmt: skip
        lim, off = _page(limit, offset)
        if live_cause and live_cause not in LIVE_CAUSES:
            raise HTTPException(400, f"live_cause must be one of {', '.join(LIVE_CAUSES)}")
        params = {
            "service": service or None, "run_id": run_id or None, "root_cause": root_cause or None,
            "since": since or None, "until": until or None, "feedback": feedback, "q": q or None,
            "live": live, "live_cause": live_cause or None, "negative_feedback": negative_feedback,
        }  # fmt: skip

        def page(con: Any) -> dict[str, Any]:
            # the facts when they exist (or the root-cause filter needs them); else the page's own
            return traces(con, params, sort, desc, lim, off, facts.use(con, bool(root_cause), wait=False))

        return await read(page)

    @r.get(
        "/compare", summary="Two runs side by side: the cases regressed and improved, root causes of each run"
    )
    async def get_compare(base: str, new: str) -> Any:
        return await read(compare, base, new, attribution=True)

    @r.get("/review", summary="The review queue: items for human labels (half changed most, half random)")
    async def get_review(size: int = 30, week: str | None = None) -> Any:
        if not 1 <= size <= 1000:
            raise HTTPException(400, "size must be between 1 and 1000")
        seed = week or datetime.now(UTC).strftime("%G-W%V")
        return {"week": seed, "items": await read(review_queue, size, seed)}

    @r.get("/review/item", summary="One review screen: the trace, its context and the judge's verdict")
    async def get_review_item(trace_id: str, metric: str, claim: str | None = None) -> Any:
        return await read(review_item, trace_id.lower(), metric, claim)

    @r.get("/queries", summary="The bundled queries (name, description, parameters, SQL)")
    async def get_queries() -> Any:
        return bundled_queries()

    @r.post("/demo", summary="Load the demo's knowledge base and gold set here and send its traces here")
    async def post_demo(request: Request) -> Any:
        # the port this server listens on (a proxy in front may have another)
        port = int(ctx.settings.http_port or request.url.port or 4318)
        return await anyio.to_thread.run_sync(load_demo, ctx, port)

    return r
