"""Decode, flatten and Arrow conversion of export requests in worker processes.

The Python work of ingest (protobuf -> attribute dicts -> convention readers -> column lists ->
Arrow) costs far more than the DuckDB write, and under one GIL it is capped at one core. A pool
of worker processes does it in parallel; the server process only reads bodies, hands them over
and writes the Arrow tables it gets back.

What a worker returns is plain data: three Arrow IPC streams (spans, steps, documents), the
number of rejected spans and their reasons. A ``PermanentError`` raised in a worker (bad
protobuf, bad JSON, a body that inflates past the limit) is pickled back and raised again in the
server, so it maps to the same 4xx as in-process decoding. A worker that dies (killed, out of
memory) breaks the pool: every request that was in it is answered with ``RetryableError``
(503 / UNAVAILABLE, the exporter re-sends) and the next request gets a fresh pool. The pool is
``ragfault_core.procpool.WorkerPool``, not ``ProcessPoolExecutor``, whose exit can hang after a worker
died on Python 3.11 before 3.11.5 (see that module).

Workers start with ``forkserver``, never ``fork``: the server process runs DuckDB, uvicorn and
gRPC threads, which a fork would copy in an undefined state. A worker exits by itself when the
server that owns it is gone (SIGKILL leaves no orphans behind).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from pathlib import Path

import pyarrow as pa

from collector.ingest.batch import ArrowBatch
from collector.ingest.build import DEFAULT_OPTIONS, TRACES, UNITS, BuildOptions
from collector.receivers.inflight import Meter, batch_bytes
from ragfault_core.errors import RetryableError
from ragfault_core.gcpolicy import collect_rarely
from ragfault_core.processes import process_start_time, usable_cores
from ragfault_core.procpool import WorkerPool

log = logging.getLogger("ragfault.decode")

# What a worker sends back: the batch's tables as IPC bytes by name (spans, steps, docs, traces,
# logs, points: those it has), the rejected count, error reasons, and the rows dated past the grace
# period.
WorkerResult = tuple[dict[str, bytes | str], int, list[str], int]
# A batch of at least this many bytes comes back through files in the pool's spool directory (the
# system's temporary directory, ``TMPDIR``), written by the worker and mapped by the server.
SPOOL_MIN_BYTES = 16 << 20
_TABLES = ("spans", "steps", "docs", "traces", "logs", "points")


def default_duckdb_threads(decode_workers: int) -> int:
    """DuckDB's threads when ``duckdb_threads`` is not set: the cores the decode workers leave, at
    least one. Under ingest the workers keep their cores busy; a DuckDB thread pool as large as the
    machine then only adds hand-offs to every commit (the writer waits for a helper thread that
    waits for a core)."""
    return max(1, usable_cores() - decode_workers)


# --- in the worker ---------------------------------------------------------------------------


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    out: bytes = sink.getvalue().to_pybytes()
    return out


def decode_to_arrow(
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    max_bytes: int,
    options: BuildOptions = DEFAULT_OPTIONS,
    received_at: datetime | None = None,
    *,
    signal: str = TRACES,
    meter: Meter | None = None,
) -> ArrowBatch:
    """Body bytes -> ArrowBatch, in whatever process calls it. Raises PermanentError subclasses and,
    with a ``meter``, ``NeedsBudget``; without one the build is not bounded (tests, tools)."""
    from collector.ingest.build import decode_and_build

    unbounded = Meter(1 << 62, 1 << 62)
    return decode_and_build(
        signal, body, content_type, content_encoding, max_bytes, meter or unbounded, options, received_at
    )


def _spool(table: pa.Table, spool_dir: str) -> str:
    """``table`` as an IPC stream in a new file of ``spool_dir``; its path."""
    path = os.path.join(spool_dir, f"{uuid.uuid4().hex}.arrows")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return path


def _work(
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    max_bytes: int,
    options: BuildOptions,
    signal: str,
    allowance: int,
    limit: int,
    spool_dir: str | None = None,
) -> WorkerResult:
    meter = Meter(allowance, limit, UNITS[signal])
    b = decode_to_arrow(body, content_type, content_encoding, max_bytes, options, signal=signal, meter=meter)
    del body
    b.trace_table()
    # a large batch goes through files: pickled through the pipe it would be copied twice here
    # (its IPC bytes, their pickle) and twice in the server (what it reads, what it unpickles)
    spool = spool_dir if spool_dir is not None and batch_bytes(b) >= SPOOL_MIN_BYTES else None
    tables: dict[str, bytes | str] = {}
    try:
        for name in _TABLES:  # each table's IPC form, the table itself let go once written
            table = getattr(b, name)
            if table is not None:
                setattr(b, name, None)
                tables[name] = _ipc(table) if spool is None else _spool(table, spool)
                del table
    except BaseException:
        _unlink(tables)
        raise
    return tables, b.rejected, b.errors, b.clamped


def _watch_server(pid: int) -> None:
    # The server is not this worker's parent (the forkserver is), and the forkserver outlives a
    # SIGKILLed server as long as its workers run: each worker watches the server itself.
    born = process_start_time(pid)
    while True:
        time.sleep(1.0)
        if process_start_time(pid) != born:
            os._exit(0)


def _init_worker(server_pid: int) -> None:
    collect_rarely()  # a request allocates a few hundred thousand short-lived objects
    threading.Thread(target=_watch_server, args=(server_pid,), name="server-watch", daemon=True).start()
    # warm up: the first Arrow conversion and protobuf parse load lazily
    from collector.receivers.payload import parse_protobuf

    parse_protobuf(b"")
    pa.array(["warm-up"], type=pa.string())


def _noop() -> int:
    return os.getpid()


# --- in the server ---------------------------------------------------------------------------


def _read_ipc(data: bytes | str) -> pa.Table:
    """A table from its IPC bytes, or from the spool file they were written to: mapped, its
    buffers read in place, and the file unlinked at once (the mapping keeps its pages until the
    table is let go)."""
    if isinstance(data, bytes | bytearray):
        return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    try:
        with pa.memory_map(data) as source:
            return pa.ipc.open_stream(source).read_all()
    finally:
        os.unlink(data)


def _unlink(tables: dict[str, bytes | str]) -> None:
    for data in tables.values():
        if isinstance(data, str):
            try:
                os.unlink(data)
            except OSError:
                pass


SPOOL_PREFIX = "ragfault-spool-"


def _remove_orphan_spools() -> None:
    """Remove the spool directories of servers that are gone (killed before their shutdown)."""
    for path in Path(tempfile.gettempdir()).glob(f"{SPOOL_PREFIX}*"):
        pid = path.name[len(SPOOL_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and process_start_time(int(pid)) is None:
            shutil.rmtree(path, ignore_errors=True)


def _from_result(res: WorkerResult) -> ArrowBatch:
    tables, rejected, errors, clamped = res
    try:
        t = {name: _read_ipc(data) for name, data in tables.items()}
    except BaseException:
        _unlink(tables)
        raise
    return ArrowBatch(
        t["spans"],
        t["steps"],
        t["docs"],
        rejected,
        list(errors),
        t.get("traces"),
        logs=t.get("logs"),
        points=t.get("points"),
        clamped=clamped,
    )


class DecodePool:
    """A worker pool that is recreated when a worker dies.

    Callers bound how many requests they hand over at once (``max_pending``), so bodies do not
    pile up in the executor's queue.
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a decode pool needs at least one worker")
        self.workers = workers
        self.max_pending = 2 * workers
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(
            [
                "collector.ingest.decode_pool",
                "collector.ingest.batch",
                "collector.receivers.signals",
                "collector.store.schema",
            ]
        )
        self._lock = threading.Lock()
        self._pool: WorkerPool | None = None
        self._closed = False
        self.restarts = 0
        # where large batches come back (``SPOOL_MIN_BYTES``); removed at shutdown, and by the next
        # server when this one was killed
        _remove_orphan_spools()
        self.spool_dir = tempfile.mkdtemp(prefix=f"{SPOOL_PREFIX}{os.getpid()}-")

    def _executor(self) -> WorkerPool:
        with self._lock:
            if self._closed:
                raise RetryableError("decode pool is shut down", retry_after=5)
            if self._pool is None:
                self._pool = WorkerPool(
                    self.workers, self._ctx, _init_worker, (os.getpid(),), name="ragfault-decode"
                )
            return self._pool

    def start(self) -> None:
        """Start the workers now (otherwise the first request does)."""
        pool = self._executor()
        for f in [pool.submit(_noop) for _ in range(self.workers)]:
            f.result(60)

    def _replace(self, broken: WorkerPool) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
                self.restarts += 1
                log.warning("a decode worker died; starting a new pool")
        broken.shutdown(wait=False, cancel_futures=True)

    def submit(
        self,
        body: bytes,
        content_type: str | None,
        content_encoding: str | None,
        max_bytes: int,
        options: BuildOptions = DEFAULT_OPTIONS,
        *,
        signal: str = TRACES,
        allowance: int = 1 << 62,
        limit: int = 1 << 62,
    ) -> Future[ArrowBatch]:
        """Decode in a worker; the future gives an ArrowBatch or raises PermanentError /
        RetryableError / ``NeedsBudget`` (a build past ``allowance``, under ``limit``). ``options``
        are plain picklable data, sent with each request."""
        pool = self._executor()
        out: Future[ArrowBatch] = Future()
        args = (options, signal, allowance, limit, self.spool_dir)
        try:
            inner = pool.submit(_work, body, content_type, content_encoding, max_bytes, *args)
        except (BrokenProcessPool, RuntimeError) as exc:  # broken, or shut down by a concurrent _replace
            self._replace(pool)
            raise RetryableError(f"decode worker unavailable: {type(exc).__name__}", retry_after=1) from exc

        def done(f: Future[WorkerResult]) -> None:
            try:
                out.set_result(_from_result(f.result()))
            except BrokenProcessPool as exc:
                self._replace(pool)
                out.set_exception(RetryableError("decode worker died; retry", retry_after=1))
                del exc
            except BaseException as exc:  # PermanentError from the worker, or cancellation
                if f.cancelled():
                    out.set_exception(RetryableError("decode cancelled", retry_after=1))
                else:
                    out.set_exception(exc)

        inner.add_done_callback(done)
        return out

    def worker_pids(self) -> list[int]:
        pool = self._pool
        return sorted(pool._processes) if pool is not None else []

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self.spool_dir, ignore_errors=True)
