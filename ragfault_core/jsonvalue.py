"""Reading back the JSON ragfault stores: orjson, and the standard library for the non-finite
doubles (``NaN``, ``Infinity``, ``-Infinity``) that spans may carry and orjson does not read."""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(raw: str | bytes) -> Any:
    """Parse stored JSON; raises ``ValueError`` (orjson.JSONDecodeError is one) when it is not."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if "NaN" not in text and "Infinity" not in text:
            raise
        return json.loads(text)
