"""Leases in the lake's catalog database: which process holds a piece of work, until when.

Several collectors share one lake; work that must run in one of them at a time (the lake's
maintenance, retention) is claimed by a lease: a row of ``ragfault_lease`` in the catalog's
PostgreSQL database, written by one ``INSERT … ON CONFLICT DO UPDATE … WHERE`` statement, so
PostgreSQL's row lock decides between processes that claim at once. A holder renews by claiming
again. A lease is free once it expires, or at once when its holder's process is gone: each
``CatalogLeases`` is a holder with a presence in the catalog (``lake.holders``), whose lock ends with
the process. The time is PostgreSQL's (``now()``), the same for every machine, unless a clock is
injected (tests).

It runs on the presence's own DuckDB connection with the postgres extension attached to the catalog
database (the lake's own connection is sandboxed and cannot attach anything).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from collector.store.lake import ddl
from collector.store.lake.holders import (
    DB,
    Presence,
    default_holder,
    extension_loader,
    free_sql,
    pg_literal,
    state_sql,
)

__all__ = ["TABLE", "CatalogLeases", "LeaseState", "default_holder", "pg_literal"]

TABLE = "ragfault_lease"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (name text PRIMARY KEY, holder text NOT NULL, "
    "expires_at timestamptz NOT NULL, claimed_at timestamptz NOT NULL)"
)
_COLUMNS = [f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS taken_from text"]

# (holder, claimed_at, expires_at, holder's state: alive / gone / unknown, taken_from)
LeaseState = tuple[str, datetime, datetime, str, str | None]


def _utc(epoch: object) -> datetime:
    assert isinstance(epoch, float)
    return datetime.fromtimestamp(epoch, UTC)


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
        beat_seconds: float | None = None,
    ) -> None:
        self._now = now
        load = extension_loader(repository=extension_repository, directory=extension_dir)
        extra = {} if beat_seconds is None else {"beat_seconds": beat_seconds}
        self.presence = Presence(catalog, holder=holder, load=load, **extra)
        self.holder = self.presence.holder
        try:
            with self.presence._lock:
                ddl.in_catalog(self.presence.con, DB, [_CREATE, *_COLUMNS], what=f"table {TABLE}")
        except BaseException:
            self.presence.close()
            raise

    def _time(self) -> str:
        if self._now is None:
            return "now()"
        return f"{pg_literal(self._now().isoformat())}::timestamptz"

    def claim(self, name: str, seconds: float) -> bool:
        """Hold ``name`` for ``seconds`` from now if it is free (expired, or its holder gone) or
        already ours (a renewal); True when this process holds it afterwards. A lease taken from
        another holder records whom from (``taken_from``)."""
        if seconds <= 0:
            raise ValueError("a lease lasts a positive number of seconds")
        now, me = self._time(), pg_literal(self.holder)
        until = f"{now} + make_interval(secs => {float(seconds)!r})"
        self.presence.execute(
            f"INSERT INTO {TABLE} AS l (name, holder, expires_at, claimed_at) "
            f"VALUES ({pg_literal(name)}, {me}, {until}, {now}) "
            "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, "
            "claimed_at = CASE WHEN l.holder = excluded.holder THEN l.claimed_at ELSE excluded.claimed_at END, "
            "taken_from = CASE WHEN l.holder = excluded.holder THEN l.taken_from "
            f"WHEN l.expires_at > {now} THEN l.holder END "
            f"WHERE l.holder = excluded.holder OR {free_sql('l', now)}"
        )
        rows = self.presence.query(
            f"SELECT holder = {me} AND expires_at > {now} FROM {TABLE} WHERE name = {pg_literal(name)}"
        )
        return bool(rows and rows[0][0])

    def free(self, name: str) -> bool:
        """Whether another process could take ``name`` now (never claimed, expired, or its holder
        gone) and this one does not hold it."""
        rows = self.presence.query(
            f"SELECT l.holder <> {pg_literal(self.holder)} AND {free_sql('l', self._time())} "
            f"FROM {TABLE} l WHERE l.name = {pg_literal(name)}"
        )
        return not rows or bool(rows[0][0])

    def release(self, name: str) -> None:
        """Give ``name`` up now, if this process holds it."""
        self.presence.execute(
            f"UPDATE {TABLE} SET expires_at = {self._time()} WHERE name = {pg_literal(name)} "
            f"AND holder = {pg_literal(self.holder)}"
        )

    def held_by(self, name: str) -> tuple[str | None, datetime | None]:
        """The holder of ``name`` and when its lease expires (None, None when never claimed)."""
        state = self.state(name)
        return (None, None) if state is None else (state[0], state[2])

    def state(self, name: str) -> LeaseState | None:
        """Who holds ``name``, since and until when, whether that holder is alive, and whom it was
        taken from (None when never claimed)."""
        rows = self.presence.query(
            f"SELECT l.holder, extract(epoch FROM l.claimed_at)::float8 AS since, extract(epoch FROM l.expires_at)::float8 AS until, "
            f"coalesce({state_sql('l.holder')}, 'unknown') AS state, l.taken_from FROM {TABLE} l "
            f"WHERE l.name = {pg_literal(name)}"
        )
        if not rows:
            return None
        holder, since, until, alive, taken = rows[0]
        return str(holder), _utc(since), _utc(until), str(alive), None if taken is None else str(taken)

    def close(self) -> None:
        self.presence.close()
