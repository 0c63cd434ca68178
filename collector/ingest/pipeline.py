"""The one export path both receivers call: decode + flatten, queue for the writer, wait for the commit.

Traces, logs and metrics all go this way: the same writer queue (bounded, 503 when full), the same
group commit, the same acknowledgement after COMMIT.

Decoding and building the rows run in a pool of worker processes when ``decode_workers`` > 0 (the
Python work of ingest then uses more than one core), else in a thread, for all three signals; either
way a request holds its body's bytes, then what its rows may build, then its batch's exact bytes in
one ``ByteBudget`` until its commit (``collector.receivers.inflight``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from collector.ingest.batch import ArrowBatch
from collector.ingest.build import TRACES, UNITS, BuildOptions
from collector.ingest.decode_pool import DecodePool, decode_to_arrow
from collector.metrics import Metrics
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.normalize.mapping import Mappings
from collector.receivers.inflight import ByteBudget, Meter, NeedsBudget, batch_bytes, build_reservation
from collector.receivers.payload import inflated_size
from collector.store.writer import Writer, signal_slices
from ragfault_core.errors import PayloadTooLarge

log = logging.getLogger("ragfault.pipeline")

# times a request is decoded again with more of the budget (``Meter``): the last time with
# ``max_decoded_bytes``, beyond which it is refused with 413
REBUILDS = 3
# the metric names' unit of each signal (``ragfault_<unit>_received_total``)
_METRIC_UNITS = {TRACES: "spans", "logs": "log_records", "metrics": "metric_points"}


@dataclass(frozen=True)
class ExportResult:
    accepted: int
    rejected: int
    message: str


class Pipeline:
    def __init__(
        self,
        writer: Writer,
        metrics: Metrics,
        source_keys: tuple[str, ...] = DEFAULT_SOURCE_KEYS,
        commit_timeout: float = 60.0,
        decode_workers: int = 0,
        max_inflight_bytes: int = 1 << 62,
        max_decoded_bytes: int = 1 << 62,
        future_grace_seconds: float | None = None,
        mappings: Mappings = (),
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        # the ingest bytes held at once, both receivers together (``collector.receivers.inflight``)
        self.budget = ByteBudget(max_inflight_bytes, lambda n: metrics.set("ragfault_inflight_bytes", n))
        # how every request's rows are built (mappings: [[conventions.mapping]], compiled)
        self.options = BuildOptions(tuple(source_keys), future_grace_seconds, tuple(mappings))
        self.commit_timeout = commit_timeout
        # what one request's rows may take once built (413 beyond), and a body once inflated
        self.max_decoded_bytes = min(max_decoded_bytes, max_inflight_bytes)
        self.pool: DecodePool | None = None
        self.set_decode_workers(decode_workers)

    def set_decode_workers(self, workers: int) -> None:
        """Use ``workers`` decode processes (0: decode in the calling thread). Started lazily."""
        old, self.pool = self.pool, (DecodePool(workers) if workers > 0 else None)
        if old is not None:
            old.shutdown()
        if self.pool is not None and self.close not in self.writer.on_stop:
            self.writer.on_stop.append(self.close)

    def start_pool(self) -> None:
        """Start the decode workers in a background thread (the first request would otherwise)."""
        pool = self.pool
        if pool is None:
            return

        def start() -> None:
            try:
                pool.start()
            except Exception as exc:  # shut down meanwhile, or a worker died: requests start it again
                log.debug("decode pool warm-up: %s", exc)

        threading.Thread(target=start, name="ragfault-decode-start", daemon=True).start()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def received(self, batch: ArrowBatch, signal: str = TRACES) -> ArrowBatch:
        """Count a decoded request in the metrics; returns it."""
        unit = _METRIC_UNITS[signal]
        self.metrics.inc(f"ragfault_{unit}_received_total", batch.size + batch.rejected)
        if batch.rejected:
            self.metrics.inc(f"ragfault_{unit}_rejected_total", batch.rejected)
        if batch.clamped:
            self.metrics.inc("ragfault_future_timestamps_clamped_total", batch.clamped, signal=signal)
        return batch

    def decode_here(
        self,
        body: bytes,
        content_type: str | None,
        encoding: str | None,
        max_bytes: int,
        signal: str = TRACES,
        allowance: int = 1 << 62,
    ) -> ArrowBatch:
        """Decode + build a request body in this thread (no pool), metered against ``allowance``."""
        meter = Meter(allowance, self.max_decoded_bytes, UNITS[signal])
        batch = decode_to_arrow(
            body, content_type, encoding, max_bytes, self.options, signal=signal, meter=meter
        )
        return self.received(batch, signal)

    def decode_in_pool(
        self,
        body: bytes,
        content_type: str | None,
        encoding: str | None,
        max_bytes: int,
        signal: str = TRACES,
        allowance: int = 1 << 62,
    ) -> Future[ArrowBatch]:
        """Decode + build a request body in a worker process (``self.pool`` must be set); the caller
        passes the result through ``received``."""
        assert self.pool is not None
        return self.pool.submit(
            body,
            content_type,
            encoding,
            max_bytes,
            self.options,
            signal=signal,
            allowance=allowance,
            limit=self.max_decoded_bytes,
        )

    def reserve(self, held: list[int], inflated: int) -> None:
        """Hold what a request of ``inflated`` body bytes may build before it is decoded
        (``collector.receivers.inflight.build_reservation``); ``held[0]`` is what it holds so far."""
        self._hold(held, build_reservation(inflated, self.max_decoded_bytes))

    def _hold(self, held: list[int], n: int) -> None:
        if n > held[0]:
            self.budget.take(n - held[0])
            held[0] = n

    def _more(self, held: list[int], exc: NeedsBudget, attempt: int) -> None:
        """After a build asked for more than the request holds: hold what it asked for (the limit
        at the second time), or raise ``IngestBusy`` when that is not free now."""
        self.metrics.inc("ragfault_ingest_rebuilds_total")
        if attempt == 0:
            self._hold(held, exc.needed)
        else:  # the estimate fell short: twice as much, and the limit the third time
            self._hold(
                held, self.max_decoded_bytes if attempt > 1 else min(self.max_decoded_bytes, 2 * exc.needed)
            )

    def decode_blocking(
        self,
        signal: str,
        body: bytes,
        content_type: str | None,
        encoding: str | None,
        max_bytes: int,
        held: list[int],
    ) -> ArrowBatch:
        """Decode + build a request body (in the pool when there is one, waiting for it here) while
        its bytes are held in ``budget``: ``held[0]`` is what the request holds, reserved here for
        the build first (``max_bytes``, what the body may inflate to, is its size for that) and the
        batch's exact bytes once built. A build that needs more than the request holds takes it and
        runs again (``NeedsBudget``); ``IngestBusy`` when it is not free, 413 past
        ``max_decoded_bytes``."""
        self.reserve(held, max_bytes)
        for attempt in range(REBUILDS + 1):
            try:
                if self.pool is None:
                    batch = self.decode_here(body, content_type, encoding, max_bytes, signal, held[0])
                else:
                    fut = self.decode_in_pool(body, content_type, encoding, max_bytes, signal, held[0])
                    batch = self.received(fut.result(self.commit_timeout), signal)
                break
            except NeedsBudget as exc:
                if attempt == REBUILDS:  # the last attempt had max_decoded_bytes: not reached
                    raise PayloadTooLarge(f"the request's rows need {exc.needed} bytes once decoded") from exc
                self._more(held, exc, attempt)
        n = batch_bytes(batch)
        self.budget.swap(held[0], n)
        held[0] = n
        return batch

    def export_body(
        self,
        box: list[bytes],
        content_type: str | None,
        encoding: str | None,
        max_bytes: int,
        signal: str = TRACES,
    ) -> ExportResult:
        """Blocking export of a request body, handed over in ``box`` (emptied here). The body's
        bytes, what it may build, then its batch's bytes are held in ``budget`` until the commit
        (``IngestBusy`` when they do not fit)."""
        held = [len(box[0])]
        self.budget.take(held[0])
        try:
            body = box.pop()
            inflated = max(inflated_size(body, encoding, max_bytes), 1)  # as OTLP/HTTP counts it
            batch = self.decode_blocking(signal, body, content_type, encoding, inflated, held)
            del body
            return self.commit(batch)
        finally:
            self.budget.give(held[0])

    def export_signal_body(
        self, signal: str, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
    ) -> ExportResult:
        """``export_body`` of a logs or metrics request body."""
        return self.export_body([body], content_type, encoding, max_bytes, signal)

    def commit(self, batch: ArrowBatch) -> ExportResult:
        """Queue ``batch`` for the writer and wait for its commit. A request of more log records or
        points than a slice (``SIGNAL_SLICE_ROWS``) is queued a slice at a time, each after the one
        before is committed: it never holds the writer's queue past ``max_queue_spans`` alone,
        whatever else is waiting, nor keeps other clients' requests out while it is written."""
        for part in signal_slices(batch):
            if part.size:
                self.writer.submit(part).result(self.commit_timeout)
        return ExportResult(batch.size, batch.rejected, batch.error_message())

    async def export_batch(self, batch: ArrowBatch) -> ExportResult:
        """Async export of an already flattened batch (HTTP event loop), as ``commit``."""
        for part in signal_slices(batch):
            if part.size:
                fut = self.writer.submit(part)
                await asyncio.wait_for(asyncio.wrap_future(fut), self.commit_timeout)
        return ExportResult(batch.size, batch.rejected, batch.error_message())
