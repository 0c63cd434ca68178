"""Which holders of the lake's claims and leases are alive: a collector killed outright frees its work
within seconds, not when its claims expire.

Each holder (a lake store's claims, a process's leases) keeps a ``Presence`` in the catalog's
PostgreSQL: a row of ``ragfault_holder`` (the holder's name, host, pid, since when, last seen) and a
session-level advisory lock on a number of its own, taken on a connection the holder keeps open. The
lock lives exactly as long as that connection: when the process is killed, its operating system
closes the socket, PostgreSQL ends the session and the lock is gone, with no clock involved. A claim
or lease whose holder has a row but no lock is free (``free_sql``), as is one past its expiry
(the fallback for a holder that is alive but stuck, or that lost its connection). A holder without a
row (a collector of an earlier version) is judged by expiry alone.

The lock is taken on a plain session of the holder's own (``session``: DuckDB's postgres
extension resets its pooled connections, and the reset drops session locks). A heartbeat re-takes
the lock (after a lost connection, on a new session) and records when the holder was last seen; the
row is written only while the lock is held.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb

from collector.store.lake import ddl
from collector.store.lake.attach import catalog_conninfo, load_extensions
from collector.store.lake.session import Session, SessionError

log = logging.getLogger("ragfault.lake")

TABLE = "ragfault_holder"
DB = "ragfault_catalog"  # the catalog database, as the presence's own instance names it
BEAT_SECONDS = 1.0  # how often a presence re-takes its lock and records that it was seen
PRUNE_DAYS = 7  # rows of holders gone (no lock) for this long are deleted at a start
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (holder text PRIMARY KEY, lock_key bigint NOT NULL, "
    "host text NOT NULL, pid integer NOT NULL, started_at timestamptz NOT NULL, seen_at timestamptz NOT NULL)"
)


def pg_literal(value: str) -> str:
    """A PostgreSQL string literal (standard_conforming_strings: only the quote is doubled)."""
    if "\x00" in value:
        raise ValueError("a holder's text cannot contain NUL")
    return "'" + value.replace("'", "''") + "'"


def default_holder() -> str:
    """This process, unique across machines and restarts: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def locked_sql(key: str) -> str:
    """SQL true while some session of this database holds the advisory lock numbered ``key`` (an
    expression; ``pg_locks`` splits a bigint key into two 32-bit halves)."""
    return (
        "EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        f"AND ((l.classid::int8 << 32) | l.objid::int8) = {key})"
    )


def gone_sql() -> str:
    """SQL of the holders known and without a lock: their processes are gone. (Not correlated to
    the row asking, so PostgreSQL reads ``pg_locks`` once a statement, not once a claim.)"""
    return f"SELECT h.holder FROM {TABLE} h WHERE NOT {locked_sql('h.lock_key')}"


def dead_sql(holder: str) -> str:
    """SQL true when the holder named by the expression ``holder`` is known and has no lock."""
    return f"{holder} IN ({gone_sql()})"


def free_sql(alias: str, now: str = "now()") -> str:
    """SQL true when the claim or lease row ``alias`` (its ``holder`` and ``expires_at``) may be
    taken: past its expiry, or its holder dead."""
    return f"({alias}.expires_at <= {now} OR {dead_sql(f'{alias}.holder')})"


def state_sql(holder: str) -> str:
    """SQL of a holder's state, for people: ``alive``, ``gone`` or ``unknown`` (no row)."""
    return (
        f"(SELECT CASE WHEN {locked_sql('h.lock_key')} THEN 'alive' ELSE 'gone' END FROM {TABLE} h "
        f"WHERE h.holder = {holder})"
    )


class Presence:
    """A holder's lock and row in the catalog database of ``catalog`` (a ``postgresql://`` URL),
    kept up by a heartbeat thread until ``close``. ``execute`` and ``query`` run other statements
    in that database, on a DuckDB instance of the presence's own (leases use it)."""

    def __init__(
        self,
        catalog: str,
        *,
        holder: str | None = None,
        load: Callable[[duckdb.DuckDBPyConnection], object],
        beat_seconds: float = BEAT_SECONDS,
    ) -> None:
        self.catalog = catalog
        self.holder = holder or default_holder()
        self.lock_key = random.getrandbits(62) + 1
        self.locked = False  # whether the lock is held (the row then says this holder is alive)
        self._warned = False
        self._beaten = False  # a first beat done
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._session: Session | None = None
        self._stop = threading.Event()
        self.on_beat: Callable[[], object] | None = None  # run after each beat of the thread
        self.con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        try:
            load(self.con)
            conninfo = catalog_conninfo(catalog).replace("'", "''")
            self.con.execute(f"ATTACH '{conninfo}' AS {DB} (TYPE postgres)")
            with self._lock:
                ddl.in_catalog(self.con, DB, [_CREATE], what=f"table {TABLE}")
            self.beat()
            self.execute(
                f"DELETE FROM {TABLE} h WHERE h.seen_at < now() - make_interval(days => {PRUNE_DAYS}) "
                f"AND NOT {locked_sql('h.lock_key')}"
            )
        except BaseException:
            self.close()
            raise
        self._thread: threading.Thread | None = None
        if beat_seconds > 0:
            self._thread = threading.Thread(
                target=self._beat_loop, args=(beat_seconds,), name="ragfault-lake-presence", daemon=True
            )
            self._thread.start()

    def execute(self, sql: str) -> None:
        with self._lock:
            self.con.execute(f"CALL postgres_execute('{DB}', ?)", [sql])

    def query(self, sql: str) -> list[tuple[object, ...]]:
        with self._lock:
            rows = self.con.execute(f"SELECT * FROM postgres_query('{DB}', ?)", [sql]).fetchall()
        return [tuple(r) for r in rows]

    def _hold(self) -> bool:
        """Hold the advisory lock on this holder's own session (opened again when it was lost)."""
        with self._session_lock:
            for attempt in range(2):
                if self._session is None:
                    self._session = Session(self.catalog)
                try:
                    rows = self._session.query(f"SELECT pg_try_advisory_lock({self.lock_key})")
                    # (taken again on a session that holds it: counted twice, released together)
                    return bool(rows) and rows[0][0] == "t"
                except (OSError, SessionError):
                    self._session.close()
                    self._session = None
                    if attempt == 1:
                        raise
            return False

    def beat(self) -> bool:
        """Hold the lock (again after a lost connection) and record, in this holder's row, its lock
        number and that it was seen; True when the lock is held. The row is written only while the
        lock is held: a row without a lock says the holder is gone."""
        was = self.locked
        try:
            self.locked = self._hold()
            problem = None if self.locked else f"its lock {self.lock_key} is held by another session"
        except (OSError, SessionError) as exc:
            self.locked, problem = False, f"no session of its own: {exc}"
        if problem is not None and (was or not self._warned):  # said once a time it is lost
            self._warned = True
            log.warning(
                "lake holder %s is judged by the expiry of its claims alone (%s)", self.holder, problem
            )
        elif self.locked and not was and self._warned:
            self._warned = False
            log.info("lake holder %s holds its lock again", self.holder)
        me = pg_literal(self.holder)
        if self.locked:
            self.execute(
                f"INSERT INTO {TABLE} (holder, lock_key, host, pid, started_at, seen_at) VALUES ({me}, "
                f"{self.lock_key}, {pg_literal(socket.gethostname())}, {os.getpid()}, now(), now()) "
                "ON CONFLICT (holder) DO UPDATE SET lock_key = excluded.lock_key, seen_at = excluded.seen_at"
            )
        elif was or not self._beaten:  # judged by expiry alone, not taken for dead
            self.execute(f"DELETE FROM {TABLE} WHERE holder = {me}")
        self._beaten = True
        return self.locked

    def alive(self, holder: str) -> bool | None:
        """Whether ``holder`` is alive (None: no such holder known)."""
        rows = self.query(f"SELECT {state_sql(pg_literal(holder))}")
        if not rows or rows[0][0] is None:
            return None
        return rows[0][0] == "alive"

    def _beat_loop(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            try:
                self.beat()
                if self.on_beat is not None:
                    self.on_beat()
            except Exception as exc:  # the catalog away: the next beat tries again
                log.warning("lake holder %s not seen by the catalog: %s", self.holder, exc)

    def close(self) -> None:
        """Stop the heartbeat and close the connections: the lock goes with the session, and what
        this holder still claims is free at once."""
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(10)
        with self._session_lock:
            if self._session is not None:
                self._session.close()
                self._session = None
        with self._lock:
            try:
                self.con.close()
            except duckdb.Error:
                pass


def extension_loader(
    *, repository: bool | str = True, packages: bool = True, directory: str | Path | None = None
) -> Callable[[duckdb.DuckDBPyConnection], object]:
    """The lake's extension loading (``attach.load_extensions``) with these sources, for a presence."""
    return lambda con: load_extensions(con, repository=repository, packages=packages, directory=directory)
