"""The writer: its thread (or, with ``writer_threads``, a few lanes, each with its own connection)
owns every DuckDB write.

Receivers hand it ``ArrowBatch``es; a lane coalesces whatever is queued into one transaction
(group commit) and resolves each submitter's future only after COMMIT, so an acknowledged span is
in the database file (WAL) and survives SIGKILL. Several lanes commit side by side; two commits
that touch the same trace row conflict, and ``Store.write_spans`` retries the loser.

Other components hand it jobs (a callable taking the store's handle, ``base.Tx``, and calling the
store's operations with it: settling, evaluation results, retention, exports) that run alone: a job waits until no ingest commit is running, and no
commit starts while it runs, so jobs never race ingest.

The queue is bounded in spans; ``submit`` raises ``RetryableError`` when it is full, which the
receivers turn into 503 / UNAVAILABLE so exporters back off (memory stays bounded under overload).
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

import duckdb

from collector.ingest.batch import ArrowBatch, SpanBatch
from collector.metrics import Metrics
from collector.store.base import Con, SpanStore
from collector.store.file import checkpoint
from collector.store.schema import batch_to_arrow
from ragfault_core.errors import RetryableError

log = logging.getLogger("ragfault.writer")
T = TypeVar("T")

_STOP = object()
WAITING_HISTORY_SECONDS = 10.0  # how far back ``Writer.waiting_share`` can look


class _Gate:
    """Ingest commits run side by side; a job runs alone. Waiting jobs go before new commits."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._commits = 0
        self._job = False
        self._jobs_waiting = 0

    @contextmanager
    def commit(self) -> Iterator[None]:
        with self._cond:
            while self._job or self._jobs_waiting:
                self._cond.wait()
            self._commits += 1
        try:
            yield
        finally:
            with self._cond:
                self._commits -= 1
                if not self._commits:
                    self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._jobs_waiting += 1
            try:
                while self._job or self._commits:
                    self._cond.wait()
            finally:
                self._jobs_waiting -= 1
            self._job = True
        try:
            yield
        finally:
            with self._cond:
                self._job = False
                self._cond.notify_all()


class Writer:
    def __init__(
        self,
        store: SpanStore,
        metrics: Metrics,
        *,
        max_queue_spans: int = 100_000,
        max_batch_spans: int = 20_000,
        idle_checkpoint_seconds: float = 1.0,
        idle_checkpoint_bytes: int = checkpoint.IDLE_CHECKPOINT_BYTES,
        jobs_checkpoint_bytes: int = checkpoint.JOBS_CHECKPOINT_BYTES,
        busy_checkpoint_bytes: int = checkpoint.BUSY_CHECKPOINT_BYTES,
        lanes: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if lanes < 1:
            raise ValueError("the writer needs at least one lane")
        # checkpoint once nothing arrived for idle_checkpoint_seconds and the WAL holds
        # idle_checkpoint_bytes; while only jobs arrive (no ingest for that long), once it holds
        # jobs_checkpoint_bytes; under steady ingest (never a pause that long), once it holds
        # busy_checkpoint_bytes: DuckDB keeps what the WAL holds in memory until a checkpoint
        self.clock = clock  # seconds, monotonic: waiting spells and the last write (tests drive it)
        self.idle_checkpoint_seconds = idle_checkpoint_seconds
        self.idle_checkpoint_bytes = idle_checkpoint_bytes
        self.jobs_checkpoint_bytes = jobs_checkpoint_bytes
        self.busy_checkpoint_bytes = busy_checkpoint_bytes
        self._last_write = 0.0
        self.store = store
        self.metrics = metrics
        self.max_queue_spans = max_queue_spans
        self.max_batch_spans = max_batch_spans
        self._q: queue.Queue[Any] = queue.Queue()
        self._queued_spans = 0
        # spells during which span batches waited for (or were in) a commit: the current one's
        # start, and the ended ones of the last WAITING_HISTORY_SECONDS (monotonic start, end)
        self._waiting_from: float | None = None
        self._waiting_spells: collections.deque[tuple[float, float]] = collections.deque()
        self._lock = threading.Lock()
        self._gate = _Gate()
        self._threads = [
            threading.Thread(
                target=self._run,
                args=(i, store.cursor()),
                name="ragfault-writer" if i == 0 else f"ragfault-writer-{i}",
                daemon=True,
            )
            for i in range(lanes)
        ]
        self._stopped = threading.Event()
        self.listeners: list[Callable[[int], None]] = []
        # called once the writer stopped (what feeds it, e.g. the decode pool, stops with it)
        self.on_stop: list[Callable[[], None]] = []

    @property
    def queued_spans(self) -> int:
        return self._queued_spans

    def waiting_share(self, window: float) -> float:
        """The share of the last ``window`` seconds (at most ``WAITING_HISTORY_SECONDS``) during which
        span batches waited for, or were in, a commit.

        Spans waiting at one instant say little: a steady stream has a request in flight much of the
        time, and a writer job (a settle round's or an evaluation batch's rows) holds the queue for a
        moment. Spans waiting nearly all the time mean ingest is going as fast as it can."""
        now = self.clock()
        since = now - window
        with self._lock:
            total = sum(
                min(end, now) - max(start, since) for start, end in self._waiting_spells if end > since
            )
            if self._waiting_from is not None:
                total += now - max(self._waiting_from, since)
        # divided by ``now - since``, not ``window``: the two differ in the last bits, and a spell that
        # covers the whole window must give exactly 1.0
        span = now - since
        return min(1.0, total / span) if span > 0 else 0.0

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish what is queued, then stop."""
        alive = [t for t in self._threads if t.is_alive()]
        for _ in alive:
            self._q.put(_STOP)
        deadline = time.monotonic() + timeout
        for t in alive:
            t.join(max(0.0, deadline - time.monotonic()))
        self._stopped.set()
        # what is left behind (lanes that did not finish in time) fails retryably, never silently
        while True:
            try:
                rest = self._q.get_nowait()
            except queue.Empty:
                break
            if rest is not _STOP:
                rest[1].set_exception(RetryableError("writer stopped", retry_after=5))
        for hook in self.on_stop:
            try:
                hook()
            except Exception:
                log.exception("writer stop hook failed")

    def submit(self, batch: ArrowBatch | SpanBatch) -> Future[int]:
        """Queue a batch; the future resolves to the number of new spans once committed."""
        if isinstance(batch, SpanBatch):
            batch = batch_to_arrow(batch)
        fut: Future[int] = Future()
        n = batch.size
        with self._lock:
            if self._stopped.is_set():
                raise RetryableError("writer is stopping", retry_after=5)
            if self._queued_spans + n > self.max_queue_spans and self._queued_spans > 0:
                self.metrics.inc("ragfault_ingest_throttled_total")
                raise RetryableError(f"ingest queue full ({self._queued_spans} spans waiting)", retry_after=1)
            if self._queued_spans == 0:
                self._waiting_from = self.clock()
            self._queued_spans += n
        self.metrics.set("ragfault_queue_spans", self._queued_spans)
        self._q.put((batch, fut))
        return fut

    def submit_job(self, fn: Callable[[Con], T]) -> Future[T]:
        """Run ``fn(tx)`` on the writer thread, between ingest batches: ``fn`` calls the store's
        operations (``collector.store.settling``, ``retention``, …) with the handle it is given."""
        fut: Future[T] = Future()
        self._q.put((fn, fut))
        return fut

    def call(self, fn: Callable[[Con], T], timeout: float | None = None) -> T:
        return self.submit_job(fn).result(timeout)

    # --- the thread ---------------------------------------------------------------------------

    def _run(self, lane: int, con: duckdb.DuckDBPyConnection) -> None:
        # lane 0 also checkpoints when ingest pauses; the others just wait for work
        idle = self.idle_checkpoint_seconds if lane == 0 else None
        try:
            self._lane(lane, con, idle)
        finally:
            try:
                con.close()
            except duckdb.Error:
                pass

    def _lane(self, lane: int, con: duckdb.DuckDBPyConnection, idle: float | None) -> None:
        stop = False
        while not stop:
            try:
                item = self._q.get(timeout=idle)
            except queue.Empty:
                self._checkpoint(con, self.idle_checkpoint_bytes)
                continue
            if item is _STOP:
                break
            if not isinstance(item[0], ArrowBatch):
                self._run_job(con, *item)
                if lane == 0:
                    self._after_work(con)
                continue
            pending = [item]
            size = item[0].size
            jobs = []
            while size < self.max_batch_spans:  # coalesce what else is already queued
                try:
                    nxt = self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                if isinstance(nxt[0], ArrowBatch):
                    pending.append(nxt)
                    size += nxt[0].size
                else:
                    jobs.append(nxt)
            with self._gate.commit():
                self._write(con, pending)
            for job in jobs:
                self._run_job(con, *job)
            if lane == 0:
                self._after_work(con)

    def _after_work(self, con: duckdb.DuckDBPyConnection) -> None:
        """Lane 0, after a commit or a job: checkpoint when the WAL has grown past what this state
        of ingest allows. Only jobs (settling, evaluation) for a while: ingest is idle but more jobs
        follow, so at ``jobs_checkpoint_bytes`` (frequent checkpoints cost more than their share:
        see ``collector.store.file.checkpoint``). Ingest going on without a pause to checkpoint in: at
        ``busy_checkpoint_bytes``, so the memory the WAL's data holds stays bounded and no single
        checkpoint (DuckDB's own, at ``WAL_HARD_LIMIT``, inside a commit) stalls ingest for long."""
        if self.clock() - self._last_write >= self.idle_checkpoint_seconds:
            self._checkpoint(con, self.jobs_checkpoint_bytes)
        elif self.busy_checkpoint_bytes and self.store.wal_bytes() >= self.busy_checkpoint_bytes:
            self._checkpoint(con, self.busy_checkpoint_bytes)

    def _checkpoint(self, con: duckdb.DuckDBPyConnection, min_bytes: int) -> None:
        """Checkpoint now (once the WAL holds ``min_bytes``), between commits: when nothing arrived
        for a while, off the path of any waiting request; under steady ingest, the requests that
        arrive meanwhile wait for it (and are committed together after it)."""
        try:
            asked = time.perf_counter()
            with self._gate.alone():
                began, cpu = time.perf_counter(), time.thread_time()
                wal = self.store.wal_bytes()
                if self.store.checkpoint_if_idle(con, min_bytes):
                    took = time.perf_counter() - began
                    self.metrics.inc("ragfault_checkpoints_total")
                    self.metrics.observe("ragfault_checkpoint_seconds", took)
                    self.metrics.observe("ragfault_checkpoint_wait_seconds", began - asked)
                    log.info(
                        "checkpoint: %.1f MiB of WAL in %.2f s (%.2f s of the writer's CPU)",
                        wal / 2**20,
                        took,
                        time.thread_time() - cpu,
                    )
        except duckdb.Error as exc:  # e.g. a long read holds a transaction: retried at the next pause
            self.store.note_failure(exc)  # or the disk is full
            log.debug("idle checkpoint skipped: %s", exc)

    def _run_job(self, con: Con, fn: Callable[[Con], Any], fut: Future[Any]) -> None:
        if not fut.set_running_or_notify_cancel():
            return
        try:
            with self._gate.alone():
                result = fn(con)
            fut.set_result(result)
        except BaseException as exc:  # a failing job reports to its caller, the writer goes on
            self.store.note_failure(exc)
            log.exception("writer job failed")
            fut.set_exception(exc)

    def _write(self, con: duckdb.DuckDBPyConnection, pending: list[tuple[ArrowBatch, Future[int]]]) -> None:
        n = sum(b.size for b, _ in pending)
        spans = sum(len(b) for b, _ in pending)
        t0 = time.perf_counter()
        try:
            merged = ArrowBatch.merge([b for b, _ in pending])
            stored = self.store.write_spans(con, merged)
            logs = points = 0
            for part in signal_slices(merged):
                n_logs, n_points = self.store.write_signals(con, part)
                logs, points = logs + n_logs, points + n_points
        except Exception as exc:
            self.store.note_failure(exc)
            if self.store.fault:  # a full disk: one line, not a traceback a commit
                log.error("write of %d spans failed: %s", n, str(exc).splitlines()[0])
            else:
                log.exception("write of %d spans failed", n)
            self.metrics.inc("ragfault_write_errors_total")
            err = RetryableError(f"store write failed: {type(exc).__name__}", retry_after=5)
            self._release(n)  # before the submitters hear of it, as after a commit
            for _, fut in pending:
                fut.set_exception(err)
            return
        elapsed = time.perf_counter() - t0
        self.store.note_success()
        self._last_write = self.clock()
        self.metrics.observe("ragfault_write_seconds", elapsed)
        self.metrics.inc("ragfault_spans_stored_total", stored)
        self.metrics.inc("ragfault_spans_duplicate_total", spans - stored)
        if merged.logs is not None:
            self.metrics.inc("ragfault_log_records_stored_total", logs)
            self.metrics.inc("ragfault_log_records_duplicate_total", merged.logs.num_rows - logs)
        if merged.points is not None:
            self.metrics.inc("ragfault_metric_points_stored_total", points)
            self.metrics.inc("ragfault_metric_points_duplicate_total", merged.points.num_rows - points)
        self._release(n)
        for b, fut in pending:
            fut.set_result(b.size)
        for listener in self.listeners:
            try:
                listener(stored + logs)
            except Exception:
                log.exception("writer listener failed")

    def _release(self, n: int) -> None:
        with self._lock:
            self._queued_spans -= n
            if self._queued_spans == 0 and self._waiting_from is not None:
                now = self.clock()
                self._waiting_spells.append((self._waiting_from, now))
                self._waiting_from = None
                while self._waiting_spells and self._waiting_spells[0][1] < now - WAITING_HISTORY_SECONDS:
                    self._waiting_spells.popleft()
        self.metrics.set("ragfault_queue_spans", self._queued_spans)


# Log records or data points written in one statement at most: a request of a million records
# inserted at once held 0.9 GB in DuckDB (its DISTINCT ON and the rows it returns), in slices of
# this many 0.2 GB. Each slice is its own transaction: a slice that fails is answered as a failed
# request, which the exporter sends again, and the records of the slices before are then found
# stored (their ids are their content's hash).
SIGNAL_SLICE_ROWS = 65_536


def signal_slices(batch: ArrowBatch) -> list[ArrowBatch]:
    """``batch``'s log records and metric points as batches of at most ``SIGNAL_SLICE_ROWS`` rows
    each (its spans, steps and documents in none of them); ``batch`` itself when it is small."""
    logs, points = batch.logs, batch.points
    n_logs = logs.num_rows if logs is not None else 0
    n_points = points.num_rows if points is not None else 0
    if n_logs + n_points <= SIGNAL_SLICE_ROWS:
        return [batch]
    empty = ArrowBatch(batch.spans.slice(0, 0), batch.steps.slice(0, 0), batch.docs.slice(0, 0))
    out = []
    for table, name in ((logs, "logs"), (points, "points")):
        if table is None:
            continue
        for start in range(0, table.num_rows, SIGNAL_SLICE_ROWS):
            part = ArrowBatch(empty.spans, empty.steps, empty.docs)
            setattr(part, name, table.slice(start, SIGNAL_SLICE_ROWS))
            out.append(part)
    return out
