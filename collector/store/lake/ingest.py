"""A lake collector's ingest: spans, steps and documents appended to the raw tables, log records and
metric data points to their plain tables, each batch in one transaction.

Within a collector a span is kept once at commit: a batch keeps the first copy of each (trace_id,
span_id) and drops the spans this collector committed lately (``RECENT_SPANS`` a generation, two
generations; at start the spans the lake received in the last ``RECENT_WINDOW_MINUTES``), so a
re-sent request is not stored twice. Across collectors the views keep one row per span
(``tables.VIEWS``). Log records and metric data points are kept once within a collector the same
way, by their ids; a copy another collector stored stays until maintenance.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterable

import duckdb
import pyarrow as pa

from collector.ingest.batch import DOC_COLUMNS, SPAN_COLUMNS, STEP_COLUMNS, ArrowBatch, SpanBatch
from collector.normalize.genai_events import CONTENT_EVENTS
from collector.receivers.signals import LOG_COLUMNS, POINT_COLUMNS
from collector.store.content import ContentSources, admitted
from collector.store.inputs import CONFLICT_RETRIES, Inputs
from collector.store.lake.tables import DOC_KEY
from collector.store.schema import batch_to_arrow
from collector.store.templates import filled
from collector.store.tx import rollback

AREA = "lake/ingest"
RECENT_SPANS = 100_000  # span ids a collector remembers, per generation (two generations)
RECENT_WINDOW_MINUTES = 10  # at start, the spans received this long ago are remembered


class RecentKeys:
    """Keys (a span's trace id + span id, a record's or a point's id) this collector committed
    lately: two generations of at most ``size`` each, so memory stays bounded; a key that aged out is
    only caught by the views."""

    def __init__(self, size: int = RECENT_SPANS) -> None:
        self.size = size
        self._new: set[str] = set()
        self._old: set[str] = set()

    def __contains__(self, key: str) -> bool:
        return key in self._new or key in self._old

    def add(self, keys: Iterable[str]) -> None:
        self._new.update(keys)
        if len(self._new) >= self.size:
            self._old, self._new = self._new, set()


class Ingest:
    """The writes of one lake store (called from its writer threads) and what it remembers of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recent = RecentKeys()
        self._recent_logs = RecentKeys()  # (record ids; point ids below: the same bounded memory)
        self._recent_points = RecentKeys()

    def remember_recent(self, con: duckdb.DuckDBPyConnection) -> None:
        """At start: the span keys, log record ids and metric point ids the lake received in the last
        ``RECENT_WINDOW_MINUTES`` (from any collector), so a restarted collector does not store a
        re-sent one twice."""
        since = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(minutes=RECENT_WINDOW_MINUTES)
        for key, table, recent in (
            ("trace_id || span_id", "span_rows", self._recent),
            ("record_id", "log_records", self._recent_logs),
            ("point_id", "metric_points", self._recent_points),
        ):
            text = filled(AREA, "recent_keys", key=key, table=table)
            rows = con.execute(text, {"since": since, "n": recent.size}).fetchall()
            recent.add(r[0] for r in rows)

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int:
        """Append the batch's new spans (with their steps and documents) in one transaction; returns
        how many were new. The first copy of a span repeated in the batch is kept, and a span this
        collector committed lately is dropped. A commit that keeps conflicting fails (the writer
        answers 503, the exporter retries)."""
        if isinstance(batch, SpanBatch):
            batch = batch_to_arrow(batch)
        if not len(batch):
            return 0
        recent = self._recent
        keys = [
            t + s
            for t, s in zip(
                batch.spans.column("trace_id").to_pylist(),
                batch.spans.column("span_id").to_pylist(),
                strict=True,
            )
        ]
        new = [k for k in dict.fromkeys(keys) if k not in recent]
        if not new:
            return 0
        inputs = Inputs()
        inputs.register(con)
        inputs.set(batch)
        if len(new) < len(keys):
            con.register(
                "_new", pa.table({"trace_id": [k[:32] for k in new], "span_id": [k[32:] for k in new]})
            )
        try:
            _commit(con, _append_sql(bool(batch.docs.num_rows), every=len(new) == len(keys)))
        finally:
            for name in ("_in_spans", "_in_steps", "_in_docs", "_in_traces", "_new"):
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass
        with self._lock:
            self._recent.add(new)
        return len(new)

    def write_signals(
        self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch, sources: ContentSources
    ) -> tuple[int, int]:
        """Append a batch's new log records and metric data points (and the GenAI content events
        among the records, ``trace_content_events``) in one transaction; returns how many of each
        were new. As with spans, the first copy of a record repeated in the batch is kept and one
        this collector stored lately is dropped; a copy another collector stored stays until
        maintenance (``compact_duplicates``). ``sources``: whose content events may re-open a
        settled trace."""
        logs = _new_rows(batch.logs, "record_id", self._recent_logs)
        points = _new_rows(batch.points, "point_id", self._recent_points)
        if logs is None and points is None:
            return 0, 0
        statements = []
        refused = 0
        if logs is not None:
            ok, refused = _admitted_events(con, logs, sources)
            con.register("_in_logs", logs)
            con.register("_admitted", ok)
            events = ", ".join(f"'{e}'" for e in sorted(CONTENT_EVENTS))
            statements += [
                filled(AREA, "insert_log_records", columns=", ".join(LOG_COLUMNS)),
                filled(AREA, "insert_content_events", events=events),
            ]
        if points is not None:
            con.register("_in_points", points)
            statements.append(filled(AREA, "insert_points", columns=", ".join(POINT_COLUMNS)))
        try:
            _commit(con, ";\n".join(["BEGIN TRANSACTION", *statements, "COMMIT"]))
        finally:
            for name in ("_in_logs", "_admitted", "_in_points"):
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass
        sources.count_refused(refused)
        log_ids = logs.column("record_id").to_pylist() if logs is not None else []
        point_ids = points.column("point_id").to_pylist() if points is not None else []
        with self._lock:
            self._recent_logs.add(log_ids)
            self._recent_points.add(point_ids)
        return len(set(log_ids)), len(set(point_ids))


def _admitted_events(
    con: duckdb.DuckDBPyConnection, logs: pa.Table, sources: ContentSources
) -> tuple[pa.Table, int]:
    """The record ids of the GenAI content events among ``logs`` that may re-open their traces
    (``content.admitted``: a settled trace's span takes only its own service's records, or a trusted
    service's), as the table ``insert_content_events`` keeps; and how many were refused. A forged
    record is stored with the other log records, but counts in no trace's ``content_events``, so it
    starts no settle round nor evaluation. The look-up reads the catalog only for a batch that
    carries content events."""
    rows = [
        r
        for r in logs.select(["record_id", "trace_id", "span_id", "service_name", "event_name"]).to_pylist()
        if r["trace_id"] and r["event_name"] in CONTENT_EVENTS
    ]
    ok: list[str] = []
    refused = 0
    if rows:
        events = [(r["trace_id"], r["span_id"], r["service_name"]) for r in rows]
        flags, refused = admitted(con, events, sources)
        ok = [r["record_id"] for r, f in zip(rows, flags, strict=True) if f]
    return pa.table({"record_id": pa.array(ok, pa.string())}), refused


def _new_rows(table: pa.Table | None, key: str, recent: RecentKeys) -> pa.Table | None:
    """The rows of ``table`` whose ``key`` this collector has not stored lately (None: none)."""
    if table is None or not table.num_rows:
        return None
    fresh = [i not in recent for i in table.column(key).to_pylist()]
    if not any(fresh):
        return None
    return table if all(fresh) else table.filter(pa.array(fresh, pa.bool_()))


def _commit(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Run one transaction's statements, again after a conflict (a commit that keeps conflicting
    fails: the writer answers 503, the exporter retries)."""
    for attempt in range(CONFLICT_RETRIES + 1):
        try:
            con.execute(sql)
            return
        except duckdb.TransactionException:
            rollback(con)
            if attempt == CONFLICT_RETRIES:
                raise
            time.sleep(0.01 * (2**attempt))
        except BaseException:
            rollback(con)
            raise


def _append_sql(docs: bool, *, every: bool) -> str:
    """The transaction of a batch: every span of it (``every``), or the first copy of each new one."""
    statements = []
    for table, view, columns in (
        ("span_rows", "_in_spans", SPAN_COLUMNS),
        ("step_rows", "_in_steps", STEP_COLUMNS),
        *([("step_document_rows", "_in_docs", DOC_COLUMNS)] if docs else []),
    ):
        cols = ", ".join(columns)
        if every:
            statements.append(filled(AREA, "append_rows", table=table, view=view, columns=cols))
            continue
        # some spans are dropped (stored lately, or repeated in the batch): the first copy of each new one
        key = "trace_id, span_id" if table != "step_document_rows" else DOC_KEY
        statements.append(filled(AREA, "append_new_rows", table=table, view=view, columns=cols, key=key))
    return ";\n".join(["BEGIN TRANSACTION", *statements, "COMMIT"])
