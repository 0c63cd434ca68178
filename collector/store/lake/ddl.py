"""Making the lake's tables and catalog objects when several collectors start at the same moment.

Every statement that makes something is written to be harmless when the thing exists (``IF NOT
EXISTS``, ``ADD COLUMN IF NOT EXISTS``, ``CREATE OR REPLACE``), but two sessions running one at
once can still fail, in two ways:

- in the catalog's PostgreSQL, ``CREATE TABLE IF NOT EXISTS`` is not safe against itself: both
  sessions miss the table, one creates it, and the other fails on a unique index of the system
  catalogs once the first commits (``duplicate key value violates unique constraint
  "pg_type_typname_nsp_index"``; ``pg_class_relname_nsp_index`` for an index,
  ``pg_namespace_nspname_index`` for a schema);
- in the lake, every DDL statement is a commit to the DuckLake catalog, and two such commits at once
  conflict: DuckLake rolls the later one back (a ``TransactionException``).

Either way, running the statement again finds what the other session made. ``idempotent`` is the one
place that does so, for the leases, the claims, the holders and the lake's own tables and views.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

import duckdb

log = logging.getLogger("ragfault.lake")

ATTEMPTS = 8  # a start under load: up to ~5 s of back-off in all
# what PostgreSQL and DuckLake say when another session made the same object meanwhile
RACE_MARKERS = (
    "pg_type_typname_nsp_index",
    "pg_class_relname_nsp_index",
    "pg_namespace_nspname_index",
    "already exists",
    "tuple concurrently updated",  # two ALTERs of one table's row in pg_class at once
)


def made_meanwhile(exc: BaseException) -> bool:
    """Whether ``exc`` is what a create that raced another session's create fails with."""
    if isinstance(exc, duckdb.TransactionException):
        return True
    text = str(exc)
    return any(marker in text for marker in RACE_MARKERS)


def idempotent(
    run: Callable[[], object],
    *,
    what: str,
    undo: Callable[[], object] | None = None,
    retry_if: Callable[[BaseException], bool] = made_meanwhile,
    attempts: int = ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Run ``run`` (statements that make ``what``, each harmless when it exists) until it succeeds,
    again after a failure ``retry_if`` takes for another collector's create (``undo``: what to do
    first, a rollback); any other failure, or the last one, is raised. The pauses grow and are
    spread at random, so collectors that collided once do not collide again in step."""
    for attempt in range(attempts):
        try:
            run()
            return
        except duckdb.Error as exc:
            if undo is not None:
                undo()
            if not retry_if(exc) or attempt == attempts - 1:
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.info("%s being made by another collector at once; again (%s)", what, first)
            sleep(min(0.05 * 2**attempt, 1.5) * (0.5 + random.random()))


def in_catalog(con: duckdb.DuckDBPyConnection, database: str, statements: list[str], *, what: str) -> None:
    """``statements`` run in the catalog's PostgreSQL (attached to ``con``'s instance as
    ``database``), one ``postgres_execute`` call each, all of them again after a race."""

    def run() -> None:
        for statement in statements:
            con.execute("CALL postgres_execute(?, ?)", [database, statement])

    idempotent(run, what=what)
