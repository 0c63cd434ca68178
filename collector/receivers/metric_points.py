"""OTLP metrics export requests -> rows of ``metric_points``, one a data point of any kind (gauge,
sum, histogram, exponential histogram, summary); columns and shared row building:
``collector.receivers.signals``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from collector.ingest.batch import ArrowBatch
from collector.ingest.future_dates import clamp_note, future_limit_ns
from collector.ingest.otlp_values import attributes
from collector.receivers.inflight import Meter
from collector.receivers.signals import (
    POINT_SCHEMA,
    Rows,
    copied_bytes,
    resource_columns,
    row_id,
    row_json,
    scope_columns,
    signal_batch,
    timestamp,
)

TEMPORALITY = {0: None, 1: "delta", 2: "cumulative"}
# The Arrow bytes a data point's row takes at least besides what it carries and copies (measured on
# points without attributes: 228).
POINT_ROW_BYTES = 160
# Per data point, what is bounded: more buckets or exemplars than this and the point is rejected
# (``partial_success``), since its columns would take many times what it took on the wire.
MAX_BUCKETS = 16_384
MAX_EXEMPLARS = 1_024


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
    return row_json([
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
    out = Rows(POINT_SCHEMA, meter)
    rejected, errors, clamped = 0, list[str](), 0
    groups = []
    for rm in req.resource_metrics:
        res_json, service, res_key = resource_columns(rm.resource)
        res_copied = copied_bytes(res_json, service, rm.schema_url)
        for sm in rm.scope_metrics:
            scope_json, scope_key = scope_columns(sm.scope)
            scope_copied = copied_bytes(scope_json, sm.scope.name, sm.scope.version)
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                n = 0 if kind is None else len(getattr(m, kind).data_points)
                copied = res_copied + scope_copied + copied_bytes(m.name, m.description, m.unit)
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
                exp = row_json({
                    "scale": p.scale, "zero_count": p.zero_count, "zero_threshold": p.zero_threshold,
                    "positive": {"offset": p.positive.offset, "bucket_counts": list(p.positive.bucket_counts)},
                    "negative": {"offset": p.negative.offset, "bucket_counts": list(p.negative.bucket_counts)},
                })  # fmt: skip
            else:  # summary
                count, total = p.count, p.sum
                quantiles = row_json([{"quantile": q.quantile, "value": q.value} for q in p.quantile_values])
            point_id = row_id(m.name, kind, res_key, scope_key, p.SerializeToString(deterministic=True))
            attrs = row_json(attributes(p.attributes))
            s_ns, t_ns = p.start_time_unix_nano, p.time_unix_nano
            start_at, time_at = timestamp(s_ns), timestamp(t_ns)
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
    return signal_batch("points", out, rejected, errors, clamped)


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
