"""ExportTraceServiceRequest -> columnar rows for ``spans``, ``steps`` and ``step_documents``.

This is the hot path of ingest: one pass over each span's attributes, one JSON encoding per
structured column, the convention reader, and appends to column lists that become Arrow arrays.
A span with an invalid id is rejected (counted for ``partial_success``); the rest of the batch
is kept.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.ingest.batch import RowSink, SpanBatch
from collector.ingest.future_dates import clamp_note, future_limit_ns, ns_since_epoch
from collector.ingest.otlp_values import attributes, json_bytes, json_text
from collector.normalize import DEFAULT_SOURCE_KEYS, normalize_span
from collector.normalize import events as span_payloads
from collector.normalize.genai_events import CONTENT_EVENTS, span_content_events, with_content
from collector.normalize.mapping import Mappings
from collector.normalize.provenance import as_json as provenance_json
from collector.normalize.step import Step
from collector.normalize.values import key_blob

SPAN_KIND = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODE = ("UNSET", "OK", "ERROR")
_ZERO16, _ZERO8 = b"\x00" * 16, b"\x00" * 8


# A span whose attribute keys or event names look like feedback (OpenInference annotations and
# evaluations, GenAI evaluation events): evaluation reads feedback from these spans only
# (``evaluators.service.feedback.read_annotations``), instead of searching every span's attributes.
FEEDBACK_KEYS = ("annotation.", "evaluation.")
FEEDBACK_EVENT = "gen_ai.evaluation.result"


def carries_feedback(attrs: dict[str, Any], events: Any, keys: str | None = None) -> bool:
    """``keys`` is the span's ``key_blob`` when the caller has it."""
    if keys is None:
        keys = "\n".join(attrs)
    if any(k in keys for k in FEEDBACK_KEYS):
        return True
    return any(e.name == FEEDBACK_EVENT for e in events) if len(events) else False


def _reject(batch: SpanBatch, reason: str) -> None:
    batch.rejected += 1
    if len(batch.errors) < 20:
        batch.errors.append(reason)


# The Arrow bytes a span's rows (``spans`` and ``steps``) take at least besides the text they carry:
# ids, times, counts and the offsets of every string column (measured on spans without attributes:
# about 560; the plan counts what a row is sure to take).
SPAN_ROW_BYTES = 400


def flatten(
    req: ExportTraceServiceRequest,
    received_at: datetime | None = None,
    source_keys: tuple[str, ...] = DEFAULT_SOURCE_KEYS,
    *,
    out: RowSink | None = None,
    future_grace_seconds: float | None = None,
    mappings: Mappings = (),
) -> SpanBatch:
    """Flatten an export request into a SpanBatch. Never raises on span content.

    With ``out``, the request's size is planned before any row is built (``RowSink.plan``: every
    span copies its resource's and scope's attributes) and its rows are handed over in chunks; the
    batch returned then holds only what was rejected. With ``future_grace_seconds``, a span dated
    later than that after ``received_at`` keeps its times in ``*_unix_nano`` but is stored with
    ``start_time`` and ``end_time`` at ``received_at``, so no client can date data past retention.
    ``mappings``: the compiled ``[[conventions.mapping]]`` entries (``collector.normalize.mapping``)."""
    batch = SpanBatch()
    now = received_at or datetime.now(UTC).replace(tzinfo=None)
    latest = future_limit_ns(now, future_grace_seconds)
    now_ns = ns_since_epoch(now)
    add_span, add_step, add_doc = batch.spans.append, batch.steps.append, batch.docs.append
    groups = _span_groups(req)
    chunk_rows = chunk_bytes = 0
    if out is not None:
        rows = sum(len(ss.spans) for g in groups for ss, _, _ in g[4])
        planned = sum(len(ss.spans) * (SPAN_ROW_BYTES + copied) for g in groups for ss, _, copied in g[4])
        most = max((copied for g in groups for _, _, copied in g[4]), default=0)
        out.plan(rows, planned, most)
        chunk_rows, chunk_bytes = out.chunk_rows, out.chunk_bytes
    chunk_planned = chunk_size = 0  # the plan's share of the chunk's rows; that and their attributes
    clamped = 0
    for _rs, res_json, service, res_schema, scopes in groups:
        for ss, (scope_json, scope_name, scope_version, scope_schema), copied in scopes:
            row_planned = SPAN_ROW_BYTES + copied
            for span in ss.spans:
                tid, sid, pid = span.trace_id, span.span_id, span.parent_span_id
                if len(tid) != 16 or tid == _ZERO16:
                    _reject(batch, f"span {span.name!r}: trace_id must be 16 non-zero bytes")
                    continue
                if len(sid) != 8 or sid == _ZERO8:
                    _reject(batch, f"span {span.name!r}: span_id must be 8 non-zero bytes")
                    continue
                if pid and len(pid) != 8:
                    _reject(batch, f"span {span.name!r}: parent_span_id must be 8 bytes")
                    continue
                trace_id, span_id = tid.hex(), sid.hex()
                parent = pid.hex() if pid and pid != _ZERO8 else None
                attrs = attributes(span.attributes)
                keys = read_keys = key_blob(attrs)  # searched by the feedback check and the readers
                read = attrs
                extra = None
                if len(span.events):
                    if any(e.name in CONTENT_EVENTS for e in span.events):
                        # GenAI content events on the span: read as if they were its message attributes
                        read = with_content(attrs, span_content_events(span.events))
                        read_keys = key_blob(read)
                    # other events: payloads for the structural layer (``collector.normalize.events``)
                    extra = span_payloads.attributes(span_payloads.span_events(span.events)) or None
                try:
                    if mappings or extra:
                        step = normalize_span(
                            read, source_keys, read_keys, mappings, span.name, scope_name, extra
                        )
                    else:
                        step = normalize_span(read, source_keys, read_keys)
                except Exception as exc:  # a convention reader must never lose a span
                    step = Step()
                    _note_normalize_error(batch, span.name, exc)
                name = span.name
                start_ns, end_ns = span.start_time_unix_nano, span.end_time_unix_nano
                duration = (end_ns - start_ns) / 1e6 if start_ns and end_ns >= start_ns else None
                start_at, end_at = start_ns, end_ns  # what the TIMESTAMP columns hold
                if latest is not None and (start_ns > latest or end_ns > latest):
                    clamped += 1
                    start_at = now_ns if start_ns > latest else start_ns
                    end_at = now_ns if end_ns > latest else end_ns
                st = span.status
                code = st.code
                status = STATUS_CODE[code] if 0 <= code < 3 else str(code)
                kind = SPAN_KIND[span.kind] if 0 <= span.kind < 6 else str(span.kind)
                events = _events(span.events) if len(span.events) else None
                links = _links(span.links) if len(span.links) else None
                step_type, convention = step.step_type, step.convention
                session_id, user_id, case_id, run_id = (
                    step.session_id,
                    step.user_id,
                    step.case_id,
                    step.run_id,
                )
                attrs_json = json_bytes(attrs)
                add_span((
                    trace_id, span_id, parent, span.trace_state or None, span.flags, name, kind,
                    start_at, end_at, start_ns, end_ns, duration, status, st.message or None, attrs_json,
                    events, links, span.dropped_attributes_count, span.dropped_events_count,
                    span.dropped_links_count, res_json, res_schema, scope_name, scope_version, scope_json,
                    scope_schema, service, session_id, user_id, case_id, run_id, step_type, convention, now,
                    carries_feedback(attrs, span.events, keys),
                ))  # fmt: skip
                add_step((
                    trace_id, span_id, parent, step_type, convention, name, service, start_at, end_at,
                    duration, status, step.model, step.input_tokens, step.output_tokens, step.total_tokens,
                    step.query_text, step.input_text, step.output_text, step.tool_name, step.tool_arguments,
                    step.tool_result, step.top_k, case_id, run_id, session_id, user_id, step.user_scope,
                    step.citations, parent is None, now, step.data_source_id,
                    provenance_json(step.provenance), step.run_group, step.baseline_of,
                ))  # fmt: skip
                for d in step.docs:
                    meta = d.metadata
                    add_doc((
                        trace_id, span_id, d.stage, d.position, d.doc_id, d.chunk_id, d.content, d.score,
                        d.metadata_json or (json_text(meta) if meta is not None else None), "span", now,
                    ))  # fmt: skip
                if out is not None:
                    chunk_planned += row_planned
                    chunk_size += row_planned + len(attrs_json)
                    if len(batch.spans) >= chunk_rows or chunk_size >= chunk_bytes:
                        out.flush(batch, chunk_planned)
                        chunk_planned = chunk_size = 0
    if out is not None and batch.spans:
        out.flush(batch, chunk_planned)
    if clamped:
        batch.clamped = clamped
        batch.errors.insert(0, clamp_note(clamped, "spans", future_grace_seconds, "start_time and end_time"))
    return batch


# (resource, attributes JSON, service.name, schema URL, [(scope spans, (scope attributes JSON, name,
# version, schema URL), bytes a span of it copies)]) of each resource of a request
_Group = tuple[Any, str, str | None, str | None, list[tuple[Any, tuple[str | None, ...], int]]]


def _span_groups(req: ExportTraceServiceRequest) -> list[_Group]:
    """Each resource's and scope's columns, encoded once, and the bytes that every span of them copies
    (``spans`` holds the resource and the scope, ``steps`` the service name again)."""
    groups: list[_Group] = []
    for rs in req.resource_spans:
        res_attrs = attributes(rs.resource.attributes)
        res_json = json_text(res_attrs)
        service = res_attrs.get("service.name")
        service = str(service) if service is not None else None
        res_schema = rs.schema_url or None
        res_copied = len(res_json) + 2 * len(service or "") + len(res_schema or "")
        scopes: list[tuple[Any, tuple[str | None, ...], int]] = []
        for ss in rs.scope_spans:
            scope = ss.scope
            cols: tuple[str | None, ...] = (
                json_text(attributes(scope.attributes)) if len(scope.attributes) else None,
                scope.name or None,
                scope.version or None,
                ss.schema_url or None,
            )
            scopes.append((ss, cols, res_copied + sum(len(c) for c in cols if c)))
        groups.append((rs, res_json, service, res_schema, scopes))
    return groups


def _events(events: Any) -> str:
    return json_text(
        [
            {
                "name": e.name,
                "time_unix_nano": e.time_unix_nano,
                "attributes": attributes(e.attributes),
                "dropped_attributes_count": e.dropped_attributes_count,
            }
            for e in events
        ]
    )


def _links(links: Any) -> str:
    return json_text(
        [
            {
                "trace_id": lk.trace_id.hex(),
                "span_id": lk.span_id.hex(),
                "trace_state": lk.trace_state,
                "attributes": attributes(lk.attributes),
                "dropped_attributes_count": lk.dropped_attributes_count,
                "flags": lk.flags,
            }
            for lk in links
        ]
    )


def _note_normalize_error(batch: SpanBatch, name: str, exc: Exception) -> None:
    if len(batch.errors) < 20:
        batch.errors.append(f"span {name!r} kept raw; normalizer error: {type(exc).__name__}")
