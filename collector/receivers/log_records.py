"""OTLP logs export requests -> rows of ``log_records`` (columns and shared row building:
``collector.receivers.signals``).

Log records with a trace id keep it as lowercase hex, so they join ``spans`` by (trace_id, span_id);
the GenAI content events among them fill their span's step when the trace settles
(``collector.settling.content_events``). A record whose trace or span id has the wrong length is rejected
(``partial_success``), the rest of the request is kept.
"""

from __future__ import annotations

from datetime import UTC, datetime

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from collector.ingest.batch import ArrowBatch
from collector.ingest.future_dates import clamp_note, future_limit_ns
from collector.ingest.otlp_values import any_value, attributes
from collector.receivers.inflight import Meter
from collector.receivers.signals import (
    LOG_SCHEMA,
    Rows,
    copied_bytes,
    resource_columns,
    row_id,
    row_json,
    scope_columns,
    signal_batch,
    timestamp,
)

# The Arrow bytes a log record's row takes at least besides what it carries and copies (measured on
# records without attributes: 168).
LOG_ROW_BYTES = 120


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
    out = Rows(LOG_SCHEMA, meter)
    rejected, errors, clamped = 0, list[str](), 0
    groups = []
    for rl in req.resource_logs:
        res_json, service, res_key = resource_columns(rl.resource)
        res_copied = copied_bytes(res_json, service, rl.schema_url)
        for sl in rl.scope_logs:
            scope_json, scope_key = scope_columns(sl.scope)
            copied = res_copied + copied_bytes(scope_json, sl.scope.name, sl.scope.version, sl.schema_url)
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
            attrs_json = row_json(attrs)
            has_body = rec.HasField("body")
            body = any_value(rec.body) if has_body else None
            body_json = row_json(body) if has_body else None
            body_text = body if isinstance(body, str) else None
            event = rec.event_name or attrs.get("event.name")
            event = str(event) if event else None
            t_ns, o_ns = rec.time_unix_nano, rec.observed_time_unix_nano
            at = t_ns or o_ns
            time_at: datetime | None = timestamp(at)
            if latest is not None and at > latest:
                clamped += 1
                time_at = now
            record_id = row_id(rec.SerializeToString(deterministic=True), res_key, scope_key)
            row = (
                record_id, trace_id, span_id, time_at, t_ns, o_ns, rec.severity_number,
                rec.severity_text or None, event, body_json, body_text, attrs_json,
                rec.dropped_attributes_count, rec.flags, res_json, rl.schema_url or None,
                scope.name or None, scope.version or None, scope_json, sl.schema_url or None, service, now,
            )  # fmt: skip
            out.add(row, planned, planned + len(attrs_json) + 2 * len(body_json or ""))
    if clamped:
        errors.insert(0, clamp_note(clamped, "log records", future_grace_seconds, "time"))
    return signal_batch("logs", out, rejected, errors, clamped)
