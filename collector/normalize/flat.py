"""Attributes flattened one field per key, rebuilt (docs/architecture.md, Conventions and readers).

OpenTelemetry attributes cannot nest, so many instrumentations write a list of objects one field
per key with the list position as a key segment (``acme.results.0.text``,
``x.input_messages.1.message.content``). ``unflatten`` reads such a group as the value it flattens,
so that the structural rules see the list.
"""

from __future__ import annotations

import re
from typing import Any

MAX_FLAT_INDEX = 1_000  # a list position past this in a key is no list a reader rebuilds
_INDEX_SEGMENT = re.compile(r"\.(\d+)(?=\.|$)")


def unflatten(attrs: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
    """Attributes written one field per key with list positions (``acme.results.0.text``,
    ``x.input_messages.1.message.content``: OpenTelemetry attributes cannot nest, so many
    instrumentations flatten lists this way) with each such group rebuilt as the value it flattens:
    ``{"acme.results": [{"text": ...}, ...]}``, the dotted rest of each key nested
    (``{"message": {"content": ...}}``), positions in order, lists inside lists rebuilt too. Keys
    starting with ``keep`` (a reader's own) and keys without a position stay as they are; a rebuilt
    key already present is not overwritten. Returns ``attrs`` itself when nothing is flattened."""
    groups: dict[str, dict[int, dict[str, Any]]] = {}
    flat: dict[str, str] = {}  # each flattened key -> its group
    for key, value in attrs.items():
        if key.startswith(keep) or not any(c.isdigit() for c in key):
            continue
        m = _INDEX_SEGMENT.search(key)
        if m is None or int(m.group(1)) > MAX_FLAT_INDEX:
            continue
        rest = key[m.end() + 1 :]
        groups.setdefault(key[: m.start()], {}).setdefault(int(m.group(1)), {})[rest] = value
        flat[key] = key[: m.start()]
    if not groups:
        return attrs
    out = {k: v for k, v in attrs.items() if k not in flat or flat[k] in attrs}
    for prefix, items in groups.items():
        if prefix not in attrs:
            out[prefix] = [_nested(items[i]) for i in sorted(items)]
    return out


def _nested(fields: dict[str, Any]) -> Any:
    """One item's fields (the rest of each key after its position) as the value they describe."""
    if set(fields) == {""}:
        return fields[""]
    flat = unflatten({k: v for k, v in fields.items() if k})
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if any(c.isdigit() for c in key) and _INDEX_SEGMENT.search(key):
            continue  # rebuilt under its prefix
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
            node = nxt
        node[parts[-1]] = value
    return out
