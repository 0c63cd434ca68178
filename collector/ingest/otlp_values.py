"""OTLP attribute values -> JSON-compatible Python values, and those values as JSON.

Every signal's rows store attributes as JSON text: spans (``collector.ingest.span_rows``), log records and
metric data points (``collector.receivers.log_records``, ``collector.receivers.metric_points``), and the convention
readers read span events' attributes with the same conversion.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import orjson

_MAX_DEPTH = 32


def any_value(v: Any, depth: int = 0) -> Any:
    """AnyValue -> a JSON-compatible Python value (bytes as base64)."""
    s = v.string_value  # the common case first: one field read instead of WhichOneof + read
    if s:
        return s
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind == "double_value":
        return v.double_value
    if kind == "bool_value":
        return v.bool_value
    if depth >= _MAX_DEPTH:
        return None
    if kind == "array_value":
        return [any_value(x, depth + 1) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value, depth + 1) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        v = kv.value
        s = v.string_value
        out[kv.key] = s if s else any_value(v)
    return out


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v) for v in value)
    return False


def json_bytes(value: Any) -> bytes:
    """Attributes as JSON, UTF-8. NaN and ±Infinity are kept as the tokens ``NaN``, ``Infinity`` and
    ``-Infinity`` (orjson writes ``null``): DuckDB's JSON reads them as DOUBLE, and
    ``ragfault_core.jsonvalue.loads`` reads them back."""
    out = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    if b"null" in out and _non_finite(value):
        return json.dumps(value, allow_nan=True, ensure_ascii=False, separators=(",", ":")).encode()
    return out


def json_text(value: Any) -> str:
    """``json_bytes`` as text."""
    return json_bytes(value).decode()
