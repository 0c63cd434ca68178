"""A DuckDB file named by ``--db``, read or made on a connection of its own before a command opens it
(``ragfault.dbfile`` decides from these what a command may do with it): its tables, the services and
datasets a demo database holds beyond the demo's, and the mark the demo leaves on the files it makes.

Each opens an in-memory DuckDB and attaches the file (read-only to read it: a process writing it
answers with its lock first), so nothing here holds the file after it returns. The statements are
``sql/dbfile/*.sql``; ATTACH takes its file only as a literal, which ``_attach`` quotes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import duckdb

from collector.store.sqlfiles import sql
from collector.store.templates import fill, filled

DEMO_TABLE = "ragfault_demo"
"""The table the demo's mark is (``sql/dbfile/demo_mark_table.sql`` creates it)."""


class CannotOpen(Exception):
    """The file could not be attached: DuckDB's message (another process's lock names it, with the
    holder's PID) is the exception's text."""


def _attach(con: duckdb.DuckDBPyConnection, name: str, path: str | Path) -> None:
    """Run the ATTACH statement ``name`` for ``path`` (a string literal: ATTACH takes no parameter)."""
    literal = "'" + str(path).replace("'", "''") + "'"
    con.execute(fill(filled("dbfile", name), path=literal))


def tables(path: str | Path) -> tuple[str, ...]:
    """The names of the tables and views of the DuckDB file ``path``, sorted (opened read-only and
    closed again); ``CannotOpen`` when it cannot be attached (held by another process, unreadable)."""
    con = duckdb.connect(":memory:")
    try:
        try:
            _attach(con, "attach_probe", path)
        except duckdb.Error as exc:
            raise CannotOpen(str(exc)) from exc
        return tuple(str(r[0]) for r in con.execute(sql("dbfile", "probe_tables")).fetchall())
    finally:
        con.close()


def foreign_values(
    path: str | Path, services: Sequence[str], datasets: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Up to three services of the file's traces other than ``services`` and up to three datasets of
    its gold cases other than ``datasets`` (NULL as ``(none)``); None when the file has no such tables
    yet (a demo stopped before its server made them)."""
    con = duckdb.connect(":memory:")
    try:
        _attach(con, "attach_probe", path)
        found = []
        for name, allowed in (("probe_foreign_services", services), ("probe_foreign_datasets", datasets)):
            rows = con.execute(sql("dbfile", name), {"allowed": list(allowed)}).fetchall()
            found.append([str(r[0]) for r in rows])
        return found[0], found[1]
    except duckdb.CatalogException:
        return None
    finally:
        con.close()


def mark_demo(path: str | Path, made_at: datetime, note: str) -> None:
    """Create the DuckDB file ``path`` holding only the demo's mark (``DEMO_TABLE``: ``made_at``,
    ``note``), written whole."""
    con = duckdb.connect(":memory:")
    try:
        _attach(con, "attach_made", path)
        con.execute(sql("dbfile", "demo_mark_table"))
        con.execute(sql("dbfile", "demo_mark"), {"made_at": made_at, "note": note})
        con.execute(sql("dbfile", "checkpoint_made"))
    finally:
        con.close()
