"""Evaluation inside a running server: the scheduler that evaluates settled traces, and the API
for loading gold cases and the knowledge base and for re-running evaluators.

``register`` is called by ``ragfault.server.build`` to add these to the collector.
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import datetime
from typing import Any

import anyio
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from collector.receivers.otlp_http import check_bearer
from evaluators.config import EvaluationSettings, evaluator_configs, load_evaluation_settings
from evaluators.loading import store_gold, store_kb, traces_for_cases
from evaluators.registry import discover
from evaluators.runner import Runner, StoreRunner

log = logging.getLogger("ragfault.evaluate")


def build_runner(runtime: Any, settings: EvaluationSettings | None = None) -> StoreRunner:
    settings = settings or load_evaluation_settings(runtime.settings.config_file)
    specs = discover()
    configs = evaluator_configs(settings, specs)
    return StoreRunner(
        runtime.store.cursor(),
        lambda fn: runtime.writer.call(fn, timeout=300),
        Runner(specs, configs, tier="cheap"),
        runtime.settings.source_keys,
        runtime.metrics,
    )


class EvaluationService:
    """Evaluates traces the settler hands over, in a thread of its own, in bounded batches."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.settings = load_evaluation_settings(runtime.settings.config_file)
        self.runner = build_runner(runtime, self.settings)
        self._q: queue.Queue[list[str] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="ragfault-evaluator", daemon=True)
        self._lock = threading.Lock()
        self.pending = 0
        runtime.evaluation = self

    def start(self) -> None:
        self.runtime.settler.listeners.append(self.enqueue)
        self._thread.start()

    def stop(self) -> None:
        self._q.put(None)
        self._thread.join(30)

    def enqueue(self, trace_ids: list[str]) -> None:
        with self._lock:
            self.pending += len(trace_ids)
        self.runtime.metrics.set("ragfault_traces_waiting_evaluation", self.pending)
        self._q.put(list(trace_ids))

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            size = self.settings.batch_size
            for i in range(0, len(item), size):
                chunk = item[i : i + size]
                try:
                    self.runner.evaluate(chunk)
                except Exception:
                    log.exception("evaluation of %d traces failed", len(chunk))
                    self.runtime.metrics.inc("ragfault_evaluation_failures_total")
                finally:
                    with self._lock:
                        self.pending -= len(chunk)
                    self.runtime.metrics.set("ragfault_traces_waiting_evaluation", self.pending)

    def evaluate_now(self, trace_ids: list[str]) -> int:
        """Evaluate synchronously (API calls), in batches."""
        n = 0
        size = self.settings.batch_size
        for i in range(0, len(trace_ids), size):
            n += self.runner.evaluate(trace_ids[i : i + size])
        return n

    def idle(self) -> bool:
        return self.pending == 0 and self._q.empty()


class EvaluateRequest(BaseModel):
    trace_ids: list[str] | None = Field(None, description="These traces; else every settled trace matching the filters.")
    run_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(100_000, gt=0)


def router(runtime: Any) -> APIRouter:
    def auth(request: Request) -> None:
        check_bearer(request, runtime.settings.api_token)

    r = APIRouter(prefix="/api/v1", dependencies=[Depends(auth)])

    def write(fn: Any) -> Any:
        return runtime.writer.call(fn, timeout=300)

    def reevaluate(case_ids: list[str]) -> int:
        svc = getattr(runtime, "evaluation", None)
        if svc is None:
            return 0
        con = runtime.store.cursor()
        try:
            ids = traces_for_cases(con, case_ids)
        finally:
            con.close()
        if ids:
            svc.enqueue(ids)
        return len(ids)

    @r.post("/gold", summary="Load gold cases (JSONL body); re-evaluates traces of reloaded cases")
    async def load_gold(request: Request, dataset: str | None = None) -> dict[str, Any]:
        body = await request.body()
        ids = await anyio.to_thread.run_sync(lambda: store_gold(write, body, dataset or "api"))
        queued = await anyio.to_thread.run_sync(reevaluate, ids)
        return {"loaded": len(ids), "reevaluating": queued}

    @r.post("/kb", summary="Load knowledge-base documents (JSONL body)")
    async def load_kb(request: Request) -> dict[str, Any]:
        body = await request.body()
        ids = await anyio.to_thread.run_sync(lambda: store_kb(write, body))
        return {"loaded": len(ids)}

    @r.post("/evaluate", summary="Re-run the cheap-tier evaluators over stored traces")
    async def evaluate(body: EvaluateRequest) -> dict[str, Any]:
        svc = runtime.evaluation

        def work() -> int:
            ids = body.trace_ids
            if ids is None:
                con = runtime.store.cursor()
                try:
                    ids = select_traces(con, body.run_id, body.since, body.until, body.limit)
                finally:
                    con.close()
            return svc.evaluate_now(ids)

        return {"evaluated": await anyio.to_thread.run_sync(work)}

    return r


def select_traces(con: Any, run_id: str | None, since: datetime | None, until: datetime | None, limit: int) -> list[str]:
    rows = con.execute(
        "SELECT trace_id FROM traces WHERE settled_at IS NOT NULL "
        "AND ($run_id IS NULL OR run_id = $run_id) AND ($since IS NULL OR start_time >= $since) "
        "AND ($until IS NULL OR start_time < $until) ORDER BY start_time LIMIT $limit",
        {"run_id": run_id, "since": since, "until": until, "limit": limit},
    ).fetchall()
    return [r[0] for r in rows]


def register(routers: list[Any], extensions: list[Any]) -> None:
    routers.append(router)
    extensions.append(EvaluationService)
