"""OTLP logs and metrics export requests -> rows of ``log_records`` and ``metric_points``.

Both are stored losslessly, one row a log record and one a data point, with the resource and scope
of each. Neither carries an id of its own, so a row's id is a hash of everything the exporter sent
for it: a re-sent request (an exporter retrying after a timeout) hashes the same and is ignored.

Log records with a trace id keep it as lowercase hex, so they join ``spans`` by (trace_id, span_id);
the GenAI content events among them fill their span's step when the trace settles
(``collector.content_events``). A record whose trace or span id has the wrong length is rejected
(``partial_success``), the rest of the request is kept.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pyarrow as pa
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from collector.batch import ArrowBatch, SpanBatch, any_value, attributes, clamp_note, future_limit_ns
from collector.inflight import Meter

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

TEMPORALITY = {0: None, 1: "delta", 2: "cumulative"}


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


_EPOCH = datetime(1970, 1, 1)


def _ts(ns: int) -> datetime | None:
    """Nanoseconds since the epoch -> a naive UTC datetime, rounded to the nearest microsecond as span
    times are; 0 is not set, and so is a time past what a timestamp holds (the raw value is kept)."""
    if not ns:
        return None
    try:
        return _EPOCH + timedelta(microseconds=(ns + 500) // 1000)
    except OverflowError:
        return None


def _hash(*parts: object) -> str:
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
# The Arrow bytes a log record's row and a data point's row take at least besides what they carry
# and copy (measured on records and points without attributes: 168 and 228).
LOG_ROW_BYTES = 120
POINT_ROW_BYTES = 160
# Per data point, what is bounded: more buckets or exemplars than this and the point is rejected
# (``partial_success``), since its columns would take many times what it took on the wire.
MAX_BUCKETS = 16_384
MAX_EXEMPLARS = 1_024


class _Rows:
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


def _batch(table_name: str, rows: _Rows, rejected: int, errors: list[str], clamped: int) -> ArrowBatch:
    from collector.store.schema import batch_to_arrow

    out = batch_to_arrow(SpanBatch())
    out.rejected, out.errors, out.clamped = rejected, errors, clamped
    if table_name == "logs":
        out.logs = rows.table()
    else:
        out.points = rows.table()
    return out


def _copied(*values: str | None) -> int:
    """The bytes a row copies of these columns (a request's resource, scope, metric description)."""
    return sum(len(v) for v in values if v)


def _resource(resource: Any) -> tuple[str | None, str | None, bytes]:
    """(attributes as JSON, service.name, serialized form for record ids) of a request's resource."""
    res_attrs = attributes(resource.attributes)
    service = res_attrs.get("service.name")
    return (
        _json(res_attrs),
        (str(service) if service is not None else None),
        resource.SerializeToString(deterministic=True),
    )


def _scope(scope: Any) -> tuple[str | None, bytes]:
    """(attributes as JSON or None, serialized form for record ids) of an instrumentation scope."""
    return (
        _json(attributes(scope.attributes)) if len(scope.attributes) else None,
        scope.SerializeToString(deterministic=True),
    )


# --- logs ------------------------------------------------------------------------------------


def flatten_logs(
    req: ExportLogsServiceRequest,
    received_at: datetime | None = None,
    *,
    meter: Meter | None = None,
    future_grace_seconds: float | None = None,
) -> ArrowBatch:
    """An ExportLogsServiceRequest as a batch of ``log_records`` rows. Never raises on content
    (with ``meter``: ``PayloadTooLarge`` or ``NeedsBudget`` before what does not fit is built).

    With ``future_grace_seconds``, a record dated later than that after ``received_at`` is stored
    with ``time`` at ``received_at`` (``time_unix_nano`` keeps what was sent)."""
    now = received_at or datetime.now(UTC).replace(tzinfo=None)
    latest = future_limit_ns(now, future_grace_seconds)
    out = _Rows(LOG_SCHEMA, meter)
    rejected, errors, clamped = 0, list[str](), 0
    groups = []
    for rl in req.resource_logs:
        res_json, service, res_key = _resource(rl.resource)
        res_copied = _copied(res_json, service, rl.schema_url)
        for sl in rl.scope_logs:
            scope_json, scope_key = _scope(sl.scope)
            copied = res_copied + _copied(scope_json, sl.scope.name, sl.scope.version, sl.schema_url)
            groups.append((rl, res_json, service, res_key, sl, scope_json, scope_key, copied))
    if meter is not None:
        meter.plan(
            sum(len(g[4].log_records) for g in groups),
            sum(len(g[4].log_records) * (LOG_ROW_BYTES + g[7]) for g in groups),
            max((g[7] for g in groups), default=0),
        )
    for rl, res_json, service, res_key, sl, scope_json, scope_key, copied in groups:
        scope = sl.scope
        planned = LOG_ROW_BYTES + copied
        for rec in sl.log_records:
            tid, sid = rec.trace_id, rec.span_id
            if len(tid) not in (0, 16) or len(sid) not in (0, 8):
                rejected += 1
                if len(errors) < 20:
                    errors.append("log record: trace_id must be 16 bytes and span_id 8 (or both empty)")
                continue
            trace_id = tid.hex() if tid.strip(b"\x00") else None
            span_id = sid.hex() if sid.strip(b"\x00") else None
            attrs = attributes(rec.attributes)
            attrs_json = _json(attrs)
            has_body = rec.HasField("body")
            body = any_value(rec.body) if has_body else None
            body_json = _json(body) if has_body else None
            body_text = body if isinstance(body, str) else None
            event = rec.event_name or attrs.get("event.name")
            event = str(event) if event else None
            t_ns, o_ns = rec.time_unix_nano, rec.observed_time_unix_nano
            at = t_ns or o_ns
            time_at: datetime | None = _ts(at)
            if latest is not None and at > latest:
                clamped += 1
                time_at = now
            record_id = _hash(rec.SerializeToString(deterministic=True), res_key, scope_key)
            row = (
                record_id, trace_id, span_id, time_at, t_ns, o_ns, rec.severity_number,
                rec.severity_text or None, event, body_json, body_text, attrs_json,
                rec.dropped_attributes_count, rec.flags, res_json, rl.schema_url or None,
                scope.name or None, scope.version or None, scope_json, sl.schema_url or None, service, now,
            )  # fmt: skip
            out.add(row, planned, planned + len(attrs_json) + 2 * len(body_json or ""))
    if clamped:
        errors.insert(0, clamp_note(clamped, "log records", future_grace_seconds, "time"))
    return _batch("logs", out, rejected, errors, clamped)


# --- metrics ---------------------------------------------------------------------------------


def _number(p: Any) -> float | None:
    kind = p.WhichOneof("value")
    if kind == "as_double":
        return float(p.as_double)
    if kind == "as_int":
        return float(p.as_int)
    return None


def _exemplars(p: Any) -> str | None:
    if not len(p.exemplars):
        return None
    return _json([
        {
            "time_unix_nano": e.time_unix_nano,
            "value": _number(e),
            "trace_id": e.trace_id.hex() or None,
            "span_id": e.span_id.hex() or None,
            "filtered_attributes": attributes(e.filtered_attributes),
        }
        for e in p.exemplars
    ])  # fmt: skip


def _opt(p: Any, name: str) -> float | None:
    return float(getattr(p, name)) if p.HasField(name) else None


def flatten_metrics(
    req: ExportMetricsServiceRequest,
    received_at: datetime | None = None,
    *,
    meter: Meter | None = None,
    future_grace_seconds: float | None = None,
) -> ArrowBatch:
    """An ExportMetricsServiceRequest as a batch of ``metric_points`` rows, one a data point (with
    ``meter`` and ``future_grace_seconds`` as ``flatten_logs``: ``start_time`` and ``time`` past the
    grace period are stored as ``received_at``). A point with more than ``MAX_BUCKETS`` buckets or
    ``MAX_EXEMPLARS`` exemplars is rejected."""
    now = received_at or datetime.now(UTC).replace(tzinfo=None)
    latest = future_limit_ns(now, future_grace_seconds)
    out = _Rows(POINT_SCHEMA, meter)
    rejected, errors, clamped = 0, list[str](), 0
    groups = []
    for rm in req.resource_metrics:
        res_json, service, res_key = _resource(rm.resource)
        res_copied = _copied(res_json, service, rm.schema_url)
        for sm in rm.scope_metrics:
            scope_json, scope_key = _scope(sm.scope)
            scope_copied = _copied(scope_json, sm.scope.name, sm.scope.version)
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                n = 0 if kind is None else len(getattr(m, kind).data_points)
                copied = res_copied + scope_copied + _copied(m.name, m.description, m.unit)
                groups.append((rm, res_json, service, res_key, sm, scope_json, scope_key, m, kind, n, copied))
    if meter is not None:
        meter.plan(
            sum(g[9] for g in groups),
            sum(g[9] * (POINT_ROW_BYTES + g[10]) for g in groups),
            max((g[10] for g in groups), default=0),
        )
    for rm, res_json, service, res_key, sm, scope_json, scope_key, m, kind, n, copied in groups:
        scope = sm.scope
        if not m.name or kind is None:
            rejected += n
            if n and len(errors) < 20:
                errors.append("metric without a name: its data points were rejected")
            continue
        data = getattr(m, kind)
        temporality = TEMPORALITY.get(getattr(data, "aggregation_temporality", 0))
        monotonic = data.is_monotonic if kind == "sum" else None
        label = "exp_histogram" if kind == "exponential_histogram" else kind
        planned = POINT_ROW_BYTES + copied
        for p in data.data_points:
            extra = _point_extent(p, kind)
            if extra is None:
                rejected += 1
                if len(errors) < 20:
                    errors.append(
                        f"metric {m.name[:80]!r}: a data point with more than {MAX_BUCKETS} buckets or "
                        f"{MAX_EXEMPLARS} exemplars was rejected"
                    )
                continue
            value = count = total = lo = hi = None
            buckets = bounds = exp = quantiles = None
            if kind in ("gauge", "sum"):
                value = _number(p)
            elif kind == "histogram":
                count, total, lo, hi = p.count, _opt(p, "sum"), _opt(p, "min"), _opt(p, "max")
                buckets, bounds = list(p.bucket_counts), list(p.explicit_bounds)
            elif kind == "exponential_histogram":
                count, total, lo, hi = p.count, _opt(p, "sum"), _opt(p, "min"), _opt(p, "max")
                exp = _json({
                    "scale": p.scale, "zero_count": p.zero_count, "zero_threshold": p.zero_threshold,
                    "positive": {"offset": p.positive.offset, "bucket_counts": list(p.positive.bucket_counts)},
                    "negative": {"offset": p.negative.offset, "bucket_counts": list(p.negative.bucket_counts)},
                })  # fmt: skip
            else:  # summary
                count, total = p.count, p.sum
                quantiles = _json([{"quantile": q.quantile, "value": q.value} for q in p.quantile_values])
            point_id = _hash(m.name, kind, res_key, scope_key, p.SerializeToString(deterministic=True))
            attrs = _json(attributes(p.attributes))
            s_ns, t_ns = p.start_time_unix_nano, p.time_unix_nano
            start_at, time_at = _ts(s_ns), _ts(t_ns)
            if latest is not None and (s_ns > latest or t_ns > latest):
                clamped += 1
                start_at = now if s_ns > latest else start_at
                time_at = now if t_ns > latest else time_at
            exemplars = _exemplars(p) if kind != "summary" else None
            row = (
                point_id, m.name, m.description or None, m.unit or None, label, temporality, monotonic,
                attrs, start_at, time_at, s_ns, t_ns, value, count, total, lo, hi, buckets, bounds,
                exp, quantiles, exemplars, p.flags, res_json,
                rm.schema_url or None, scope.name or None, scope.version or None, scope_json, service, now,
            )  # fmt: skip
            out.add(row, planned, planned + extra + len(attrs) + len(exemplars or "") + len(exp or ""))
    if clamped:
        errors.insert(0, clamp_note(clamped, "data points", future_grace_seconds, "start_time and time"))
    return _batch("points", out, rejected, errors, clamped)


def _point_extent(p: Any, kind: str) -> int | None:
    """The bytes a data point's buckets take in its row, or None when it has more buckets or
    exemplars than a point may (counted on the message, before any list is built)."""
    exemplars = len(p.exemplars) if kind != "summary" else 0
    if kind == "histogram":
        n = len(p.bucket_counts) + len(p.explicit_bounds)
    elif kind == "exponential_histogram":
        n = len(p.positive.bucket_counts) + len(p.negative.bucket_counts)
    elif kind == "summary":
        n = len(p.quantile_values)
    else:
        n = 0
    if n > 2 * MAX_BUCKETS or exemplars > MAX_EXEMPLARS:
        return None
    return 8 * n


__all__ = [
    "LOG_COLUMNS",
    "LOG_SCHEMA",
    "POINT_COLUMNS",
    "POINT_SCHEMA",
    "flatten_logs",
    "flatten_metrics",
]
