"""The tables of OTLP logs and metrics, ``log_records`` and ``metric_points``: their columns and
Arrow schemas, and what building either's rows shares (``collector.receivers.log_records``,
``collector.receivers.metric_points``).

Both are stored losslessly, one row a log record and one a data point, with the resource and scope
of each. Neither carries an id of its own, so a row's id is a hash of everything the exporter sent
for it (``row_id``): a re-sent request (an exporter retrying after a timeout) hashes the same and is
ignored. Rows become Arrow a chunk at a time (``Rows``), metered as they are built.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import orjson
import pyarrow as pa

from collector.ingest.batch import ArrowBatch, SpanBatch
from collector.ingest.otlp_values import attributes
from collector.receivers.inflight import Meter

LOG_COLUMNS = (
    "record_id", "trace_id", "span_id", "time", "time_unix_nano", "observed_time_unix_nano",
    "severity_number", "severity_text", "event_name", "body", "body_text", "attributes",
    "dropped_attributes_count", "flags", "resource_attributes", "resource_schema_url", "scope_name",
    "scope_version", "scope_attributes", "scope_schema_url", "service_name", "received_at",
)  # fmt: skip

POINT_COLUMNS = (
    "point_id", "name", "description", "unit", "kind", "temporality", "is_monotonic", "attributes",
    "start_time", "time", "start_time_unix_nano", "time_unix_nano", "value", "count", "sum", "min", "max",
    "bucket_counts", "explicit_bounds", "exp_histogram", "quantiles", "exemplars", "flags",
    "resource_attributes", "resource_schema_url", "scope_name", "scope_version", "scope_attributes",
    "service_name", "received_at",
)  # fmt: skip

_TS = pa.timestamp("us")
_S = pa.string()
_LOG_TYPES: dict[str, pa.DataType] = {
    "time": _TS,
    "time_unix_nano": pa.uint64(),
    "observed_time_unix_nano": pa.uint64(),
    "severity_number": pa.int32(),
    "dropped_attributes_count": pa.uint32(),
    "flags": pa.uint32(),
    "received_at": _TS,
}
_POINT_TYPES: dict[str, pa.DataType] = {
    "is_monotonic": pa.bool_(),
    "start_time": _TS,
    "time": _TS,
    "start_time_unix_nano": pa.uint64(),
    "time_unix_nano": pa.uint64(),
    "value": pa.float64(),
    "count": pa.uint64(),
    "sum": pa.float64(),
    "min": pa.float64(),
    "max": pa.float64(),
    "bucket_counts": pa.list_(pa.uint64()),
    "explicit_bounds": pa.list_(pa.float64()),
    "flags": pa.uint32(),
    "received_at": _TS,
}
LOG_SCHEMA = pa.schema([(c, _LOG_TYPES.get(c, _S)) for c in LOG_COLUMNS])
POINT_SCHEMA = pa.schema([(c, _POINT_TYPES.get(c, _S)) for c in POINT_COLUMNS])


def row_json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


_EPOCH = datetime(1970, 1, 1)


def timestamp(ns: int) -> datetime | None:
    """Nanoseconds since the epoch -> a naive UTC datetime, rounded to the nearest microsecond as span
    times are; 0 is not set, and so is a time past what a timestamp holds (the raw value is kept)."""
    if not ns:
        return None
    try:
        return _EPOCH + timedelta(microseconds=(ns + 500) // 1000)
    except OverflowError:
        return None


def row_id(*parts: object) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(b"\x1f")
        h.update(p if isinstance(p, bytes) else str(p).encode())
    return h.hexdigest()


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    if not rows:
        return schema.empty_table()
    columns = list(zip(*rows, strict=True))
    return pa.table(
        [pa.array(list(v), type=f.type) for v, f in zip(columns, schema, strict=True)], schema=schema
    )


# Rows of a chunk at most, and the bytes they are planned to take: a request of a million records
# holds at most this many as Python objects at once.
CHUNK_ROWS = 16_384
CHUNK_BYTES = 8 << 20


class Rows:
    """The rows of one table, converted to Arrow a chunk at a time and metered."""

    def __init__(self, schema: pa.Schema, meter: Meter | None) -> None:
        self.schema, self.meter = schema, meter
        self.rows: list[tuple[Any, ...]] = []
        self.parts: list[pa.Table] = []
        self.planned = self.size = 0

    def add(self, row: tuple[Any, ...], planned: int, size: int) -> None:
        """One row; ``planned`` of the plan is for it, and it holds about ``size`` bytes."""
        self.rows.append(row)
        self.planned += planned
        self.size += size
        if len(self.rows) >= CHUNK_ROWS or self.size >= CHUNK_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        table = _table(self.rows, self.schema)
        n, planned = len(self.rows), self.planned
        self.rows, self.planned, self.size = [], 0, 0
        self.parts.append(table)
        if self.meter is not None:
            self.meter.chunk(n, int(table.nbytes), planned)

    def table(self) -> pa.Table:
        self.flush()
        if not self.parts:
            return self.schema.empty_table()
        return self.parts[0] if len(self.parts) == 1 else pa.concat_tables(self.parts)


def signal_batch(table_name: str, rows: Rows, rejected: int, errors: list[str], clamped: int) -> ArrowBatch:
    from collector.store.schema import batch_to_arrow

    out = batch_to_arrow(SpanBatch())
    out.rejected, out.errors, out.clamped = rejected, errors, clamped
    if table_name == "logs":
        out.logs = rows.table()
    else:
        out.points = rows.table()
    return out


def copied_bytes(*values: str | None) -> int:
    """The bytes a row copies of these columns (a request's resource, scope, metric description)."""
    return sum(len(v) for v in values if v)


def resource_columns(resource: Any) -> tuple[str | None, str | None, bytes]:
    """(attributes as JSON, service.name, serialized form for record ids) of a request's resource."""
    res_attrs = attributes(resource.attributes)
    service = res_attrs.get("service.name")
    return (
        row_json(res_attrs),
        (str(service) if service is not None else None),
        resource.SerializeToString(deterministic=True),
    )


def scope_columns(scope: Any) -> tuple[str | None, bytes]:
    """(attributes as JSON or None, serialized form for record ids) of an instrumentation scope."""
    return (
        row_json(attributes(scope.attributes)) if len(scope.attributes) else None,
        scope.SerializeToString(deterministic=True),
    )
