"""The store's own SQL: one statement per file under ``collector/store/sql/<area>/<name>.sql``.

Each file starts with the header ``queries/`` uses (``-- name:``, ``-- description:``, ``-- params:``,
``-- returns:``), so a reader sees what a statement is for before reading it, and a test checks
every file has one. Code outside ``collector/store/`` never holds backend SQL: it calls the typed
operations of the area modules, which load their statements here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from queries import Query, parse


@cache
def statement(area: str, name: str) -> Query:
    """The parsed statement ``sql/<area>/<name>.sql`` (cached: files are read once a process)."""
    path = resources.files("collector.store").joinpath("sql", area, f"{name}.sql")
    if not path.is_file():
        raise KeyError(f"the store has no statement {area}/{name}.sql")
    return parse(path.read_text(encoding="utf-8"), name)


def sql(area: str, name: str) -> str:
    """The text of ``sql/<area>/<name>.sql``, header included (DuckDB ignores the comments)."""
    return statement(area, name).sql


def all_statements() -> dict[str, Query]:
    """Every statement, keyed ``area/name`` (for the header test and for readers of the code)."""
    root = resources.files("collector.store").joinpath("sql")
    out: dict[str, Query] = {}
    if not root.is_dir():
        return out
    for area in sorted(root.iterdir(), key=lambda e: e.name):
        if not area.is_dir():
            continue
        for entry in sorted(area.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                out[f"{area.name}/{entry.name[:-4]}"] = statement(area.name, entry.name[:-4])
    return out
