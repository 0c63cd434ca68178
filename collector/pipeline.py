"""The one export path both receivers call: flatten, queue for the writer, wait for the commit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.batch import SpanBatch, flatten
from collector.metrics import Metrics
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store.writer import Writer


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
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        self.source_keys = source_keys
        self.commit_timeout = commit_timeout

    def prepare(self, req: ExportTraceServiceRequest) -> SpanBatch:
        batch = flatten(req, source_keys=self.source_keys)
        self.metrics.inc("ragfault_spans_received_total", len(batch) + batch.rejected)
        if batch.rejected:
            self.metrics.inc("ragfault_spans_rejected_total", batch.rejected)
        return batch

    def export(self, req: ExportTraceServiceRequest) -> ExportResult:
        """Blocking export (gRPC worker threads)."""
        batch = self.prepare(req)
        if len(batch):
            self.writer.submit(batch).result(self.commit_timeout)
        return ExportResult(len(batch), batch.rejected, batch.error_message())

    async def export_batch(self, batch: SpanBatch) -> ExportResult:
        """Async export of an already flattened batch (HTTP event loop)."""
        if len(batch):
            fut = self.writer.submit(batch)
            await asyncio.wait_for(asyncio.wrap_future(fut), self.commit_timeout)
        return ExportResult(len(batch), batch.rejected, batch.error_message())
