"""Working on a database file directly, when no server owns it (CLI commands)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from collector.errors import ConfigError
from collector.settle import Settler
from collector.store import Store
from collector.store.base import Tx


def require_database(db: str) -> None:
    """Refuse a database file that does not exist (a mistyped ``--db`` would create an empty one),
    saying which database files are there."""
    path = Path(db)
    if path.is_file():
        return
    where = path.parent
    if not where.is_dir():
        raise ConfigError(f"no database file {db}: the directory {where} does not exist")
    found = sorted(p.name for p in where.glob("*.duckdb"))
    there = f"database files in {where}: {', '.join(found)}" if found else f"no .duckdb file in {where}"
    raise ConfigError(f"no database file {db} ({there}); pass --db FILE (`ragfault serve` creates one)")


class LocalStore:
    """The file opened read-write by this process, with a write function like the server's."""

    def __init__(self, db: str) -> None:
        try:
            self.store = Store(db)
        except ConfigError as exc:
            from ragfault.client import open_hint

            raise open_hint(exc) from exc

    def write(self, fn: Callable[[Tx], Any]) -> Any:
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
