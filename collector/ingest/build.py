"""Decoded export requests -> Arrow batches, built in chunks under a ``Meter``.

What both the decode workers and the server's own threads run: the request is parsed, what its
rows will hold is planned before any row is built (``collector.receivers.inflight.Meter``: the fixed columns
of every row and every copy of what the request sent once), and its rows become Arrow in chunks of
at most ``CHUNK_ROWS`` rows or ``CHUNK_BYTES`` bytes, so that a request of a million log records
never holds a million rows of Python objects, and a build that outgrows its allowance stops after
one chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from collector.ingest.batch import ArrowBatch, SpanBatch
from collector.ingest.span_rows import flatten
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.normalize.mapping import Mappings
from collector.receivers.inflight import Meter, batch_bytes
from collector.receivers.log_records import flatten_logs
from collector.receivers.metric_points import flatten_metrics

TRACES, LOGS, METRICS = "traces", "logs", "metrics"
UNITS = {TRACES: "spans", LOGS: "log records", METRICS: "data points"}  # what a row of each is

# A chunk of spans: large enough that an exporter's ordinary request (512 to a few thousand spans)
# is one chunk, as before chunks existed; small enough that its Python rows stay a few MB.
CHUNK_ROWS = 4096
CHUNK_BYTES = 8 << 20


@dataclass(frozen=True)
class BuildOptions:
    """How a server builds every request's rows, the same for all of them: which attribute keys
    name a document's source, how far in the future a time may lie before it is clamped to the
    receive time (None: never), and the ``[[conventions.mapping]]`` rules. Plain picklable data,
    sent whole with each request to a decode worker."""

    source_keys: tuple[str, ...] = DEFAULT_SOURCE_KEYS
    future_grace_seconds: float | None = None
    mappings: Mappings = ()


DEFAULT_OPTIONS = BuildOptions()


class SpanChunks:
    """``collector.ingest.batch.RowSink`` that converts each chunk of spans to Arrow and meters it."""

    chunk_rows = CHUNK_ROWS
    chunk_bytes = CHUNK_BYTES

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.parts: list[ArrowBatch] = []

    def plan(self, rows: int, nbytes: int, copied: int) -> None:
        self.meter.plan(rows, nbytes, copied)

    def flush(self, batch: SpanBatch, planned: int) -> None:
        from collector.store.schema import batch_to_arrow

        n = len(batch.spans)
        part = batch_to_arrow(SpanBatch(batch.spans, batch.steps, batch.docs))
        batch.spans.clear()
        batch.steps.clear()
        batch.docs.clear()
        self.parts.append(part)
        self.meter.chunk(n, batch_bytes(part), planned)

    def result(self, batch: SpanBatch) -> ArrowBatch:
        """The chunks as one batch, with what ``batch`` rejected and clamped."""
        from collector.store.schema import batch_to_arrow

        out = ArrowBatch.merge(self.parts) if self.parts else batch_to_arrow(SpanBatch())
        out.rejected, out.errors, out.clamped = batch.rejected, batch.errors, batch.clamped
        return out


def build(
    signal: str,
    req: object,
    meter: Meter,
    options: BuildOptions = DEFAULT_OPTIONS,
    received_at: datetime | None = None,
) -> ArrowBatch:
    """A parsed export request of ``signal`` as an Arrow batch, metered (``PayloadTooLarge`` /
    ``NeedsBudget`` before what does not fit is built)."""
    grace = options.future_grace_seconds
    if signal == TRACES:
        sink = SpanChunks(meter)
        batch = flatten(
            req,  # type: ignore[arg-type]
            received_at,
            options.source_keys,
            out=sink,
            future_grace_seconds=grace,
            mappings=options.mappings,
        )
        return sink.result(batch)
    if signal == LOGS:
        return flatten_logs(req, received_at, meter=meter, future_grace_seconds=grace)  # type: ignore[arg-type]
    return flatten_metrics(req, received_at, meter=meter, future_grace_seconds=grace)  # type: ignore[arg-type]


def decode_and_build(
    signal: str,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    max_bytes: int,
    meter: Meter,
    options: BuildOptions = DEFAULT_OPTIONS,
    received_at: datetime | None = None,
) -> ArrowBatch:
    """Body bytes of an export request -> its Arrow batch. Raises PermanentError subclasses (bad
    payload, 413) and ``NeedsBudget``."""
    from collector.receivers.payload import decode, decode_signal

    if signal == TRACES:
        req: object = decode(body, content_type, content_encoding, max_bytes)[0]
    else:
        req = decode_signal(signal, body, content_type, content_encoding, max_bytes)
    meter.body = meter.body or len(body)
    return build(signal, req, meter, options, received_at)
