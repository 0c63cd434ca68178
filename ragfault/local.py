"""Working on a database file directly, when no server owns it (CLI commands)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from collector.settling.settle import Settler
from collector.store import Store
from collector.store.base import Tx
from ragfault_core.errors import ConfigError


class LocalStore:
    """The file opened read-write by this process, with a write function like the server's."""

    def __init__(self, db: str) -> None:
        from ragfault.client import HELD, open_hint
        from ragfault.dbfile import check_writable

        check_writable(db, held=HELD)  # not a text file, another app's database, nor a server's
        try:
            self.store = Store(db)
        except ConfigError as exc:
            raise open_hint(exc, db) from exc

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
