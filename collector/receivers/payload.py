"""Decoding of OTLP payloads (traces, logs, metrics): content encodings, protobuf and OTLP/JSON.

OTLP/JSON differs from the canonical protobuf JSON mapping in one way that matters here: trace and
span ids are hex strings, not base64 (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding).
Enums may be numbers or names, 64-bit integers strings or numbers, keys lowerCamelCase or snake_case,
and unknown fields are ignored.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ragfault_core.errors import PayloadTooLarge, PermanentError, UnsupportedMediaType

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def media_type(content_type: str | None) -> str:
    """The OTLP encoding named by a Content-Type header, or UnsupportedMediaType."""
    base = (content_type or "").split(";", 1)[0].strip().lower()
    if base in (PROTOBUF, "application/protobuf", "application/vnd.google.protobuf"):
        return PROTOBUF
    if base in (JSON, "application/otlp+json"):
        return JSON
    raise UnsupportedMediaType(f"unsupported Content-Type {content_type!r}; use {PROTOBUF} or {JSON}")


def inflated_size(body: bytes, encoding: str | None, max_bytes: int) -> int:
    """The bytes ``body`` will take once inflated, as far as can be told before inflating it: a gzip
    body says so in its trailer (ISIZE; ``inflate`` decodes one gzip member, and zlib checks the
    trailer), a deflate body does not, so it counts as ``max_bytes``. At most ``max_bytes``."""
    enc = (encoding or "identity").strip().lower()
    if enc in ("", "identity"):
        return len(body)
    if enc in ("gzip", "x-gzip") and len(body) >= 18:  # header (10) + trailer (8) at least
        return min(max_bytes, int.from_bytes(body[-4:], "little"))
    return max_bytes


def inflate(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """Undo Content-Encoding without ever holding more than ``max_bytes`` of output (no gzip bombs)."""
    enc = (encoding or "identity").strip().lower()
    if enc in ("", "identity"):
        return body
    if enc in ("gzip", "x-gzip"):
        wbits = 16 + zlib.MAX_WBITS
    elif enc == "deflate":
        wbits = zlib.MAX_WBITS
    else:
        raise UnsupportedMediaType(f"unsupported Content-Encoding {encoding!r}; use gzip or deflate")
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(body, max_bytes + 1)
        if len(out) > max_bytes or d.unconsumed_tail:
            raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
        out += d.flush()
    except zlib.error as exc:
        if enc == "deflate":  # some clients send raw deflate without the zlib header
            try:
                return _inflate_raw(body, max_bytes)
            except zlib.error:
                pass
        raise PermanentError(f"invalid {enc} body: {exc}") from exc
    if len(out) > max_bytes:
        raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
    if not d.eof:
        raise PermanentError(f"truncated {enc} body")
    return out


def _inflate_raw(body: bytes, max_bytes: int) -> bytes:
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    out = d.decompress(body, max_bytes + 1)
    if len(out) > max_bytes or d.unconsumed_tail:
        raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
    return out + d.flush()


def parse_protobuf(data: bytes) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise PermanentError(f"invalid protobuf ExportTraceServiceRequest: {exc}") from exc
    return req


def _hex_to_b64(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise PermanentError(f"{field} must be a hex string")
    if value == "":
        return ""
    try:
        raw = bytes.fromhex(value)
    except ValueError as exc:
        raise PermanentError(f"{field} is not valid hex: {value[:40]!r}") from exc
    return base64.b64encode(raw).decode()


_SPAN_CONTAINERS = frozenset(
    {"resourceSpans", "resource_spans", "scopeSpans", "scope_spans", "spans", "links"}
)


def _fix_ids(node: Any, depth: int = 0, containers: frozenset[str] = _SPAN_CONTAINERS) -> None:
    """Rewrite hex ids to base64 in place, where the protobuf JSON mapping expects bytes.

    Only the fields under ``containers`` (the request's nesting down to the messages that carry
    ids) are visited, never attribute values."""
    if depth > 8:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS:
                node[key] = _hex_to_b64(value, key)
            elif key in containers:
                if isinstance(value, list):
                    for item in value:
                        _fix_ids(item, depth + 1, containers)
                elif isinstance(value, dict):
                    _fix_ids(value, depth + 1, containers)


def parse_json(data: bytes) -> ExportTraceServiceRequest:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise PermanentError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise PermanentError("OTLP/JSON body must be an object with resourceSpans")
    _fix_ids(doc)
    req = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(doc, req, ignore_unknown_fields=True, max_recursion_depth=64)
    except (json_format.ParseError, RecursionError, ValueError, TypeError, AttributeError) as exc:
        raise PermanentError(f"invalid OTLP/JSON: {str(exc)[:300]}") from exc
    return req


def decode(
    body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
) -> tuple[ExportTraceServiceRequest, str]:
    """Body bytes -> (request, media type). Raises PermanentError subclasses only."""
    kind = media_type(content_type)
    data = inflate(body, encoding, max_bytes)
    if kind == PROTOBUF:
        return parse_protobuf(data), kind
    return parse_json(data), kind


def encode_response(rejected: int, message: str, kind: str) -> bytes:
    resp = ExportTraceServiceResponse()
    if rejected or message:
        resp.partial_success.rejected_spans = rejected
        resp.partial_success.error_message = message
    if kind == JSON:
        return orjson.dumps(json_format.MessageToDict(resp))
    out: bytes = resp.SerializeToString()
    return out


def encode_status(code: int, message: str, kind: str) -> bytes:
    """A google.rpc.Status body in the request's encoding (OTLP/HTTP failure responses)."""
    from google.rpc import status_pb2

    st = status_pb2.Status(code=code, message=message)
    if kind == JSON:
        return orjson.dumps({"code": code, "message": message})
    out: bytes = st.SerializeToString()
    return out


# --- logs and metrics ------------------------------------------------------------------------

LOGS, METRICS = "logs", "metrics"


class _Signal:
    def __init__(
        self,
        request: type[Message],
        response: type[Message],
        rejected_field: str,
        top: str,
        containers: tuple[str, ...],
    ) -> None:
        self.request, self.response, self.rejected_field, self.top = request, response, rejected_field, top
        self.containers = frozenset(containers)


SIGNALS = {
    LOGS: _Signal(
        ExportLogsServiceRequest, ExportLogsServiceResponse, "rejected_log_records", "resourceLogs",
        ("resourceLogs", "resource_logs", "scopeLogs", "scope_logs", "logRecords", "log_records"),
    ),
    METRICS: _Signal(
        ExportMetricsServiceRequest, ExportMetricsServiceResponse, "rejected_data_points", "resourceMetrics",
        ("resourceMetrics", "resource_metrics", "scopeMetrics", "scope_metrics", "metrics", "gauge", "sum",
         "histogram", "exponentialHistogram", "exponential_histogram", "summary", "dataPoints", "data_points",
         "exemplars"),
    ),
}  # fmt: skip


def decode_signal(
    signal: str, body: bytes, content_type: str | None, encoding: str | None, max_bytes: int
) -> Any:
    """Body bytes of a logs or metrics export -> its request message. Raises PermanentError subclasses."""
    spec = SIGNALS[signal]
    kind = media_type(content_type)
    data = inflate(body, encoding, max_bytes)
    req = spec.request()
    name = spec.request.__name__
    if kind == PROTOBUF:
        try:
            req.ParseFromString(data)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise PermanentError(f"invalid protobuf {name}: {exc}") from exc
        return req
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise PermanentError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise PermanentError(f"OTLP/JSON body must be an object with {spec.top}")
    _fix_ids(doc, containers=spec.containers)
    try:
        json_format.ParseDict(doc, req, ignore_unknown_fields=True, max_recursion_depth=64)
    except (json_format.ParseError, RecursionError, ValueError, TypeError, AttributeError) as exc:
        raise PermanentError(f"invalid OTLP/JSON: {str(exc)[:300]}") from exc
    return req


def signal_response(signal: str, rejected: int, message: str) -> Any:
    """The Export…ServiceResponse of a logs or metrics export, ``partial_success`` when some were rejected."""
    spec = SIGNALS[signal]
    resp = spec.response()
    if rejected or message:
        setattr(resp.partial_success, spec.rejected_field, rejected)
        resp.partial_success.error_message = message
    return resp


def encode_signal_response(signal: str, rejected: int, message: str, kind: str) -> bytes:
    resp = signal_response(signal, rejected, message)
    if kind == JSON:
        return orjson.dumps(json_format.MessageToDict(resp))
    out: bytes = resp.SerializeToString()
    return out
