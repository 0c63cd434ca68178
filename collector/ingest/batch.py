"""The batches ingest hands from stage to stage: a request's rows as Python tuples (``SpanBatch``,
built by ``collector.ingest.span_rows.flatten``), the same as Arrow tables (``ArrowBatch``, what the
writer commits), and the sink rows are handed to in chunks (``RowSink``).

A batch carries what was rejected with it (counted for ``partial_success``): the rest is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from collector.model import DOCUMENT, SPAN, STEP

# the row tuples ``flatten`` builds, in the order of the columns ingest writes (``collector.model``)
SPAN_COLUMNS = SPAN.ingest_names
STEP_COLUMNS = STEP.ingest_names
DOC_COLUMNS = DOCUMENT.ingest_names


@dataclass
class SpanBatch:
    """Rows ready to become Arrow tables (one tuple a row, in ``*_COLUMNS`` order), plus what was
    rejected. Timestamps are still integers of nanoseconds (0 for none), and a span's attributes
    JSON is UTF-8 bytes (as encoded: Arrow takes them without a decode and an encode);
    ``batch_to_arrow`` converts whole columns at once."""

    spans: list[tuple[Any, ...]] = field(default_factory=list)
    steps: list[tuple[Any, ...]] = field(default_factory=list)
    docs: list[tuple[Any, ...]] = field(default_factory=list)
    rejected: int = 0
    errors: list[str] = field(default_factory=list)
    clamped: int = 0  # spans dated past the grace period (``flatten``'s future_grace_seconds)

    def __len__(self) -> int:
        return len(self.spans)

    def error_message(self) -> str:
        return _error_message(self.errors)


@dataclass
class ArrowBatch:
    """A flattened request as Arrow tables (what the writer commits), plus what was rejected.

    Built from a ``SpanBatch`` by ``collector.store.schema.batch_to_arrow``, in the receiving
    thread or in a decode worker process; the writer merges several with ``merge``.
    """

    spans: pa.Table
    steps: pa.Table
    docs: pa.Table
    rejected: int = 0
    errors: list[str] = field(default_factory=list)
    # one row a trace (``collector.store.schema.trace_summary``); summed up on demand when not given
    traces: pa.Table | None = None
    # log records and metric data points (``collector.receivers.signals``): OTLP logs and metrics requests
    logs: pa.Table | None = None
    points: pa.Table | None = None
    # rows dated past the grace period, stored with the receive time in their TIMESTAMP columns
    clamped: int = 0

    def __len__(self) -> int:
        return int(self.spans.num_rows)

    @property
    def size(self) -> int:
        """Spans, log records and data points: what the writer's queue counts."""
        n = int(self.spans.num_rows)
        if self.logs is not None:
            n += self.logs.num_rows
        if self.points is not None:
            n += self.points.num_rows
        return n

    def trace_table(self) -> pa.Table:
        if self.traces is None:
            from collector.store.schema import trace_summary

            self.traces = trace_summary(self.spans)
        return self.traces

    def error_message(self) -> str:
        return _error_message(self.errors)

    @staticmethod
    def merge(batches: list[ArrowBatch]) -> ArrowBatch:
        if len(batches) == 1:
            return batches[0]
        logs = [b.logs for b in batches if b.logs is not None]
        points = [b.points for b in batches if b.points is not None]
        return ArrowBatch(
            pa.concat_tables([b.spans for b in batches]),
            pa.concat_tables([b.steps for b in batches]),
            pa.concat_tables([b.docs for b in batches]),
            sum(b.rejected for b in batches),
            [e for b in batches for e in b.errors][:20],
            traces=pa.concat_tables([b.trace_table() for b in batches]),
            logs=pa.concat_tables(logs) if logs else None,
            points=pa.concat_tables(points) if points else None,
            clamped=sum(b.clamped for b in batches),
        )


def _error_message(errors: list[str]) -> str:
    if not errors:
        return ""
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(errors[:3]) + more


class RowSink(Protocol):
    """Where ``flatten`` hands its rows in chunks, so that a large request never holds all of its
    rows as Python objects at once, and its size is checked before its rows are built
    (``collector.ingest.build``)."""

    chunk_rows: int  # rows of a chunk at most
    chunk_bytes: int  # planned bytes of a chunk at most

    def plan(self, rows: int, nbytes: int, copied: int) -> None:
        """Before any row is built: the request's rows and the bytes they will hold at least."""

    def flush(self, batch: SpanBatch, planned: int) -> None:
        """Take the rows of ``batch`` (and empty its row lists); ``planned`` of the plan were for them."""
