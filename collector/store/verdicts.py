"""Verdicts: the traces a batch is evaluated from, the write of its verdicts (earlier ones move to
history: generations), the cheap tier's queue (waiting traces, backlog, re-queueing) and ``eval_log``.

The evaluators call these operations with the opaque ``Tx`` (a writer job's connection or a reader's cursor)
and Arrow tables; the statements are ``sql/verdicts/*.sql``. Arrow tables are registered on the
connection here and only for the statement that reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from collector.model import VERDICT
from collector.store.backend import is_lake
from collector.store.base import Con, QueryFn, arrow_rows, operation
from collector.store.file import facts
from collector.store.lake import work as lake_work
from collector.store.reader import Window, received_window, traces_in_range, window_params
from collector.store.sqlfiles import sql
from collector.store.tx import transaction

EVAL_COLUMNS = VERDICT.names
"""The columns of ``evaluations`` a batch writes, in the order ``insert_verdicts`` takes them."""


@contextmanager
def registered(con: Con, tables: Mapping[str, pa.Table]) -> Iterator[None]:
    """Arrow tables visible to the statements run inside, under these names (unregistered after)."""
    done = []
    try:
        for name, table in tables.items():
            con.register(name, table)
            done.append(name)
        yield
    finally:
        for name in done:
            con.unregister(name)


def ids_table(trace_ids: list[str]) -> pa.Table:
    return pa.table({"trace_id": pa.array(trace_ids, pa.string())})


# --- the traces a batch is evaluated from ---------------------------------------------------------


class TraceTables(NamedTuple):
    """The rows of a batch of traces as fetched: traces, steps and step documents (Arrow tables),
    and each trace's root span name (``roots``: trace_id, root_name), which the evaluators
    do not read and the judge tier's sampler does once the batch is written.

    Plain data: it is what a worker process receives to build the views itself."""

    traces: pa.Table
    steps: pa.Table
    docs: pa.Table
    roots: pa.Table | None = None


# a document comes back for each stage it is in (candidate, reranker input and output, context):
# these columns dictionary-encoded, each distinct text travels (to a worker) and becomes a Python
# string once
_DOC_DICT_COLS = ("stage", "doc_id", "chunk_id", "content", "metadata", "source")


@operation
def fetch_traces(con: Con, trace_ids: list[str], hint: Window = None) -> tuple[TraceTables, Window]:
    """The stored rows of these traces (missing ids have none), fetched column-wise, and the range of
    their ``first_received_at`` (writing their verdicts looks them up again: ``write_verdicts``).
    ``hint``: that range as the caller read it with the ids, which limits looking them up
    (``traces_in_range``)."""
    with registered(con, {"_eval_ids": ids_table(trace_ids)}):
        trace_sql = sql("verdicts", "trace_rows")

        def run(params: dict[str, Any]) -> pa.Table:
            return arrow_rows(con, trace_sql, params)

        traces = traces_in_range(
            run, lambda t: t.num_rows, lambda a, b: pa.concat_tables([a, b]), len(set(trace_ids)), hint
        )
        # every step and document of these traces was received between their first and last
        # span: the window lets the scans skip the rest of the tables (see migration 005)
        first = traces.column("first_received_at").to_pylist()
        last = traces.column("last_received_at").to_pylist()
        params = window_params(received_window(list(zip(first, last, strict=True))))
        steps = arrow_rows(con, sql("verdicts", "step_rows"), params)
        docs = arrow_rows(con, sql("verdicts", "document_rows"), params)
        roots = traces.select(["trace_id", "root_name"])
        traces = traces.drop_columns(["first_received_at", "last_received_at", "root_name"])
    for name in _DOC_DICT_COLS:
        i = docs.schema.get_field_index(name)
        docs = docs.set_column(i, name, pc.dictionary_encode(docs.column(i)))
    written: Window = None
    if first and all(f is not None for f in first):
        written = min(first), max(first)
    return TraceTables(traces, steps, docs, roots), written


# --- writing a batch's verdicts -------------------------------------------------------------------


class Earlier(NamedTuple):
    """What the traces of a batch being written already have in ``evaluations``."""

    found: int  # traces of the batch found in ``traces``
    before: int  # of which evaluated before: they may have verdicts to move to history
    unknown: int  # of those, without ``verdicts_since``
    since: datetime | None  # the least ``verdicts_since`` of those evaluated before
    received: datetime | None = None  # the least ``first_received_at`` of those found

    def merge(self, other: Earlier) -> Earlier:
        return Earlier(
            self.found + other.found,
            self.before + other.before,
            self.unknown + other.unknown,
            _least(self.since, other.since),
            _least(self.received, other.received),
        )

    def current_since(self, written: datetime) -> datetime | None:
        """A time none of these traces' current verdicts was written before, when those written now were
        written at ``written``: the least ``verdicts_since`` of the traces evaluated before, else
        ``written`` (None: one of them does not say since when)."""
        if not self.before:
            return written
        bound = self.bound()
        return None if bound is None else min(bound, written)

    def bound(self) -> datetime | None:
        """The bound on ``evaluated_at`` that finds every earlier verdict of these traces (None when
        one of them does not say since when it has verdicts: then every row is read)."""
        return None if self.unknown else self.since


def _least(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def verdicts_since_sql(since: datetime | None) -> tuple[str, dict[str, Any]]:
    """The filter (appended to a WHERE clause on ``evaluations``) and its parameters that keep to
    the rows written since ``since`` (a trace's ``verdicts_since``, migration 007; the start of a
    sampling round): rows are appended in the order they are written, so the scan skips the row
    groups before it. None: no filter. The store's own statements take ``$since`` as a parameter
    (``to_history``, ``drop_current``, ``sampling/flagged``); this is kept for callers that still
    build such a filter."""
    if since is None:
        return "", {}
    return " AND evaluated_at >= $since", {"since": since}


def earlier_verdicts(con: Con, n_done: int, window: Window) -> Earlier:
    """Whether the traces of the batch being written (``_done``) were evaluated before, and since
    when they have verdicts (``traces.verdicts_since``, migration 007).

    Every write of verdicts goes through ``write_verdicts``, which raises the trace's
    ``eval_generation`` in the same transaction as it inserts the rows: a trace whose generation is
    still 0 has no rows in ``evaluations``. Moving earlier verdicts to history reads
    ``evaluations`` twice; a batch of traces seen for the first time (the usual case) skips that,
    and a batch evaluated before reads only the rows written since its traces' earliest verdict.
    Read inside the write transaction, so a batch written meanwhile is seen. The traces are looked
    up within ``window`` (``traces_in_range``)."""
    text = sql("verdicts", "earlier")

    def run(params: dict[str, Any]) -> Earlier:
        found, before, unknown, since, received = con.execute(text, params).fetchall()[0]
        return Earlier(int(found), int(before), int(unknown), since, received)

    found: Earlier = traces_in_range(run, lambda r: r.found, Earlier.merge, n_done, window)
    return found


def _mark_evaluated(con: Con, now: datetime, n_done: int, window: Window, judged: bool) -> None:
    text = sql("verdicts", "mark_evaluated")

    def run(params: dict[str, Any]) -> int:
        return int(con.execute(text, {"now": now, "judged": judged, **params}).fetchall()[0][0])

    traces_in_range(run, lambda n: n, lambda a, b: a + b, n_done, window)


@operation
def write_verdicts(
    con: Con,
    evals: pa.Table,
    log: pa.Table,
    ran: pa.Table,
    done: pa.Table,
    now: datetime,
    window: Window = None,
) -> None:
    """The write of one evaluated batch, in one transaction: earlier verdicts of the (trace,
    evaluator) pairs that ran (``ran``) move to ``evaluation_history`` (only looked for when a trace
    of the batch was evaluated before, and only among the rows written since), the new ones
    (``evals``, columns ``EVAL_COLUMNS``) go to ``evaluations``, decisions to ``eval_log``, and the
    generation of each trace of ``done`` goes up by one; a cheap-tier batch also takes the traces off
    the cheap tier's queue, a judge-tier one leaves it as it is. ``window``: the range of the traces'
    ``first_received_at`` as fetched (``fetch_traces``), which limits looking them up."""
    if is_lake(con):
        lake_work.write_verdicts(con, evals, log, done, now)
        return
    n_done = done.num_rows
    with registered(con, {"_evals": evals, "_elog": log, "_ran": ran, "_done": done}), transaction(con):
        earlier = earlier_verdicts(con, n_done, window)
        if earlier.before:
            since = {"since": earlier.bound()}
            con.execute(sql("verdicts", "to_history"), since)
            con.execute(sql("verdicts", "drop_current"), since)
        con.execute(sql("verdicts", "insert_verdicts"))
        con.execute(sql("verdicts", "insert_log"))
        _mark_evaluated(con, now, n_done, window, lake_work.judge_batch(evals))
        facts.changed(con, _facts_since(earlier, evals, now), earlier.received, now)


def _facts_since(earlier: Earlier, evals: pa.Table, now: datetime) -> datetime | None:
    """``earlier.current_since`` of a batch whose new verdicts (``evals``) were written at ``now``, or at
    their own ``evaluated_at`` if earlier."""
    least = pc.min(evals.column("evaluated_at")).as_py() if evals.num_rows else None
    return earlier.current_since(now if least is None else min(now, least))


@operation
def write_log(con: Con, log: pa.Table, done: Mapping[str, int] | None = None) -> None:
    """``eval_log`` rows and (optionally) the span count the cheap tier loaded for each trace of
    ``done`` (a span that settled meanwhile re-queues the trace), in one transaction."""
    if is_lake(con):
        return lake_work.write_log(con, log, _spans_done(done) if done else None)
    tables = {"_elog": log}
    if done:
        tables["_sdone"] = _spans_done(done)
    with registered(con, tables), transaction(con):
        con.execute(sql("verdicts", "insert_log"))
        if done:
            con.execute(sql("verdicts", "evaluated_spans"))


def _spans_done(done: Mapping[str, int]) -> pa.Table:
    return pa.table(
        {"trace_id": pa.array(list(done), pa.string()), "n": pa.array(list(done.values()), pa.int64())}
    )


# --- the cheap tier's queue -----------------------------------------------------------------------


def pending(con: Con, n: int) -> list[tuple[str, int, datetime | None]]:
    """The oldest ``n`` settled traces waiting for the cheap tier, with the span count each was
    assembled with and the time its first span was received. On a lake, those no other collector
    holds, claimed by this one (``lake.work.pending``)."""
    if is_lake(con):
        return lake_work.pending(con, n)
    rows = con.execute(sql("verdicts", "pending"), {"n": n}).fetchall()
    return [(r[0], int(r[1] or 0), r[2]) for r in rows]


@operation
def backlog(con: Con) -> tuple[int, datetime | None]:
    """How many settled traces wait for the cheap tier, and the settle time of the oldest."""
    rows = con.execute(sql("verdicts", "backlog")).fetchall()
    return (int(rows[0][0]), rows[0][1]) if rows else (0, None)


def requeue(con: Con, trace_ids: list[str]) -> list[str]:
    """Mark these settled traces waiting for the cheap tier again; the ids marked."""
    if not trace_ids:
        return []
    if is_lake(con):
        return lake_work.requeue(con, trace_ids)
    return [r[0] for r in con.execute(sql("verdicts", "requeue"), {"t": trace_ids}).fetchall()]


@operation
def settled_received(
    con: Con, run_id: str | None, since: datetime | None, until: datetime | None, limit: int
) -> dict[str, datetime | None]:
    """The settled traces matching the filters, oldest first, each with its ``first_received_at``."""
    rows = con.execute(
        sql("verdicts", "settled_received"),
        {"run_id": run_id, "since": since, "until": until, "limit": limit},
    ).fetchall()
    return dict(rows)


def settled_ids(run: QueryFn, run_id: str | None, since: str | None, until: str | None) -> list[str]:
    """The settled traces to evaluate again, oldest received first, read through the query interface
    (``ragfault evaluate`` against a server: the bounds travel as ISO text)."""
    params = {"run_id": run_id, "since": since, "until": until}
    return [str(r[0]) for r in run(sql("verdicts", "settled_ids"), params)["rows"]]


def progress(run: QueryFn) -> tuple[int, int]:
    """(traces evaluated, traces stored): what a caller that sent traces waits on, through a cursor
    or the server's SQL API alike."""
    row = run(sql("verdicts", "progress"), {})["rows"][0]
    return int(row[0]), int(row[1])


def judge_spend(con: Con) -> tuple[float, float] | None:
    """Judge calls recorded and their cost in USD; None when this database has no judge tables."""
    try:
        rows = con.execute(sql("verdicts", "judge_spend")).fetchall()
    except duckdb.Error:
        return None
    return (float(rows[0][0]), float(rows[0][1])) if rows else None
