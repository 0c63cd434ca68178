"""Claims of per-trace work in the lake's catalog database: which collector settles or evaluates a
trace now, until when.

Every lake collector settles and evaluates; a trace is worked on by the one that claimed it. A claim
is a row of ``ragfault_claim`` (kind, trace id, holder, token, expiry) in the catalog's PostgreSQL
database, taken for a batch of traces by one ``INSERT … ON CONFLICT DO UPDATE … WHERE`` statement: a
trace free, expired or already this holder's becomes this holder's, one held by another stays
theirs, and PostgreSQL's row locks decide between collectors that claim the same trace at once (the
rows are locked in trace id order, so two batches cannot deadlock). A holder releases its claims
once its work is committed to the lake. A killed holder's claims are free at once: the store keeps
a presence in the catalog (``holders``: a row and an advisory lock that ends with the process),
and a claim whose holder is known and has no lock may be taken like an expired one; expiry after
``seconds`` stays the fallback for a holder alive but stuck, or one without a presence. A claim
taken from another holder records whom from (``taken_from``), and since when it is held
(``claimed_at``); ``freed`` lists the claims of others that became free, so a loop that skipped
them is woken (``LakeStore.watch_claims``).

A round claims at most ``max_traces`` traces (``round_cap``), the oldest that no other holder has:
one collector does not take a whole backlog while the others wait, and a lone collector still
works through it, a round at a time.

Claims run on the store's own DuckDB instance: the catalog database is attached to it (``TYPE
postgres``, as ``CATALOG_DB``) before the instance is sandboxed, and this process's holder name,
claim length and round cap are a one-row table of the instance's in-memory database, so every cursor of the
instance (the settle loop's, the writer's) claims as the same holder. The time is PostgreSQL's
``now()``, the same for every machine.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Iterable

import duckdb

from collector.store.base import Con
from collector.store.lake import ddl
from collector.store.lake.holders import free_sql, state_sql
from collector.store.sqlfiles import sql

log = logging.getLogger("ragfault.lake")

AREA = "lake/claims"
CATALOG_DB = "lake_catalog"  # (named so in sql/claims/ of this package)
TABLE = "ragfault_claim"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (kind text NOT NULL, trace_id text NOT NULL, holder text NOT NULL, "
    "token text NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (kind, trace_id))"
)
_COLUMNS = [
    f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS claimed_at timestamptz",
    f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS taken_from text",
]
SETTLE = "settle"
EVALUATE = "evaluate"
JUDGE = "judge"  # a write of the judge tier's verdicts (``work.write_verdicts``)
MAX_TRACES = 500  # a round's claims at most (``lake_claim_max_traces``)


def pg_literal(value: str) -> str:
    """A PostgreSQL string literal (standard_conforming_strings: only the quote is doubled)."""
    if "\x00" in value:
        raise ValueError("a claim's text cannot contain NUL")
    return "'" + value.replace("'", "''") + "'"


def _array(ids: Iterable[str]) -> str:
    return "ARRAY[" + ", ".join(pg_literal(t) for t in ids) + "]::text[]"


def attach(
    con: duckdb.DuckDBPyConnection,
    conninfo: str,
    seconds: float,
    holder: str | None = None,
    max_traces: int = MAX_TRACES,
) -> str:
    """Attach the catalog database to ``con``'s instance, make the claims table, and name this
    instance's holder (host, pid and a random part) and its round cap; returns the holder."""
    if seconds <= 0:
        raise ValueError("a claim lasts a positive number of seconds")
    if max_traces <= 0:
        raise ValueError("a round claims a positive number of traces")
    holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    con.execute(f"ATTACH '{conninfo.replace(chr(39), chr(39) * 2)}' AS {CATALOG_DB} (TYPE postgres)")
    _create(con)
    con.execute(sql(AREA, "name_claimer"), {"h": holder, "s": seconds, "m": max_traces})
    return holder


def attach_read_only(con: duckdb.DuckDBPyConnection, conninfo: str) -> None:
    """Attach the catalog database read-only, so the claims can be read (``trace_claims``) on an
    instance that takes none. A catalog without the claims table yet reads as no claims."""
    con.execute(
        f"ATTACH '{conninfo.replace(chr(39), chr(39) * 2)}' AS {CATALOG_DB} (TYPE postgres, READ_ONLY)"
    )


def _create(con: duckdb.DuckDBPyConnection) -> None:
    """Make the claims table and its later columns (``ddl``: safe when collectors start on a
    new catalog together)."""
    ddl.in_catalog(con, CATALOG_DB, [_CREATE, *_COLUMNS], what=f"table {TABLE}")


def round_cap(tx: Con) -> int:
    """How many traces one round of this instance claims at most."""
    try:
        rows = tx.execute(sql(AREA, "round_cap")).fetchall()
    except duckdb.Error:
        return MAX_TRACES
    return int(rows[0][0]) if rows else MAX_TRACES


def me(tx: Con) -> tuple[str, float] | None:
    """This instance's holder and claim length; None on an instance that claims nothing (read-only)."""
    try:
        rows = tx.execute(sql(AREA, "claimer")).fetchall()
    except duckdb.CatalogException:
        return None
    return (str(rows[0][0]), float(rows[0][1])) if rows else None


def _execute(tx: Con, text: str) -> None:
    """Run ``text`` (PostgreSQL) in the catalog database."""
    tx.execute(sql(AREA, "catalog_execute"), {"sql": text})


def _query(tx: Con, text: str) -> list[tuple[object, ...]]:
    """The rows of ``text`` (PostgreSQL) in the catalog database."""
    return [tuple(r) for r in tx.execute(sql(AREA, "catalog_query"), {"sql": text}).fetchall()]


def claim(tx: Con, kind: str, trace_ids: Iterable[str]) -> list[str]:
    """Claim these traces for ``kind`` of work; returns those this holder holds now (in the order
    given). A failed claim (the catalog away, a lock timeout) claims nothing: the next round tries."""
    ids = list(dict.fromkeys(trace_ids))
    mine = me(tx)
    if not ids or mine is None:
        return ids if mine is None else []
    holder, seconds = mine
    token = uuid.uuid4().hex
    until = f"now() + make_interval(secs => {seconds!r})"
    try:
        _execute(
            tx,
            f"INSERT INTO {TABLE} AS c (kind, trace_id, holder, token, expires_at, claimed_at) "
            f"SELECT {pg_literal(kind)}, t, {pg_literal(holder)}, {pg_literal(token)}, {until}, now() "
            f"FROM unnest({_array(sorted(ids))}) AS t ORDER BY t "
            "ON CONFLICT (kind, trace_id) DO UPDATE SET holder = excluded.holder, token = excluded.token, "
            "expires_at = excluded.expires_at, "
            "claimed_at = CASE WHEN c.holder = excluded.holder THEN c.claimed_at ELSE now() END, "
            "taken_from = CASE WHEN c.holder = excluded.holder THEN c.taken_from ELSE c.holder END "
            f"WHERE c.holder = excluded.holder OR {free_sql('c')}",
        )
        rows = _query(tx, f"SELECT trace_id, taken_from FROM {TABLE} WHERE token = {pg_literal(token)}")
    except duckdb.Error as exc:
        log.warning("claiming %d traces to %s failed (next round tries again): %s", len(ids), kind, exc)
        return []
    got = {str(r[0]) for r in rows}
    taken: dict[str, int] = {}
    for _, source in rows:
        if source is not None and str(source) != holder:
            taken[str(source)] = taken.get(str(source), 0) + 1
    for source, n in taken.items():
        log.info("took over %d %s claims of %s (gone, or past their expiry)", n, kind, source)
    return [t for t in ids if t in got]


def release(tx: Con, kind: str, trace_ids: Iterable[str]) -> None:
    """Give up this holder's claims of these traces (their work is committed). A failed release
    leaves the claims to expire."""
    ids = list(dict.fromkeys(trace_ids))
    mine = me(tx)
    if not ids or mine is None:
        return
    try:
        _execute(
            tx,
            f"DELETE FROM {TABLE} WHERE kind = {pg_literal(kind)} AND holder = {pg_literal(mine[0])} "
            f"AND trace_id = ANY({_array(ids)})",
        )
    except duckdb.Error as exc:
        log.warning("releasing %d claims (%s) failed; they expire: %s", len(ids), kind, exc)


def held_by_others(tx: Con, kind: str) -> list[str]:
    """The traces other holders hold for ``kind`` now (unexpired)."""
    mine = me(tx)
    if mine is None:
        return []
    rows = _query(
        tx,
        f"SELECT trace_id FROM {TABLE} c WHERE kind = {pg_literal(kind)} AND holder <> {pg_literal(mine[0])} "
        f"AND NOT {free_sql('c')}",
    )
    return [str(r[0]) for r in rows]


def holders(tx: Con, kind: str) -> dict[str, str]:
    """trace id -> holder of every claim of ``kind`` held now (unexpired, its holder not gone; for
    tests and the status of a lake)."""
    rows = _query(
        tx, f"SELECT trace_id, holder FROM {TABLE} c WHERE kind = {pg_literal(kind)} AND NOT {free_sql('c')}"
    )
    return {str(t): str(h) for t, h in rows}


def freed(tx: Con) -> set[tuple[str, str, str]]:
    """(kind, trace id, holder) of the claims of other holders that are free now (expired, or their
    holder gone) and not taken again: work a round skipped that it may do now. A failed read is
    none."""
    mine = me(tx)
    if mine is None:
        return set()
    try:
        rows = _query(
            tx,
            f"SELECT kind, trace_id, holder FROM {TABLE} c WHERE holder <> {pg_literal(mine[0])} AND {free_sql('c')}",
        )
    except duckdb.Error as exc:
        log.warning("reading the freed claims failed: %s", exc)
        return set()
    return {(str(k), str(t), str(h)) for k, t, h in rows}


def view_sql() -> str:
    """The lake's ``trace_claims`` (the bundled view is an empty one on a single file): every claim
    row, its times as naive UTC like the lake's other times, its holder's state and whether it still
    keeps others out. Read through ``postgres_query`` on the catalog database every writing or
    read-only lake instance attaches as ``CATALOG_DB``."""
    inner = (
        "SELECT c.kind, c.trace_id, c.holder, c.claimed_at AT TIME ZONE 'UTC' AS claimed_at, "
        "c.expires_at AT TIME ZONE 'UTC' AS expires_at, "
        f"coalesce({state_sql('c.holder')}, 'unknown') AS holder_state, NOT {free_sql('c')} AS held, "
        f"c.taken_from FROM {TABLE} c"
    )
    text = inner.replace("'", "''")
    return (
        "SELECT kind, trace_id, holder, claimed_at, expires_at, holder_state, held, taken_from "
        f"FROM postgres_query('{CATALOG_DB}', '{text}')"
    )


def claims_of(tx: Con, trace_ids: Iterable[str]) -> list[dict[str, object]]:
    """The claims on these traces, as ``trace_claims`` shows them (held ones first): who holds each,
    since and until when (naive UTC), whether that holder is ``alive``, ``gone`` or ``unknown`` (no
    presence: judged by expiry alone), whether it still keeps others out, and whom it was taken over
    from. Empty on a single file (one process, no claims), and when the catalog cannot be read."""
    ids = list(dict.fromkeys(trace_ids))
    if not ids:
        return []
    try:
        cur = tx.execute(sql(AREA, "trace_claims"), {"t": ids})
        columns = [d[0] for d in cur.description or ()]
        return [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
    except duckdb.Error as exc:
        log.warning("reading the claims of %d traces failed: %s", len(ids), exc)
        return []
