"""Attribute values read leniently: strings, numbers, lists and JSON as the conventions write them
(a number may arrive as text, a list as a JSON array string), and the keys of flattened lists
(``prefix.{i}.rest``). None, never an exception, for a value that does not read."""

from __future__ import annotations

from itertools import repeat
from typing import Any

import orjson


def as_str(value: Any) -> str | None:
    """A string form of an attribute value, JSON for structured values."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return orjson.dumps(value).decode()


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        try:
            return int(s)
        except ValueError:
            pass
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
        return f if f == f else None  # NaN is no score
    return None


def as_str_list(value: Any) -> list[str] | None:
    """A list of strings from an array attribute, a JSON array string or a comma-separated string."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v) != ""]
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                parsed = orjson.loads(s)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return [str(v) for v in parsed if v is not None and str(v) != ""]
        return [p.strip() for p in s.split(",") if p.strip()]
    return [str(value)]


def parse_json(value: Any) -> Any:
    """Parse a JSON string attribute; structured values pass through, bad JSON gives None."""
    if isinstance(value, (dict, list)):
        return value
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return None


def indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Group flattened list attributes: ``prefix.{i}.rest`` -> {i: {rest: value}}.

    ``prefix`` includes the trailing dot, e.g. ``"retrieval.documents."``.
    """
    out: dict[int, dict[str, Any]] = {}
    plen = len(prefix)
    last_idx, last = "", None  # the keys of one item are usually adjacent: skip isdigit/int/lookup
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        idx, _, sub = key[plen:].partition(".")
        if idx == last_idx and last is not None:
            last[sub] = value
        elif idx.isdigit():
            i = int(idx)
            last = out.get(i)
            if last is None:
                last = out[i] = {}
            last[sub] = value
            last_idx = idx
    return out


def key_blob(attrs: dict[str, Any]) -> str:
    """Every key of a span, each after a newline: ``prefix_count`` searches it in C."""
    return "\n" + "\n".join(attrs)


def prefix_count(attrs: dict[str, Any], prefix: str, keys: str | None = None) -> int:
    """How many keys start with ``prefix`` (at least; a key holding a newline may add to the count)."""
    if keys is None:
        return sum(map(str.startswith, attrs, repeat(prefix)))
    return keys.count("\n" + prefix)
