"""Hand-built OTLP export requests for the collector tests (protobuf messages and OTLP/JSON dicts)."""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

_counter = itertools.count(1)


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return next(_counter).to_bytes(4, "big") + os.urandom(4)


def kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, list):
        av = AnyValue()
        av.array_value.values.extend(any_value(v) for v in value)
        return av
    if isinstance(value, dict):
        av = AnyValue()
        av.kvlist_value.values.extend(kv(k, v) for k, v in value.items())
        return av
    return AnyValue(string_value=str(value))


def span(
    trace_id: bytes,
    span_id: bytes | None = None,
    parent: bytes = b"",
    name: str = "op",
    attrs: dict[str, Any] | None = None,
) -> Span:
    now = time.time_ns()
    return Span(
        trace_id=trace_id,
        span_id=span_id if span_id is not None else new_span_id(),
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=now - 1_000_000,
        end_time_unix_nano=now,
        attributes=[kv(k, v) for k, v in (attrs or {}).items()],
    )


def rag_spans(tid: bytes) -> list[Span]:
    """A small OpenInference RAG trace: a CHAIN root answering from one retrieved document."""
    root = new_span_id()
    docs = {
        f"retrieval.documents.0.document.{k}": v
        for k, v in (("id", "kb-1"), ("content", "Refunds take 30 days."))
    }
    return [
        span(tid, span_id=root, name="query", attrs={
            "openinference.span.kind": "CHAIN", "input.value": "refund?", "output.value": "Refunds take 30 days."}),
        span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **docs}),
    ]  # fmt: skip


def request(spans: list[Span], service: str = "test-app") -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.append(kv("service.name", service))
    ss = rs.scope_spans.add()
    ss.scope.name = "tests"
    ss.spans.extend(spans)
    return req


def json_request(spans: list[dict[str, Any]], service: str = "test-app") -> dict[str, Any]:
    """An OTLP/JSON body (camelCase keys, hex ids) around already built span dicts."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": spans}],
            }
        ]
    }


TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def raw_export(channel: Any, method: str = TRACE_EXPORT) -> Any:
    """An OTLP/gRPC ``Export`` call that sends bytes as given and returns the response's bytes, as a
    client with its own encoder would (a malformed message reaches the receiver as sent)."""
    return channel.unary_unary(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)
