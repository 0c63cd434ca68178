"""Decoding of OTLP trace payloads: content encodings, protobuf and OTLP/JSON.

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
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from collector.errors import PayloadTooLarge, PermanentError, UnsupportedMediaType

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


def _fix_ids(node: Any, depth: int = 0) -> None:
    """Rewrite hex ids to base64 in place, where the protobuf JSON mapping expects bytes."""
    if depth > 8:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS:
                node[key] = _hex_to_b64(value, key)
            elif key in ("resourceSpans", "resource_spans", "scopeSpans", "scope_spans", "spans", "links"):
                if isinstance(value, list):
                    for item in value:
                        _fix_ids(item, depth + 1)


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
