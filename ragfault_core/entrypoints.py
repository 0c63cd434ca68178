"""Plug-ins found through entry points (evaluators, server components): every entry of a group
loaded in name order, each checked to be what the group holds, and a failure named by its entry
point, at startup rather than on first use."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TypeVar

from ragfault_core.errors import ConfigError

T = TypeVar("T")


def load_group(group: str, kind: type[T], what: str) -> list[tuple[str, T]]:
    """(the entry point's value, the object it names) for every entry point of ``group``, by name.
    ``ConfigError`` names the entry point (as ``what`` entry point NAME (VALUE)) that fails to load
    or whose object is not a ``kind``."""
    out: list[tuple[str, T]] = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as exc:
            raise ConfigError(f"{what} entry point {ep.name} ({ep.value}) failed to load: {exc}") from exc
        if not isinstance(obj, kind):
            article = "an" if kind.__name__[:1] in "AEIOU" else "a"
            raise ConfigError(f"{what} entry point {ep.name} ({ep.value}) is not {article} {kind.__name__}")
        out.append((ep.value, obj))
    return out
