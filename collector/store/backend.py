"""Which backend a handle belongs to, known when the store gives it out.

An operation that takes a different path on a lake (appends and claims instead of updates) asks
``is_lake(tx)``. The stores say what their handles are as they hand them out (``opened``: the
connection a store opens, every ``cursor()``), so the answer is a look-up in this process, not a
query per call. A handle no store handed out (a cursor a caller made with ``tx.cursor()``, a
connection opened by hand) is asked once, by its attached databases, and remembered while it lives.
"""

from __future__ import annotations

import threading
import weakref
from typing import TypeVar

import duckdb

from collector.store.sqlfiles import sql

_H = TypeVar("_H", bound=duckdb.DuckDBPyConnection)

_known: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, bool] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def opened(handle: _H, *, lake: bool) -> _H:
    """Remember that ``handle`` is a lake's (``lake``) or a file's; returns it (for ``return
    opened(cur, lake=...)``). Forgotten once the handle is."""
    with _lock:
        _known[handle] = lake
    return handle


def is_lake(tx: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``tx`` is a lake store's handle: as its store said when it handed it out, else asked
    once of the handle (its instance has the lake attached as a DuckLake)."""
    known = _known.get(tx)
    if known is not None:
        return known
    lake = probe(tx)
    opened(tx, lake=lake)
    return lake


def probe(tx: duckdb.DuckDBPyConnection) -> bool:
    """Ask the handle itself (one query): for a handle no store handed out."""
    # (fetched to the end: DuckDB holds a connection until a result is)
    rows = tx.execute(sql("lake/attach", "attached")).fetchall()
    return bool(rows[0][0])
