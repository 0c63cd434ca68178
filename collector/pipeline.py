"""The one export path both receivers call: decode + flatten, queue for the writer, wait for the commit.

Traces, logs and metrics all go this way: the same writer queue (bounded, 503 when full), the same
group commit, the same acknowledgement after COMMIT.

Decoding and flattening run in a pool of worker processes when ``decode_workers`` > 0 (the Python
work of ingest then uses more than one core), else in the calling thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from collector.batch import ArrowBatch
from collector.decode_pool import DecodePool, decode_to_arrow
from collector.inflight import ByteBudget, batch_bytes
from collector.metrics import Metrics
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store.writer import Writer

log = logging.getLogger("ragfault.pipeline")


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
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        # the ingest bytes held at once, both receivers together (``collector.inflight``)
        self.budget = ByteBudget(max_inflight_bytes, lambda n: metrics.set("ragfault_inflight_bytes", n))
        self.source_keys = source_keys
        self.commit_timeout = commit_timeout
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

    def received(self, batch: ArrowBatch) -> ArrowBatch:
        """Count a decoded request in the metrics; returns it."""
        self.metrics.inc("ragfault_spans_received_total", len(batch) + batch.rejected)
        if batch.rejected:
            self.metrics.inc("ragfault_spans_rejected_total", batch.rejected)
        return batch

    def decode_here(
        self, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
    ) -> ArrowBatch:
        """Decode + flatten a request body in this thread (no pool)."""
        return self.received(decode_to_arrow(body, content_type, encoding, max_bytes, self.source_keys))

    def decode_in_pool(
        self, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
    ) -> Future[ArrowBatch]:
        """Decode + flatten a request body in a worker process (``self.pool`` must be set); the
        caller passes the result through ``received``."""
        assert self.pool is not None
        return self.pool.submit(body, content_type, encoding, max_bytes, self.source_keys)

    def decode_signal_here(
        self, signal: str, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
    ) -> ArrowBatch:
        """Decode + flatten a logs or metrics request body in this thread (``collector.signals``).

        These requests are small next to trace exports, so they are not handed to the decode pool."""
        from collector.receivers.payload import LOGS, decode_signal
        from collector.signals import flatten_logs, flatten_metrics

        req = decode_signal(signal, body, content_type, encoding, max_bytes)
        batch = flatten_logs(req) if signal == LOGS else flatten_metrics(req)
        unit = "log_records" if signal == LOGS else "metric_points"
        self.metrics.inc(f"ragfault_{unit}_received_total", batch.size + batch.rejected)
        if batch.rejected:
            self.metrics.inc(f"ragfault_{unit}_rejected_total", batch.rejected)
        return batch

    def export_signal_body(
        self, signal: str, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
    ) -> ExportResult:
        """Blocking export of a logs or metrics request body (gRPC worker threads); its bytes are held
        in ``budget`` until the commit, as a trace body's are."""
        held = len(body)
        self.budget.take(held)
        try:
            return self.commit(self.decode_signal_here(signal, body, content_type, encoding, max_bytes))
        finally:
            self.budget.give(held)

    def export_body(
        self, box: list[bytes], content_type: str | None, encoding: str | None, max_bytes: int
    ) -> ExportResult:
        """Blocking export of a request body, handed over in ``box`` (emptied here, so that the
        decoder holds the only reference: with a pool the body is freed once a worker has it, not
        when the commit is done). The body's bytes, then its batch's, are held in ``budget`` until
        the commit (``IngestBusy`` when they do not fit)."""
        held = len(box[0])
        self.budget.take(held)
        try:
            if self.pool is None:
                batch = self.decode_here(box.pop(), content_type, encoding, max_bytes)
            else:
                fut = self.decode_in_pool(box.pop(), content_type, encoding, max_bytes)
                batch = self.received(fut.result(self.commit_timeout))
            n = batch_bytes(batch)
            self.budget.swap(held, n)
            held = n
            return self.commit(batch)
        finally:
            self.budget.give(held)

    def commit(self, batch: ArrowBatch) -> ExportResult:
        if batch.size:
            self.writer.submit(batch).result(self.commit_timeout)
        return ExportResult(batch.size, batch.rejected, batch.error_message())

    async def export_batch(self, batch: ArrowBatch) -> ExportResult:
        """Async export of an already flattened batch (HTTP event loop)."""
        if batch.size:
            fut = self.writer.submit(batch)
            await asyncio.wait_for(asyncio.wrap_future(fut), self.commit_timeout)
        return ExportResult(batch.size, batch.rejected, batch.error_message())
