"""The DuckDB store: one file, one writing connection, sandboxed read cursors.

DuckDB allows one writing process per file, and within the process one database instance whose
settings are global. The instance is opened once, migrated, then sandboxed for every later
statement: no file or network access, no extension loading, configuration locked. Ingest tables are
appended as Arrow; span identity is (trace_id, span_id), and a re-sent span is ignored.
"""

from __future__ import annotations

import errno
import functools
import os
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from collector.batch import DOC_COLUMNS, SPAN_COLUMNS, STEP_COLUMNS, ArrowBatch, SpanBatch
from collector.errors import ConfigError, StoreUnavailable
from collector.normalize.genai_events import CONTENT_EVENTS
from collector.signals import LOG_COLUMNS, POINT_COLUMNS
from collector.store.backend import opened
from collector.store.base import Faults, instance_config, operation
from collector.store.content import ContentSources, admitted_events
from collector.store.schema import (
    DOC_SCHEMA,
    SPAN_SCHEMA,
    STEP_SCHEMA,
    SUMMARY_COLUMNS,
    TRACE_SCHEMA,
    batch_to_arrow,
    migrate,
    trace_summary,
)
from collector.store.tx import rollback, transaction

_SPAN_COLS = ", ".join(SPAN_COLUMNS)
_STEP_COLS = ", ".join(STEP_COLUMNS)
_DOC_COLS = ", ".join(DOC_COLUMNS)
_DOC_KEY = ", ".join(c for c in DOC_COLUMNS if c != "received_at")
_LOG_COLS = ", ".join(LOG_COLUMNS)
_POINT_COLS = ", ".join(POINT_COLUMNS)

_TRACE_COLS = (
    "trace_id, first_received_at, last_received_at, span_count, error_count, has_root, root_span_id, "
    "root_name, start_time, end_time, service_name, case_id, run_id, session_id, user_id"
)

# The ``traces`` row of each trace of a batch, from the per-request summaries of ``_in_traces``
# (``schema.trace_summary``): a commit merges several requests, and one trace may be in more than
# one of them.
_TRACES_FROM_SUMMARIES = """
SELECT trace_id, min(first_received_at), max(last_received_at), sum(span_count), sum(error_count),
       bool_or(has_root), any_value(root_span_id), any_value(root_name), min(start_time), max(end_time),
       coalesce(any_value(root_service), any_value(service_name)), any_value(case_id), any_value(run_id),
       any_value(session_id), any_value(user_id)
FROM _in_traces GROUP BY trace_id
"""

_TRACE_MERGE = """
ON CONFLICT (trace_id) DO UPDATE SET
    first_received_at = least(traces.first_received_at, excluded.first_received_at),
    last_received_at = greatest(traces.last_received_at, excluded.last_received_at),
    span_count       = traces.span_count + excluded.span_count,
    error_count      = traces.error_count + excluded.error_count,
    has_root         = traces.has_root OR excluded.has_root,
    root_span_id     = coalesce(traces.root_span_id, excluded.root_span_id),
    root_name        = coalesce(traces.root_name, excluded.root_name),
    start_time       = least(traces.start_time, excluded.start_time),
    end_time         = greatest(traces.end_time, excluded.end_time),
    service_name     = coalesce(traces.service_name, excluded.service_name),
    case_id          = coalesce(traces.case_id, excluded.case_id),
    run_id           = coalesce(traces.run_id, excluded.run_id),
    session_id       = coalesce(traces.session_id, excluded.session_id),
    user_id          = coalesce(traces.user_id, excluded.user_id)
"""

# ... and when each trace has one summary row (a commit of one request), the rows as they are: the
# aggregate's hash table costs more than the rest of the statement (about 2 ms a commit)
_TRACES_AS_SUMMED = """
SELECT trace_id, first_received_at, last_received_at, span_count, error_count, has_root, root_span_id,
       root_name, start_time, end_time, coalesce(root_service, service_name), case_id, run_id, session_id,
       user_id
FROM _in_traces
"""

_INSERT_TRACES = f"INSERT INTO traces ({_TRACE_COLS})"
_SUMMARY_COLS = ", ".join(SUMMARY_COLUMNS)
# ``ON CONFLICT`` costs about 6 ms a commit even when nothing conflicts (and a plain INSERT of the
# same rows about 2), so traces not seen before are inserted plainly.
_MERGE_TRACES = _INSERT_TRACES + _TRACES_FROM_SUMMARIES + _TRACE_MERGE


def _traces_sql(*, new: bool, once: bool) -> str:
    """The ``traces`` statement of a commit: its traces all new or not, each in one summary row or not."""
    return (
        _INSERT_TRACES
        + (_TRACES_AS_SUMMED if once else _TRACES_FROM_SUMMARIES)
        + ("" if new else _TRACE_MERGE)
    )


# Every span of the batch is new (raises ConstraintException when one is not). No temporary view:
# DDL inside the ingest transaction costs a catalog change per commit.
_APPEND_SPANS = f"INSERT INTO spans ({_SPAN_COLS}) SELECT {_SPAN_COLS} FROM _in_spans"
_APPEND_STEPS = f"INSERT INTO steps ({_STEP_COLS}) SELECT {_STEP_COLS} FROM _in_steps"
_APPEND_DOCS = f"INSERT INTO step_documents ({_DOC_COLS}) SELECT {_DOC_COLS} FROM _in_docs"


def _append(docs: bool, traces: str) -> str:
    statements = [_APPEND_SPANS, _APPEND_STEPS, *([_APPEND_DOCS] if docs else []), traces]
    return ";\n".join(["BEGIN TRANSACTION", *statements, "COMMIT"])


# (batch has documents, every trace is new, each trace in one summary row) -> the whole transaction
# as one call
_APPEND = {
    (d, new, once): _append(d, _traces_sql(new=new, once=once))
    for d in (False, True)
    for new in (False, True)
    for once in (False, True)
}

WAL_HARD_LIMIT = "1GB"
CONFLICT_RETRIES = 6  # a batch that keeps conflicting with concurrent writers fails retryably (503)
# WAL size worth a checkpoint once the writer has nothing to do. Each checkpoint writes what it
# changed into blocks of its own, so the same rows take more disk the more often one runs: the
# bench's traces appended 256 at a time with a checkpoint after each took 7,552 B a trace, 1,024 at
# a time 6,208, 4,096 at a time 5,984 (bench/checkpoint_growth.py --rounds). At 16 MiB (about 240
# of those traces) an application sending a request every few seconds met one checkpoint every
# other request; 64 MiB is a quarter of BUSY_CHECKPOINT_BYTES, so neither the WAL's memory nor its
# replay after a crash grows past what steady ingest already allows (bench/README.md, 2026-12-04)
IDLE_CHECKPOINT_BYTES = 64 << 20
# ... and while it runs only jobs (an evaluation backlog, no ingest): every checkpoint rewrites the
# row groups being filled, so checkpointing every 16 MB there cost a 10,000-trace evaluation drain
# about a tenth of its throughput (and a third of the server process's CPU a trace)
JOBS_CHECKPOINT_BYTES = 256 << 20
# ... and under steady ingest, which never pauses for an idle checkpoint: DuckDB holds the WAL's data
# in memory until a checkpoint (the server process reached 2.1 GB with 790 MB in the WAL at 400
# traces a second), and its own checkpoint at WAL_HARD_LIMIT runs inside a commit. Smaller costs CPU
# for the same reason as above: at 400 a second, 64 MB took a third more CPU a trace and held
# acknowledgements up to 6 s; 256 MB peaked at 1.3 GB, its CPU within the runs' spread
BUSY_CHECKPOINT_BYTES = 256 << 20
# Rows a row group of the file's tables holds (DuckDB's default is 122,880). The checkpoint that
# completes a row group compresses all of it: with 122,880 rows of spans (about 30,000 four-span
# traces of attributes JSON) that one checkpoint held every write for 8-15 s on two cores, and the
# checkpoints before it rewrote ever more of the group being filled. At 16,384 the one that
# completes a group costs about a second, and the checkpoints of the same appends cost 8.7 s in all
# against 14.0; the bench's file takes a fifth more bytes a trace (dictionaries are kept per smaller
# segment), 0.30 of the raw OTLP against 0.25 (bench/README.md, 2026-12-04). On a store of 300,000
# traces, commits of 128 traces: the longest of 16 checkpoints 1.3 s against 27.6 (32,768: 2.5 s,
# 7 % less disk than this size), and the bundled queries take the same time. DuckDB takes the size
# as an option of ATTACH, not of the file: every open of the store must give it (``_connect``), and
# a checkpoint by a process that did not merges the groups back.
ROW_GROUP_ROWS = 16_384
KNOWN_TRACES = 100_000  # trace ids the writer remembers, per generation (two generations)


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "No space left on device" in str(exc)


def is_invalidated(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.FatalException) or "database has been invalidated" in str(exc)


def _full_message(path: str, exc: BaseException) -> str:
    if disk_full(exc):
        return f"cannot write database {path}: no space left on device; free space and start again"
    return f"cannot open database {path}: {str(exc).splitlines()[0]}"


@functools.cache
def has_operator_memory_limit() -> bool:
    """Whether this DuckDB bounds one query's operators (``operator_memory_limit``, DuckDB 2.x; the
    1.5 series that the DuckLake extensions are built for has no such setting)."""
    with duckdb.connect() as con:
        row = con.execute(
            "SELECT count(*) FROM duckdb_settings() WHERE name = 'operator_memory_limit'"
        ).fetchone()
    return bool(row and row[0])


def limit_operator_memory(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    """Bound the sorts, joins and aggregates of the next queries on ``con`` (they spill past it);
    without the setting (DuckDB 1.5) the instance's ``memory_limit`` is the only bound."""
    if has_operator_memory_limit():
        con.execute(f"SET operator_memory_limit = '{limit}'")


def sandbox(con: duckdb.DuckDBPyConnection) -> None:
    """Lock the instance down: after this no statement can touch files, the network or settings."""
    con.execute("SET enable_external_access = false")
    if has_operator_memory_limit():
        # the settings a connection may still change: the SQL API bounds each user query's memory,
        # and keeps DuckDB to the calling threads while user queries run (``collector.api``)
        con.execute("SET allowed_configs = ['operator_memory_limit', 'threads']")
    con.execute("SET lock_configuration = true")


class _Table:
    """A registered Arrow source whose table is swapped between commits: DuckDB reads whatever
    table it holds when a statement runs, so the view is registered once per connection."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.empty: pa.Table = schema.empty_table()
        self.table = self.empty

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


class _Inputs:
    """The ``_in_spans``, ``_in_steps``, ``_in_docs`` and ``_in_traces`` views of one writing
    connection."""

    def __init__(self) -> None:
        self.spans, self.steps, self.docs = _Table(SPAN_SCHEMA), _Table(STEP_SCHEMA), _Table(DOC_SCHEMA)
        self.traces = _Table(TRACE_SCHEMA)

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        con.register("_in_spans", self.spans)
        con.register("_in_steps", self.steps)
        con.register("_in_docs", self.docs)
        con.register("_in_traces", self.traces)

    def set(self, batch: ArrowBatch) -> None:
        self.spans.table, self.steps.table, self.docs.table = batch.spans, batch.steps, batch.docs
        self.traces.table = batch.trace_table()

    def clear(self) -> None:
        """Release the batch (the views stay registered, reading nothing)."""
        for t in (self.spans, self.steps, self.docs, self.traces):
            t.table = t.empty


class _KnownTraces:
    """Trace ids this process stored lately, so a batch of new traces is inserted without
    ``ON CONFLICT``.

    Two generations of at most ``size`` ids each: memory stays bounded, and a trace still being
    exported when its id ages out just takes the slower path. Being wrong either way is safe: a
    trace thought known is merged (which also inserts it), and one thought new that is stored
    already makes the plain insert fail, and the batch is written again through the path that
    deduplicates and merges."""

    def __init__(self, size: int = KNOWN_TRACES) -> None:
        self.size = size
        self._new: set[str] = set()
        self._old: set[str] = set()

    def any_known(self, ids: list[str]) -> bool:
        return not (self._new.isdisjoint(ids) and self._old.isdisjoint(ids))

    def add(self, ids: list[str]) -> None:
        self._new.update(ids)
        if len(self._new) >= self.size:
            self._old, self._new = self._new, set()


@operation
def sibling(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new connection to ``con``'s instance, in the database ``con`` uses (a DuckDB cursor starts in
    the instance's first database, not in the one a ``USE`` chose)."""
    row = con.execute("SELECT current_database()").fetchone()
    cur = con.cursor()
    if row is not None:
        cur.execute(f'USE "{row[0]}"')
    return cur


def _connect(
    path: str, read_only: bool, config: dict[str, Any]
) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """A connection whose default database is the store's file, attached with ``ROW_GROUP_ROWS``
    rows a row group, and that database's name (named after the file, as ``duckdb.connect(path)``
    names it), which every cursor must ``USE``; None in memory, where the default is the store."""
    if path == ":memory:":
        return duckdb.connect(path, config=config), None
    con = duckdb.connect(":memory:", config=config)
    # TYPE DUCKDB: without it a name DuckDB reads as another format's ("notes.jsonl") was attached
    # as an empty in-memory database instead of being refused as not a DuckDB file
    options = "TYPE DUCKDB, " + ("READ_ONLY, " if read_only else "") + f"ROW_GROUP_SIZE {ROW_GROUP_ROWS}"
    if not read_only and not os.path.exists(path):
        # a new file in the newest storage format this DuckDB writes: DuckDB 1.x makes v1.0.0 files by
        # default, which keep every string over a few KB whole, so a resource of 10 KB cost 9.7 KB on
        # every span of it (bench/resource_copies.py); later formats compress those repeats to ~0. A
        # file already there keeps its format (schema.zstd_columns reads it)
        options += ", STORAGE_VERSION 'latest'"
    quoted = path.replace("'", "''")
    try:
        try:
            con.execute(f"ATTACH '{quoted}' ({options})")
        except duckdb.BinderException:  # the file is named like a database DuckDB has ("memory.duckdb")
            con.execute(f"ATTACH '{quoted}' AS store ({options})")
        row = con.execute(
            "SELECT database_name FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL"
        ).fetchone()
        if row is None:
            raise ConfigError(f"cannot open database {path}: it was not attached as a file")
        con.execute(f'USE "{row[0]}"')
    except BaseException:
        con.close()
        raise
    return con, row[0]


class Store(Faults):
    """A DuckDB file opened by this process. ``read_only`` opens for the CLI when no server runs."""

    def __init__(
        self,
        path: str | Path,
        *,
        read_only: bool = False,
        memory_limit: str | None = None,
        threads: int | None = None,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        # whose GenAI content events re-open a settled trace (the server sets its own, with a counter)
        self.content_sources = ContentSources()
        config = instance_config(memory_limit, threads)
        if not read_only:
            # A checkpoint rewrites (and compresses) everything in the WAL and costs about as much as
            # the inserts themselves. The writer checkpoints when ingest pauses (``checkpoint_if_idle``);
            # this threshold is only the hard cap under sustained load. The WAL is replayed after a crash.
            config["checkpoint_threshold"] = WAL_HARD_LIMIT
        if self.path != ":memory:" and not read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # why the store cannot write now (a full disk), or None; ``fatal`` once DuckDB invalidated
        # the database after a failed write (only a new process can open it again)
        Faults.__init__(self)
        try:
            self.con, self._database = _connect(self.path, read_only, config)
        except duckdb.IOException as exc:
            if disk_full(exc):
                raise StoreUnavailable(_full_message(self.path, exc)) from exc
            if "not a valid DuckDB database file" in str(exc):
                raise ConfigError(
                    f"cannot open database {self.path}: it is not a DuckDB database file"
                ) from exc
            raise ConfigError(f"cannot open database {self.path}: {exc}") from exc
        except (duckdb.CatalogException, duckdb.BinderException, duckdb.InvalidInputException) as exc:
            raise ConfigError(f"cannot open database {self.path}: {str(exc).splitlines()[0]}") from exc
        try:
            if not read_only:
                migrate(self.con)
                pa.array(["warm-up"], type=pa.string())  # pyarrow's first conversion loads lazily (~0.4 s)
                from collector.store.views import create_views

                create_views(self.con)
            sandbox(self.con)
        except duckdb.Error as exc:
            self.con.close()
            if disk_full(exc) or is_invalidated(exc):
                raise StoreUnavailable(_full_message(self.path, exc)) from exc
            raise
        opened(self.con, lake=False)  # (operations ask ``backend.is_lake``: no query each time)
        self._lock = threading.Lock()
        self._registered: dict[int, tuple[duckdb.DuckDBPyConnection, _Inputs]] = {}
        self._known: _KnownTraces | None = None

    def note_failure(self, exc: BaseException) -> None:
        """A write or checkpoint failed: remember why when the disk is full, and tell ``on_fatal``
        once DuckDB has invalidated the database."""
        if is_invalidated(exc):
            self._fail(
                "the database was invalidated by a failed write (is the disk full?); the server must restart",
                fatal=True,
            )
        elif disk_full(exc):
            self._fail(f"cannot write {self.path}: no space left on device")

    def wal_bytes(self) -> int:
        try:
            return os.path.getsize(self.path + ".wal")
        except OSError:
            return 0

    def checkpoint_if_idle(
        self, con: duckdb.DuckDBPyConnection, min_bytes: int = IDLE_CHECKPOINT_BYTES
    ) -> bool:
        """Checkpoint when the WAL holds at least ``min_bytes`` (writer thread, no ingest waiting)."""
        if self.read_only or self.path == ":memory:" or self.wal_bytes() < min_bytes:
            return False
        con.execute("CHECKPOINT")
        return True

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the same instance (for a reader thread), in the store's database."""
        cur = self.con.cursor()
        if self._database is not None:
            cur.execute(f'USE "{self._database}"')
        return opened(cur, lake=False)

    def close(self) -> None:
        try:
            if not self.read_only:
                self.con.execute("CHECKPOINT")
        except duckdb.Error:
            pass
        self.con.close()

    # --- writes: called only from the writer thread -------------------------------------------

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int:
        """Append a batch in one transaction; returns how many spans were new (re-sent ones are ignored).

        Spans are almost always new, so the batch is first inserted as it is: a plain ``INSERT``
        costs about half of an ``INSERT OR IGNORE`` here. A span that is already stored (a re-sent
        request) or twice in the batch violates the primary key; the transaction is then rolled
        back and the batch written again, keeping only the spans that are new. Likewise the batch's
        traces are inserted plainly when none of them was written lately (``_KnownTraces``), and
        merged into their stored rows otherwise.

        Several writer connections may commit at once. Two transactions that touch the same trace
        row, or insert the same span, conflict: the one that loses is rolled back and written again
        (deduplicating) after a short pause.
        """
        if not len(batch):
            return 0
        if isinstance(batch, SpanBatch):
            batch = batch_to_arrow(batch)
        inputs = self._inputs(con)
        inputs.set(batch)
        known = self._known_traces(con)
        trace_ids: list[str] = batch.trace_table().column("trace_id").to_pylist()
        once = len(set(trace_ids)) == len(trace_ids)  # a request's summary has one row a trace
        try:
            dedup = False
            for attempt in range(CONFLICT_RETRIES + 1):
                try:
                    new_traces = not known.any_known(trace_ids)
                    written = self._write_once(con, inputs, batch, dedup, new_traces=new_traces, once=once)
                    known.add(trace_ids)
                    return written
                except duckdb.TransactionException:
                    rollback(con)
                    if attempt == CONFLICT_RETRIES:
                        raise
                    dedup = True  # the other transaction may have stored some of these spans
                    time.sleep(0.002 * (2**attempt))
            raise AssertionError("unreachable")
        finally:
            inputs.clear()
            try:
                con.unregister("_new")
            except duckdb.Error:
                pass

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]:
        """Append a batch's log records and metric data points in one transaction; returns how many
        of each were new (a re-sent record has the same id and is ignored).

        New GenAI content events count towards their trace's ``content_events`` and bump its
        ``last_received_at``, so a trace that settled before its content arrived settles again; for
        a settled trace only those its span may take (``content.admitted_events``: a record from
        another service than the span's is refused, and counted once the batch is committed)."""
        logs = batch.logs if batch.logs is not None and batch.logs.num_rows else None
        points = batch.points if batch.points is not None and batch.points.num_rows else None
        if logs is None and points is None:
            return 0, 0
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                with transaction(con):
                    n_logs, n_points, refused = self._append_signals(con, logs, points, self.content_sources)
                self.content_sources.count_refused(refused)
                return n_logs, n_points
            except duckdb.TransactionException:
                if attempt == CONFLICT_RETRIES:
                    raise
                time.sleep(0.002 * (2**attempt))
        raise AssertionError("unreachable")

    @staticmethod
    def _append_signals(
        con: duckdb.DuckDBPyConnection,
        logs: pa.Table | None,
        points: pa.Table | None,
        sources: ContentSources,
    ) -> tuple[int, int, int]:
        """The inserts of ``write_signals`` (inside its transaction): new log records, new points, and
        how many new content events were refused."""
        n_logs = n_points = refused = 0
        if logs is not None:
            con.register("_in_logs", logs)
            try:
                new = con.execute(
                    f"INSERT OR IGNORE INTO log_records ({_LOG_COLS}) SELECT DISTINCT ON (record_id) {_LOG_COLS} "
                    "FROM _in_logs RETURNING trace_id, event_name, received_at, span_id, service_name"
                ).fetchall()
            finally:
                con.unregister("_in_logs")
            n_logs = len(new)
            found = [(r[0], r[3], r[4]) for r in new if r[0] and r[1] in CONTENT_EVENTS]
            counts, refused = admitted_events(con, found, sources) if found else ({}, 0)
            events = pa.table({
                "trace_id": pa.array(list(counts), pa.string()),
                "n": pa.array(list(counts.values()), pa.int64()),
            })  # fmt: skip
            if events.num_rows:
                now = max(r[2] for r in new)
                con.register("_in_events", events)
                try:
                    con.execute(
                        "UPDATE traces SET content_events = coalesce(traces.content_events, 0) + e.n, "
                        "last_received_at = greatest(traces.last_received_at, $now) "
                        "FROM _in_events e WHERE traces.trace_id = e.trace_id",
                        {"now": now},
                    )
                finally:
                    con.unregister("_in_events")
        if points is not None:
            con.register("_in_points", points)
            try:
                n_points = len(
                    con.execute(
                        f"INSERT OR IGNORE INTO metric_points ({_POINT_COLS}) "
                        f"SELECT DISTINCT ON (point_id) {_POINT_COLS} FROM _in_points RETURNING point_id"
                    ).fetchall()
                )
            finally:
                con.unregister("_in_points")
        return n_logs, n_points, refused

    def _inputs(self, con: duckdb.DuckDBPyConnection) -> _Inputs:
        """The ``_in_*`` views of this connection, registered once (registering costs ~1 ms a table)."""
        key = id(con)
        with self._lock:
            found = self._registered.get(key)
            if found is not None and found[0] is con:
                return found[1]
            if len(self._registered) >= 64:  # connections come and go in tests and CLI commands
                self._registered.clear()
            inputs = _Inputs()
            inputs.register(con)
            self._registered[key] = (con, inputs)  # holding ``con`` keeps its id from being reused
            return inputs

    def _known_traces(self, con: duckdb.DuckDBPyConnection) -> _KnownTraces:
        """The trace ids written lately; at the first write, those of the traces received last."""
        with self._lock:
            known = self._known
            if known is None:
                known = self._known = _KnownTraces()
                rows = con.execute(
                    "SELECT trace_id FROM traces ORDER BY last_received_at DESC NULLS LAST LIMIT ?",
                    [known.size],
                ).fetchall()
                known.add([r[0] for r in rows])
            return known

    def _write_once(
        self,
        con: duckdb.DuckDBPyConnection,
        inputs: _Inputs,
        batch: ArrowBatch,
        dedup: bool,
        *,
        new_traces: bool,
        once: bool,
    ) -> int:
        if not dedup:
            try:
                # one call for the whole transaction: the GIL is released once, not per statement
                con.execute(_APPEND[bool(batch.docs.num_rows), new_traces, once])
                return len(batch)
            except duckdb.ConstraintException:
                rollback(con)
            except BaseException:
                rollback(con)
                raise
        with transaction(con):
            return self._append_deduplicated(con, inputs, batch)

    @staticmethod
    def _append_deduplicated(con: duckdb.DuckDBPyConnection, inputs: _Inputs, batch: ArrowBatch) -> int:
        """Some spans are stored already (or repeated in the batch): write the new ones only."""
        new = con.execute(
            f"INSERT OR IGNORE INTO spans ({_SPAN_COLS}) SELECT {_SPAN_COLS} FROM _in_spans "
            "RETURNING trace_id, span_id"
        ).fetchall()
        if not new:
            return 0
        con.register("_new", pa.table({"trace_id": [r[0] for r in new], "span_id": [r[1] for r in new]}))
        where = " WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)"
        con.execute(f"INSERT OR IGNORE INTO steps ({_STEP_COLS}) SELECT {_STEP_COLS} FROM _in_steps{where}")
        if batch.docs.num_rows:
            # a span repeated inside the batch (a request re-sent while the first was queued) lists
            # its documents twice: rows identical but for the time they were received are kept once
            con.execute(
                f"INSERT INTO step_documents ({_DOC_COLS}) SELECT DISTINCT ON ({_DOC_KEY}) {_DOC_COLS} "
                f"FROM _in_docs{where}"
            )
        # the traces' rows from the new spans only, a span repeated inside the batch counted once
        new_spans = con.sql(f"SELECT DISTINCT ON (trace_id, span_id) {_SUMMARY_COLS} FROM _in_spans{where}")
        inputs.traces.table = trace_summary(new_spans.to_arrow_table())
        con.execute(_MERGE_TRACES)
        return len(new)
