"""Feedback: storing rows (from the API and from annotations on spans), reading the spans that carry
annotations, and the look-ups of the feedback API. The statements are ``sql/feedback/*.sql``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from collector.ingest.span_rows import FEEDBACK_EVENT, FEEDBACK_KEYS
from collector.store.backend import is_lake
from collector.store.base import Con, operation
from collector.store.lake import work as lake_work
from collector.store.reader import (
    QueryResult,
    Window,
    received_window,
    run_select,
    traces_in_range,
    window_params,
)
from collector.store.rows import AnnotatedSpan
from collector.store.sqlfiles import sql
from collector.store.tx import transaction
from collector.store.verdicts import ids_table, registered


@operation
def insert(con: Con, rows: pa.Table, requeue: bool = True) -> tuple[int, list[str]]:
    """Insert feedback rows (the ``feedback`` table's columns, in order) in one transaction; a row
    whose id is stored already adds nothing. With ``requeue``, a settled trace evaluated already
    that got new negative feedback is marked waiting again. Returns (rows inserted, traces marked)."""
    if not rows.num_rows:
        return 0, []
    with registered(con, {"_fb": rows}), transaction(con):
        new: pa.Table = con.sql(sql("feedback", "new_rows")).to_arrow_table()
        if not new.num_rows:
            return 0, []
        with registered(con, {"_fb_new": new}):
            con.execute(sql("feedback", "insert_new"))
        requeued: list[str] = []
        negative = new.column("negative").to_pylist()
        targets = sorted({t for t, n in zip(new.column("trace_id").to_pylist(), negative, strict=True) if n})
        if requeue and targets:
            if is_lake(con):
                requeued = lake_work.requeue(con, targets, evaluated_only=True, own_transaction=False)
            else:
                requeued = [
                    r[0] for r in con.execute(sql("feedback", "requeue_evaluated"), {"t": targets}).fetchall()
                ]
    return new.num_rows, requeued


@operation
def annotated_spans(con: Con, trace_ids: list[str], hint: Window = None) -> list[AnnotatedSpan]:
    """(trace_id, span_id, parent_span_id, attributes, events, links) of the spans of these traces
    that carry feedback. ``hint``: the range of the traces' ``first_received_at`` read with their
    ids (``traces_in_range``)."""
    if not trace_ids:
        return []
    with registered(con, {"_fb_ids": ids_table(trace_ids)}):
        # every span of these traces was received between their first and last span: the window
        # lets the scan skip the rest of the table, which otherwise grows with every trace stored
        times_sql = sql("feedback", "received_times")

        def run(params: dict[str, Any]) -> list[Any]:
            return con.execute(times_sql, params).fetchall()

        times = traces_in_range(run, len, lambda a, b: a + b, len(set(trace_ids)), hint)
        rows = con.execute(
            sql("feedback", "annotated_spans"),
            {"keys": list(FEEDBACK_KEYS), "event": FEEDBACK_EVENT, **window_params(received_window(times))},
        ).fetchall()
    return [AnnotatedSpan._make(r) for r in rows]


def trace_known(con: Con, trace_id: str) -> bool:
    rows = con.execute(sql("feedback", "trace_known"), {"t": trace_id}).fetchall()
    return bool(rows and rows[0][0])


def of_trace(con: Con, trace_id: str, row_cap: int = 10_000) -> QueryResult:
    """Every feedback row on one trace, oldest first (as the SQL API returns rows)."""
    return run_select(con, sql("feedback", "of_trace"), {"t": trace_id}, row_cap=row_cap)
