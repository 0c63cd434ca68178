"""Working on a database file directly, when no server owns it (CLI commands)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from collector.settle import Settler
from collector.store import Store


class LocalStore:
    """The file opened read-write by this process, with a write function like the server's."""

    def __init__(self, db: str) -> None:
        self.store = Store(db)

    def write(self, fn: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        return fn(self.store.con)

    def settle_all(self) -> int:
        """Assemble every trace that has spans not yet assembled (a server stopped before it settled)."""
        settler = Settler(self.store.cursor(), self.write, settle_seconds=1, max_wait_seconds=1)
        total = 0
        while True:
            n = settler.run_once(force=True)
            total += n
            if n == 0:
                return total

    def close(self) -> None:
        self.store.close()
