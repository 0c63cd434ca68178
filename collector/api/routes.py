"""The HTTP API beside the OTLP receiver: health, metrics, read-only SQL, trace lookup."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, Field

from collector.receivers.otlp_http import check_bearer
from collector.store import traces
from collector.store.file.connect import limit_operator_memory
from collector.store.reader import run_select
from ragfault_core.errors import QueryTimeout, RagfaultError, TooManyQueries, status_of

if TYPE_CHECKING:
    from collector.components import Context
    from collector.runtime import Runtime

log = logging.getLogger("ragfault.api")


def lower_priority(nice: int) -> None:
    """Lower the calling thread's scheduling priority by ``nice`` (Linux: a thread's own nice
    value; elsewhere nothing)."""
    if nice and hasattr(os, "setpriority"):
        try:
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
        except OSError:
            pass


class CallerThreads:
    """While SQL API calls run, DuckDB keeps no worker threads (``SET threads = 1``): each query then
    runs on the thread that calls it, a user query on the SQL API's threads (``sql_nice`` lower)
    and ingest's commits on the writer's. With workers, a query's tasks go to whichever thread
    takes them first, and on DuckDB 2 that is nearly always a worker: a heavy user query ran at
    the server's priority, on the threads ingest's commits wait for. The pool comes back
    (``duckdb_threads``) when the last call ends.

    Only on DuckDB 2: DuckDB 1.5 shrinks its pool by joining the workers once their current tasks
    end, and every query ending meanwhile waits for that too. With one DuckDB thread (the default on
    two cores) there is no pool to shrink."""

    def __init__(self, con: Any) -> None:
        self.con = con  # a cursor of its own, used under the lock
        self.threads, major = traces.threads_and_major(con)
        self.enabled = self.threads > 1 and major >= 2
        self.running = 0
        self._lock = threading.Lock()

    def _set(self, n: int) -> None:
        try:
            traces.set_threads(self.con, n)
        except Exception as exc:  # a store whose sandbox locks the setting: leave the pool as it is
            self.enabled = False
            log.warning("DuckDB's threads stay at %d while SQL API calls run: %s", self.threads, exc)

    def __enter__(self) -> None:
        with self._lock:
            self.running += 1
            if self.running == 1 and self.enabled:
                self._set(1)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.running -= 1
            if self.running == 0 and self.enabled:
                self._set(self.threads)


class SqlRequest(BaseModel):
    sql: str = Field(..., description="One SELECT statement; $name parameters allowed.")
    params: dict[str, Any] = Field(default_factory=dict)
    max_rows: int | None = Field(None, gt=0, description="Row cap for this call (at most the server's).")


class SqlResponse(BaseModel):
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool


def protected_router(ctx: Context, prefix: str = "/api/v1") -> APIRouter:
    """A router whose every route needs the API token (``api_token``) when one is set."""

    def auth(request: Request) -> None:
        check_bearer(request, ctx.settings.api_token)

    return APIRouter(prefix=prefix, dependencies=[Depends(auth)])


def api_router(runtime: Runtime) -> APIRouter:
    settings = runtime.settings
    router = protected_router(runtime)
    limiter = anyio.CapacityLimiter(4)
    # user SQL: at most sql_max_concurrent at once, more get 429; each runs on a thread of its own
    # whose scheduling priority is lowered by sql_nice, so ingest keeps its share of the cores
    sql_slots = threading.BoundedSemaphore(settings.sql_max_concurrent)
    sql_pool = ThreadPoolExecutor(
        settings.sql_max_concurrent,
        thread_name_prefix="ragfault-sql",
        initializer=lower_priority,
        initargs=(settings.sql_nice,),
    )
    runtime.closers.append(lambda: sql_pool.shutdown(wait=False, cancel_futures=True))
    caller_threads = CallerThreads(runtime.store.cursor())

    def sql_in_slot(body: SqlRequest) -> bytes:
        try:
            return sql(body)
        finally:  # the slot is the thread's: it is given back when the query ends, not the request
            sql_slots.release()

    def sql(body: SqlRequest) -> bytes:
        clock = runtime.clock
        started = clock()
        limit = settings.sql_timeout_seconds
        cap = min(body.max_rows or settings.sql_row_cap, settings.sql_row_cap)
        con = runtime.store.cursor()
        try:
            limit_operator_memory(con, settings.sql_operator_memory)
            with caller_threads:
                result = run_select(
                    con, body.sql, body.params, row_cap=cap, timeout=limit,
                    max_bytes=settings.sql_max_result_bytes, max_value_bytes=settings.sql_max_value_bytes,
                    user=True, clock=clock,
                )  # fmt: skip
        finally:
            con.close()
        out = orjson.dumps(result.as_dict())
        del result
        if clock() - started > limit:  # serializing counts against the limit too
            raise QueryTimeout(f"query exceeded the {limit:g} s time limit", retry_after=0)
        return out

    @router.post("/sql", response_model=SqlResponse, summary="Run one read-only SQL statement")
    async def sql_endpoint(body: SqlRequest) -> Response:
        if not sql_slots.acquire(blocking=False):
            raise TooManyQueries(
                f"{settings.sql_max_concurrent} SQL queries are running (sql_max_concurrent)", retry_after=1
            )
        try:
            job = sql_pool.submit(sql_in_slot, body)
        except RuntimeError:  # the server is stopping
            sql_slots.release()
            raise
        # a cancelled request leaves its query to finish (or time out) on its thread
        out = await asyncio.shield(asyncio.wrap_future(job))
        return Response(out, media_type="application/json")

    @router.get("/traces/{trace_id}", summary="One trace: its row, steps and step documents")
    async def get_trace(trace_id: str) -> dict[str, Any]:
        def load() -> dict[str, Any]:
            con = runtime.store.cursor()
            try:
                out = traces.trace_detail(con, trace_id.lower())
                _objects(out["steps"], "provenance")
                return out
            finally:
                con.close()

        result = await anyio.to_thread.run_sync(load, limiter=limiter)
        if not result["trace"]["rows"]:
            raise HTTPException(404, f"no trace {trace_id}")
        return result

    return router


def _objects(result: dict[str, Any], column: str) -> None:
    """A JSON column of a result given as objects, not as the JSON text DuckDB returns: a step's
    ``provenance`` reads ``{"output_text": "genai"}`` in the trace's JSON."""
    columns = result.get("columns") or []
    if column not in columns:
        return
    i = columns.index(column)
    for row in result.get("rows") or []:
        if isinstance(row[i], str):
            try:
                row[i] = orjson.loads(row[i])
            except orjson.JSONDecodeError:
                pass  # kept as stored


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RagfaultError)
    async def _ragfault_error(request: Request, exc: RagfaultError) -> JSONResponse:
        st = status_of(exc)
        return JSONResponse({"error": st.error, "detail": st.message}, st.http, headers=st.headers)


def health_router(runtime: Runtime) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz", summary="200 once the collector accepts traces")
    async def healthz() -> JSONResponse:
        if not runtime.ready:
            return JSONResponse({"status": "starting"}, 503)
        fault = runtime.store.fault
        if fault:  # the store cannot write: exporters' spans would only get 503s
            return JSONResponse({"status": "unavailable", "reason": fault}, 503, headers={"Retry-After": "5"})
        return JSONResponse({"status": "ok", "queue_spans": runtime.writer.queued_spans})

    @router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(runtime.metrics.render(), media_type="text/plain; version=0.0.4")

    return router
