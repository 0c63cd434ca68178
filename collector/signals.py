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

from collector.batch import ArrowBatch, SpanBatch, any_value, attributes
from collector.normalize.genai_events import CONTENT_EVENTS

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


def _batch(
    table_name: str, rows: list[tuple[Any, ...]], schema: pa.Schema, rejected: int, errors: list[str]
) -> ArrowBatch:
    from collector.store.schema import batch_to_arrow

    out = batch_to_arrow(SpanBatch())
    out.rejected, out.errors = rejected, errors
    if table_name == "logs":
        out.logs = _table(rows, schema)
    else:
        out.points = _table(rows, schema)
    return out


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


def flatten_logs(req: ExportLogsServiceRequest, received_at: datetime | None = None) -> ArrowBatch:
    """An ExportLogsServiceRequest as a batch of ``log_records`` rows. Never raises on content."""
    now = received_at or datetime.now(UTC).replace(tzinfo=None)
    rows: list[tuple[Any, ...]] = []
    rejected, errors = 0, list[str]()
    for rl in req.resource_logs:
        res_json, service, res_key = _resource(rl.resource)
        for sl in rl.scope_logs:
            scope = sl.scope
            scope_json, scope_key = _scope(scope)
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
                record_id = _hash(rec.SerializeToString(deterministic=True), res_key, scope_key)
                rows.append((
                    record_id, trace_id, span_id, _ts(t_ns or o_ns), t_ns, o_ns, rec.severity_number,
                    rec.severity_text or None, event, body_json, body_text, attrs_json,
                    rec.dropped_attributes_count, rec.flags, res_json, rl.schema_url or None,
                    scope.name or None, scope.version or None, scope_json, sl.schema_url or None, service, now,
                ))  # fmt: skip
    return _batch("logs", rows, LOG_SCHEMA, rejected, errors)


def content_event_traces(new: list[tuple[Any, ...]]) -> pa.Table:
    """(trace_id, n) of the GenAI content events among new log records, given as (trace_id,
    event_name, ...) rows: they re-open their trace."""
    counts: dict[str, int] = {}
    for row in new:
        if row[0] and row[1] in CONTENT_EVENTS:
            counts[row[0]] = counts.get(row[0], 0) + 1
    return pa.table(
        {"trace_id": pa.array(list(counts), _S), "n": pa.array(list(counts.values()), pa.int64())}
    )


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


def flatten_metrics(req: ExportMetricsServiceRequest, received_at: datetime | None = None) -> ArrowBatch:
    """An ExportMetricsServiceRequest as a batch of ``metric_points`` rows, one a data point."""
    now = received_at or datetime.now(UTC).replace(tzinfo=None)
    rows: list[tuple[Any, ...]] = []
    rejected, errors = 0, list[str]()
    for rm in req.resource_metrics:
        res_json, service, res_key = _resource(rm.resource)
        for sm in rm.scope_metrics:
            scope = sm.scope
            scope_json, scope_key = _scope(scope)
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                if not m.name or kind is None:
                    n = 0 if kind is None else len(getattr(m, kind).data_points)
                    rejected += n
                    if n and len(errors) < 20:
                        errors.append("metric without a name: its data points were rejected")
                    continue
                data = getattr(m, kind)
                temporality = TEMPORALITY.get(getattr(data, "aggregation_temporality", 0))
                monotonic = data.is_monotonic if kind == "sum" else None
                label = "exp_histogram" if kind == "exponential_histogram" else kind
                for p in data.data_points:
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
                        quantiles = _json(
                            [{"quantile": q.quantile, "value": q.value} for q in p.quantile_values]
                        )
                    point_id = _hash(
                        m.name, kind, res_key, scope_key, p.SerializeToString(deterministic=True)
                    )
                    attrs = _json(attributes(p.attributes))
                    s_ns, t_ns = p.start_time_unix_nano, p.time_unix_nano
                    rows.append((
                        point_id, m.name, m.description or None, m.unit or None, label, temporality, monotonic,
                        attrs, _ts(s_ns), _ts(t_ns), s_ns, t_ns, value, count, total, lo, hi, buckets, bounds,
                        exp, quantiles, _exemplars(p) if kind != "summary" else None, p.flags, res_json,
                        rm.schema_url or None, scope.name or None, scope.version or None, scope_json, service, now,
                    ))  # fmt: skip
    return _batch("points", rows, POINT_SCHEMA, rejected, errors)


__all__ = [
    "LOG_COLUMNS",
    "LOG_SCHEMA",
    "POINT_COLUMNS",
    "POINT_SCHEMA",
    "content_event_traces",
    "flatten_logs",
    "flatten_metrics",
]
