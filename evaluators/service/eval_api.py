"""The evaluation API: loading gold cases and the knowledge base (each re-queues the traces it
affects), and re-running the cheap tier over stored traces."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio
from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from collector.api.routes import protected_router
from collector.components import Context
from collector.store import verdicts
from collector.store.base import Tx
from evaluators.service import loading
from evaluators.service.scheduler import EvaluationService
from ragfault_core.errors import RetryableError


class EvaluateRequest(BaseModel):
    trace_ids: list[str] | None = Field(
        None, description="These traces; else every settled trace matching the filters."
    )
    run_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(100_000, gt=0)


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)

    def write(fn: Any) -> Any:
        return ctx.writer.call(fn, timeout=300)

    def reevaluate(case_ids: list[str]) -> int:
        svc = ctx.find(EvaluationService)
        if svc is None:
            return 0
        con = ctx.store.cursor()
        try:
            ids = loading.traces_for_cases(con, case_ids)
        finally:
            con.close()
        if ids:
            svc.enqueue(ids)
        return len(ids)

    @r.post("/gold", summary="Load gold cases (JSONL body); re-evaluates traces of reloaded cases")
    async def load_gold(request: Request, dataset: str | None = None) -> dict[str, Any]:
        body = await request.body()
        ids = await anyio.to_thread.run_sync(lambda: loading.store_gold(write, body, dataset or "api"))
        queued = await anyio.to_thread.run_sync(reevaluate, ids)
        return {"loaded": len(ids), "reevaluating": queued}

    @r.post(
        "/kb",
        summary="Load knowledge-base documents (JSONL body); re-evaluates traces whose textless documents take their text",
    )
    async def load_kb(request: Request) -> dict[str, Any]:
        body = await request.body()
        ids, refilled = await anyio.to_thread.run_sync(lambda: loading.load_kb(write, body))
        settler = ctx.settler
        if refilled and settler is not None:
            settler.resweep()  # the load marked them waiting to be assembled again, then evaluated
        return {"loaded": len(ids), "reevaluating": len(refilled)}

    @r.post("/evaluate", summary="Re-run the cheap-tier evaluators over stored traces")
    async def evaluate(body: EvaluateRequest) -> dict[str, Any]:
        svc = ctx.find(EvaluationService)
        if svc is None:
            raise RetryableError("the evaluation service is not running yet", retry_after=1)

        def work() -> int:
            if body.trace_ids is not None:
                return int(svc.evaluate_now(body.trace_ids))
            con = ctx.store.cursor()
            try:
                received = select_traces_received(con, body.run_id, body.since, body.until, body.limit)
            finally:
                con.close()
            return int(svc.evaluate_now(list(received), received))

        return {"evaluated": await anyio.to_thread.run_sync(work)}

    return r


def select_traces_received(
    con: Tx, run_id: str | None, since: datetime | None, until: datetime | None, limit: int
) -> dict[str, datetime | None]:
    """The settled traces matching the filters, oldest first, each with its ``first_received_at``
    (for ``StoreRunner.evaluate_many``'s ``received``)."""
    return verdicts.settled_received(con, run_id, since, until, limit)
