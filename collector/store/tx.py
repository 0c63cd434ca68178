"""One transaction on a DuckDB connection, rolled back when its body raises."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is open (a failed COMMIT has already ended it)."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """``BEGIN`` … ``COMMIT``; any exception in the body (or at COMMIT) rolls back and propagates."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
