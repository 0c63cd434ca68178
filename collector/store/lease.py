"""Leases in the lake's catalog database: which process holds a piece of work, until when.

Several collectors share one lake; work that must run in one of them at a time (the lake's
maintenance, and later settling a trace) is claimed by a lease: a row of ``ragfault_lease`` in the
catalog's PostgreSQL database, written by one ``INSERT … ON CONFLICT DO UPDATE … WHERE`` statement,
so PostgreSQL's row lock decides between processes that claim at once. A holder renews by claiming
again; a lease whose holder died is free once it expires. The time is PostgreSQL's (``now()``), the
same for every machine, unless a clock is injected (tests).

It runs on its own DuckDB connection with the postgres extension attached to the catalog database
(the lake's own connection is sandboxed and cannot attach anything).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from collector.store.lake import _quote, catalog_conninfo, load_extensions

TABLE = "ragfault_lease"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (name text PRIMARY KEY, holder text NOT NULL, "
    "expires_at timestamptz NOT NULL, claimed_at timestamptz NOT NULL)"
)


def pg_literal(value: str) -> str:
    """A PostgreSQL string literal (standard_conforming_strings: only the quote is doubled)."""
    if "\x00" in value:
        raise ValueError("a lease name or holder cannot contain NUL")
    return "'" + value.replace("'", "''") + "'"


def default_holder() -> str:
    """This process, unique across machines and restarts: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class CatalogLeases:
    """Claim, renew and release named leases in the catalog database of ``catalog``."""

    def __init__(
        self,
        catalog: str,
        *,
        holder: str | None = None,
        now: Callable[[], datetime] | None = None,
        extension_repository: bool = True,
        extension_dir: str | Path | None = None,
    ) -> None:
        self.holder = holder or default_holder()
        self._now = now
        self._lock = threading.Lock()
        self.con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        try:
            load_extensions(self.con, repository=extension_repository, directory=extension_dir)
            self.con.execute(
                f"ATTACH '{_quote(catalog_conninfo(catalog))}' AS ragfault_catalog (TYPE postgres)"
            )
            self._execute(_CREATE)
        except BaseException:
            self.con.close()
            raise

    def _time(self) -> str:
        if self._now is None:
            return "now()"
        return f"{pg_literal(self._now().isoformat())}::timestamptz"

    def _execute(self, sql: str) -> None:
        with self._lock:
            self.con.execute("CALL postgres_execute('ragfault_catalog', ?)", [sql])

    def _query(self, sql: str) -> list[tuple[object, ...]]:
        with self._lock:
            return self.con.execute("SELECT * FROM postgres_query('ragfault_catalog', ?)", [sql]).fetchall()

    def claim(self, name: str, seconds: float) -> bool:
        """Hold ``name`` for ``seconds`` from now if it is free, expired or already ours (a renewal);
        True when this process holds it afterwards."""
        if seconds <= 0:
            raise ValueError("a lease lasts a positive number of seconds")
        now, me = self._time(), pg_literal(self.holder)
        until = f"{now} + make_interval(secs => {float(seconds)!r})"
        self._execute(
            f"INSERT INTO {TABLE} AS l (name, holder, expires_at, claimed_at) "
            f"VALUES ({pg_literal(name)}, {me}, {until}, {now}) "
            "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, "
            "claimed_at = CASE WHEN l.holder = excluded.holder THEN l.claimed_at ELSE excluded.claimed_at END "
            f"WHERE l.expires_at <= {now} OR l.holder = excluded.holder"
        )
        rows = self._query(
            f"SELECT holder = {me} AND expires_at > {now} FROM {TABLE} WHERE name = {pg_literal(name)}"
        )
        return bool(rows and rows[0][0])

    def release(self, name: str) -> None:
        """Give ``name`` up now, if this process holds it."""
        self._execute(
            f"UPDATE {TABLE} SET expires_at = {self._time()} WHERE name = {pg_literal(name)} "
            f"AND holder = {pg_literal(self.holder)}"
        )

    def held_by(self, name: str) -> tuple[str | None, datetime | None]:
        """The holder of ``name`` and when its lease expires (None, None when never claimed)."""
        rows = self._query(
            f"SELECT holder, extract(epoch FROM expires_at)::float8 FROM {TABLE} WHERE name = {pg_literal(name)}"
        )
        if not rows:
            return None, None
        holder, epoch = rows[0]
        assert isinstance(epoch, float)
        return str(holder), datetime.fromtimestamp(epoch, UTC)

    def close(self) -> None:
        self.con.close()
