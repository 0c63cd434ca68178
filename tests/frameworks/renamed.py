"""The convention-blind twin of a framework run (issue 40): the spans a real framework and its real
instrumentor produced, read back from the server, sent again to a second server with every attribute
key outside OpenTelemetry's own namespaces renamed into a vendor namespace no reader knows
(``input.value`` → ``acme.input.value``, ``traceloop.entity.output`` → ``acme.traceloop.entity.output``,
``ai.response.text`` → ``acme.ai.response.text``). Keys keep their words: a vendor's key says what
it holds as well as a known one does, but no convention reader recognises it, so only the
structural layer can read the twin.

The rule a twin must keep: each question's root cause is the original's where the payloads allow the
structural layer to read it, and otherwise ``insufficient_trace`` — never ``ok`` and never another
layer. The gold case is named on the twin's root span (``ragfault.case_id``, as several apps do), so
that the question joins its case whether or not its text could be found.

``RAGFAULT_TEST_TWIN_REPORT``: a file each twin's outcome is appended to as a JSON line (the
framework, question, original and twin root cause), for measuring how much the structural layer
reads alone.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from collector.normalize.shape import INFRASTRUCTURE
from tests.collector.otlp_build import kv
from tests.conftest import Server

# OpenTelemetry's own namespaces (its GenAI conventions and the infrastructure ones) and the
# project's: kept as they are
KEPT = ("gen_ai.", "ragfault.", *INFRASTRUCTURE)
VENDOR = "acme."
SPANS = (
    "SELECT trace_id, span_id, parent_span_id, name, kind, start_time_unix_nano, end_time_unix_nano, "
    "status_code, status_message, attributes, events, service_name, scope_name, scope_version "
    "FROM spans WHERE trace_id = $t ORDER BY start_time_unix_nano, span_id"
)  # a trace's spans as stored, for ``request_of``
_STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}
_KINDS = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}


def renamed(key: str) -> str:
    return key if key.startswith(KEPT) else VENDOR + key


def _attrs(value: Any) -> dict[str, Any]:
    parsed = json.loads(value) if isinstance(value, str) else value
    return parsed if isinstance(parsed, dict) else {}


def _span(row: dict[str, Any], case_id: str | None) -> Span:
    attrs = {renamed(k): v for k, v in _attrs(row["attributes"]).items() if v is not None}
    if case_id is not None and not row["parent_span_id"]:
        attrs["ragfault.case_id"] = case_id
    kind = row["kind"]
    kind_value = (
        _KINDS.get(str(kind).upper().removeprefix("SPAN_KIND_"), 1) if not isinstance(kind, int) else kind
    )
    status = _STATUS.get(str(row["status_code"]).upper().removeprefix("STATUS_CODE_"), 0)
    span = Span(
        trace_id=bytes.fromhex(row["trace_id"]),
        span_id=bytes.fromhex(row["span_id"]),
        parent_span_id=bytes.fromhex(row["parent_span_id"]) if row["parent_span_id"] else b"",
        name=row["name"] or "",
        kind=Span.SpanKind.ValueType(kind_value),
        start_time_unix_nano=int(row["start_time_unix_nano"]),
        end_time_unix_nano=int(row["end_time_unix_nano"]),
        attributes=[kv(k, v) for k, v in attrs.items()],
        status=Status(code=Status.StatusCode.ValueType(status), message=row["status_message"] or ""),
    )
    events = json.loads(row["events"]) if isinstance(row["events"], str) else row["events"]
    for event in events or []:
        if not isinstance(event, dict):
            continue
        span.events.add(
            name=str(event.get("name") or ""),
            time_unix_nano=int(event.get("time_unix_nano") or event.get("timestamp") or 0),
            attributes=[
                kv(renamed(k), v) for k, v in _attrs(event.get("attributes")).items() if v is not None
            ],
        )
    return span


def request_of(rows: list[dict[str, Any]], case_id: str | None) -> ExportTraceServiceRequest:
    """One export request of the renamed spans, grouped by service and scope as they were sent."""
    req = ExportTraceServiceRequest()
    groups: dict[tuple[str, str, str], list[Span]] = {}
    for row in rows:
        key = (row["service_name"] or "", row["scope_name"] or "", row["scope_version"] or "")
        groups.setdefault(key, []).append(_span(row, case_id))
    for (service, scope, version), spans in groups.items():
        rs = req.resource_spans.add()
        rs.resource.attributes.append(kv("service.name", service))
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = scope, version
        ss.spans.extend(spans)
    return req


def send_twin(twin: Server, rows: list[dict[str, Any]], case_id: str | None) -> None:
    body = request_of(rows, case_id).SerializeToString()
    r = httpx.post(
        f"{twin.url}/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"}, timeout=30
    )
    assert r.status_code == 200, r.text


def report(line: dict[str, Any]) -> None:
    path = os.environ.get("RAGFAULT_TEST_TWIN_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
