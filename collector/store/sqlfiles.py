"""The store's own SQL: one statement per file, ``collector/store/sql/<area>/<name>.sql`` for the
operations both backends share, and ``collector/store/<backend>/sql/<area>/<name>.sql`` for a
backend's own (the area is then named ``<backend>/<area>``: ``statement("lake/work", "pending")``).

Each file starts with the header ``queries/`` uses (``-- name:``, ``-- description:``, ``-- params:``,
``-- returns:``), so a reader sees what a statement is for before reading it, and a test checks
every file has one. Code outside ``collector/store/`` never holds backend SQL: it calls the typed
operations of the area modules, which load their statements here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

from queries import Query, parse

_PACKAGE = "collector.store"


def _area_dir(area: str) -> Traversable:
    """The folder of ``area``: ``sql/<area>`` of the store, or of a backend package for
    ``<backend>/<area>`` (a backend's statements live beside its code)."""
    root = resources.files(_PACKAGE)
    backend, _, own = area.rpartition("/")
    if backend:
        return root.joinpath(backend, "sql", own)
    return root.joinpath("sql", area)


@cache
def statement(area: str, name: str) -> Query:
    """The parsed statement ``name`` of ``area`` (cached: files are read once a process)."""
    path = _area_dir(area).joinpath(f"{name}.sql")
    if not path.is_file():
        raise KeyError(f"the store has no statement {area}/{name}.sql")
    return parse(path.read_text(encoding="utf-8"), name)


def sql(area: str, name: str) -> str:
    """The text of the statement ``name`` of ``area``, header included (DuckDB ignores the comments)."""
    return statement(area, name).sql


def areas() -> list[str]:
    """Every area with statements: the shared ones (``settle``) and each backend package's
    (``lake/work``), found on disk so a new area or backend needs no list kept here."""
    root = resources.files(_PACKAGE)
    found: list[str] = []
    shared = root.joinpath("sql")
    if shared.is_dir():
        found += [a.name for a in shared.iterdir() if a.is_dir()]
    for package in root.iterdir():
        own = package.joinpath("sql")
        if package.is_dir() and package.name != "sql" and own.is_dir():
            found += [f"{package.name}/{a.name}" for a in own.iterdir() if a.is_dir()]
    return sorted(found)


def all_statements() -> dict[str, Query]:
    """Every statement, keyed ``area/name`` (for the header test and for readers of the code)."""
    out: dict[str, Query] = {}
    for area in areas():
        for entry in sorted(_area_dir(area).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                out[f"{area}/{entry.name[:-4]}"] = statement(area, entry.name[:-4])
    return out
