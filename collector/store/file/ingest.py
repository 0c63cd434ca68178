"""The DuckDB file's ingest: a batch of spans (with their steps, documents and its traces' rows) and
a batch of log records and metric data points, each appended in one transaction.

Ingest tables are appended as Arrow (``inputs.Inputs``); span identity is (trace_id, span_id), and a
re-sent span is ignored. The statements are composed once, at import: a commit runs the whole
transaction as one call, so the GIL is released once, not per statement.
"""

from __future__ import annotations

import time

import duckdb
import pyarrow as pa

from collector.ingest.batch import DOC_COLUMNS, SPAN_COLUMNS, STEP_COLUMNS, ArrowBatch, SpanBatch
from collector.normalize.genai_events import CONTENT_EVENTS
from collector.receivers.signals import LOG_COLUMNS, POINT_COLUMNS
from collector.store.content import ContentSources, admitted_events
from collector.store.inputs import CONFLICT_RETRIES, Inputs
from collector.store.schema import SUMMARY_COLUMNS, batch_to_arrow, trace_summary
from collector.store.sqlfiles import sql
from collector.store.templates import filled
from collector.store.tx import rollback, transaction

AREA = "file/ingest"
_SPAN_COLS = ", ".join(SPAN_COLUMNS)
_STEP_COLS = ", ".join(STEP_COLUMNS)
_DOC_COLS = ", ".join(DOC_COLUMNS)
_DOC_KEY = ", ".join(c for c in DOC_COLUMNS if c != "received_at")
_LOG_COLS = ", ".join(LOG_COLUMNS)
_POINT_COLS = ", ".join(POINT_COLUMNS)
_SUMMARY_COLS = ", ".join(SUMMARY_COLUMNS)


def _traces_sql(*, new: bool, once: bool) -> str:
    """The ``traces`` statement of a commit: its traces all new (a plain insert) or not (merged), each
    in one summary row or not (summed)."""
    rows = filled(AREA, "trace_rows_once" if once else "trace_rows_summed")
    return filled(AREA, "insert_traces" if new else "merge_traces", body=rows)


def _append(docs: bool, traces: str) -> str:
    """A commit's whole transaction: its spans, steps and (``docs``) documents, then its traces."""
    tables = [("spans", "_in_spans", _SPAN_COLS), ("steps", "_in_steps", _STEP_COLS)]
    if docs:
        tables.append(("step_documents", "_in_docs", _DOC_COLS))
    rows = [filled(AREA, "append_rows", table=t, view=v, columns=c) for t, v, c in tables]
    return ";\n".join(["BEGIN TRANSACTION", *rows, traces, "COMMIT"])


# (batch has documents, every trace is new, each trace in one summary row) -> the whole transaction
# as one call
_APPEND = {
    (d, new, once): _append(d, _traces_sql(new=new, once=once))
    for d in (False, True)
    for new in (False, True)
    for once in (False, True)
}
_MERGE_TRACES = _traces_sql(new=False, once=False)

KNOWN_TRACES = 100_000  # trace ids the writer remembers, per generation (two generations)


class KnownTraces:
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


def write_spans(
    con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch, inputs: Inputs, known: KnownTraces
) -> int:
    """Append a batch in one transaction; returns how many spans were new (re-sent ones are ignored).

    Spans are almost always new, so the batch is first inserted as it is: a plain ``INSERT``
    costs about half of an ``INSERT OR IGNORE`` here. A span that is already stored (a re-sent
    request) or twice in the batch violates the primary key; the transaction is then rolled
    back and the batch written again, keeping only the spans that are new. Likewise the batch's
    traces are inserted plainly when none of them was written lately (``KnownTraces``), and
    merged into their stored rows otherwise.

    Several writer connections may commit at once. Two transactions that touch the same trace
    row, or insert the same span, conflict: the one that loses is rolled back and written again
    (deduplicating) after a short pause.
    """
    if not len(batch):
        return 0
    if isinstance(batch, SpanBatch):
        batch = batch_to_arrow(batch)
    inputs.set(batch)
    trace_ids: list[str] = batch.trace_table().column("trace_id").to_pylist()
    once = len(set(trace_ids)) == len(trace_ids)  # a request's summary has one row a trace
    try:
        dedup = False
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                new_traces = not known.any_known(trace_ids)
                written = _write_once(con, inputs, batch, dedup, new_traces=new_traces, once=once)
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


def write_signals(
    con: duckdb.DuckDBPyConnection, batch: ArrowBatch, sources: ContentSources
) -> tuple[int, int]:
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
                n_logs, n_points, refused = _append_signals(con, logs, points, sources)
            sources.count_refused(refused)
            return n_logs, n_points
        except duckdb.TransactionException:
            if attempt == CONFLICT_RETRIES:
                raise
            time.sleep(0.002 * (2**attempt))
    raise AssertionError("unreachable")


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
            new = con.execute(filled(AREA, "insert_log_records", columns=_LOG_COLS)).fetchall()
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
                con.execute(sql(AREA, "count_content_events"), {"now": now})
            finally:
                con.unregister("_in_events")
    if points is not None:
        con.register("_in_points", points)
        try:
            n_points = len(con.execute(filled(AREA, "insert_points", columns=_POINT_COLS)).fetchall())
        finally:
            con.unregister("_in_points")
    return n_logs, n_points, refused


def _write_once(
    con: duckdb.DuckDBPyConnection,
    inputs: Inputs,
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
        return _append_deduplicated(con, inputs, batch)


def _append_deduplicated(con: duckdb.DuckDBPyConnection, inputs: Inputs, batch: ArrowBatch) -> int:
    """Some spans are stored already (or repeated in the batch): write the new ones only."""
    new = con.execute(filled(AREA, "insert_new_spans", columns=_SPAN_COLS)).fetchall()
    if not new:
        return 0
    con.register("_new", pa.table({"trace_id": [r[0] for r in new], "span_id": [r[1] for r in new]}))
    con.execute(filled(AREA, "insert_new_steps", columns=_STEP_COLS))
    if batch.docs.num_rows:  # (a document listed twice by a span repeated in the batch is kept once)
        con.execute(filled(AREA, "insert_new_documents", columns=_DOC_COLS, key=_DOC_KEY))
    # the traces' rows from the new spans only, a span repeated inside the batch counted once
    new_spans = con.sql(filled(AREA, "new_span_summaries", columns=_SUMMARY_COLS))
    inputs.traces.table = trace_summary(new_spans.to_arrow_table())
    con.execute(_MERGE_TRACES)
    return len(new)
