"""Bundled SQL: one statement per file, ``$name`` parameters, a header saying what it is.

Header lines (``-- key: value``) before the statement: ``name``, ``description``, ``grain``,
``params`` (``$name TYPE [= default]``, comma-separated, or ``none``), ``returns``, and optionally
``view`` (the file is also installed as a view of that name; a view file takes no parameters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

HEADER_KEYS = ("name", "description", "grain", "params", "returns", "view")
_PARAM_USE = re.compile(r"(?<![\w$])\$([A-Za-z_]\w*)")
_PARAM_DECL = re.compile(r"\$([A-Za-z_]\w*)\s+([A-Za-z_][\w\[\]]*)(?:\s*=\s*([^,]+))?")


@dataclass(frozen=True)
class Query:
    name: str
    sql: str
    description: str = ""
    grain: str = ""
    returns: str = ""
    view: str | None = None
    params: dict[str, str] = field(default_factory=dict)  # name -> type
    defaults: dict[str, str | None] = field(default_factory=dict)

    def used_params(self) -> set[str]:
        body = "\n".join(line for line in self.sql.splitlines() if not line.lstrip().startswith("--"))
        body = re.sub(r"'(?:[^']|'')*'", "''", body)  # ignore $ inside string literals
        return set(_PARAM_USE.findall(body))

    def bind(self, given: Mapping[str, object] | None = None) -> dict[str, object]:
        """Parameters for execution: given values, else declared defaults (NULL when none)."""
        given = dict(given or {})
        unknown = set(given) - set(self.params)
        if unknown:
            raise KeyError(
                f"query {self.name} has no parameter(s) {sorted(unknown)}; it takes {sorted(self.params)}"
            )
        out: dict[str, object] = {}
        for name in self.params:
            if name in given:
                out[name] = given[name]
            else:
                default = self.defaults.get(name)
                out[name] = None if default is None or default.upper() == "NULL" else default.strip("'\"")
        return out


def parse(text: str, fallback_name: str = "") -> Query:
    header: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if not s.startswith("--"):
            break
        key, sep, value = s[2:].strip().partition(":")
        k = key.strip().lower()
        if sep and k in HEADER_KEYS:
            header[k] = value.strip()
            last = k
        elif last is not None:  # a continuation line of the previous key
            header[last] = (header[last] + " " + s[2:].strip()).strip()
    params: dict[str, str] = {}
    defaults: dict[str, str | None] = {}
    decl = header.get("params", "")
    if decl and decl.lower() != "none":
        for m in _PARAM_DECL.finditer(decl):
            params[m.group(1)] = m.group(2)
            defaults[m.group(1)] = m.group(3).strip() if m.group(3) else None
    return Query(
        name=header.get("name", fallback_name),
        sql=text.strip().rstrip(";"),
        description=header.get("description", ""),
        grain=header.get("grain", ""),
        returns=header.get("returns", ""),
        view=header.get("view") or None,
        params=params,
        defaults=defaults,
    )


def all_queries() -> dict[str, Query]:
    out: dict[str, Query] = {}
    for entry in sorted(resources.files("queries").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            q = parse(entry.read_text(encoding="utf-8"), entry.name[:-4])
            out[q.name] = q
    return out


def load_query(name: str) -> Query:
    queries = all_queries()
    if name not in queries:
        raise KeyError(f"no bundled query {name!r}; have {sorted(queries)}")
    return queries[name]
