"""Printing query results: aligned text tables, JSON and CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

import orjson


def _cell(value: Any, width: int) -> str:
    if value is None:
        s = "NULL"
    elif isinstance(value, float):
        s = f"{value:.4g}"
    elif isinstance(value, (list, dict)):
        s = orjson.dumps(value).decode()
    else:
        s = str(value)
    s = s.replace("\n", " ")
    return s if len(s) <= width else s[: width - 1] + "…"


def table(columns: list[str], rows: list[list[Any]], max_width: int = 60) -> str:
    cells = [[_cell(v, max_width) for v in r] for r in rows]
    widths = [len(c) for c in columns]
    for r in cells:
        for i, v in enumerate(r):
            widths[i] = max(widths[i], len(v))
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join([line, sep, *body])


def render(result: dict[str, Any], fmt: str = "table") -> str:
    columns, rows = result["columns"], result["rows"]
    if fmt == "json":
        return orjson.dumps(
            [dict(zip(columns, r, strict=True)) for r in rows], option=orjson.OPT_INDENT_2
        ).decode()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(columns)
        for r in rows:
            w.writerow([orjson.dumps(v).decode() if isinstance(v, (list, dict)) else v for v in r])
        return buf.getvalue().rstrip("\n")
    out = table(columns, rows)
    n = len(rows)
    out += f"\n({n} row{'s' if n != 1 else ''}{', truncated' if result.get('truncated') else ''})"
    return out
