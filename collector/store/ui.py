"""What the web UI reads beyond the bundled queries and the dashboard's facts (``ui_facts``): the case
table and the trace list (paged, sorted from fixed lists), a review screen and a trace's verdicts. Each read runs
through ``reader.run_select`` (one SELECT in a read-only transaction, a row cap); the statements
are ``sql/ui/*.sql``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from collector.store.base import Tx
from collector.store.reader import QueryResult, run_select
from collector.store.sqlfiles import sql
from collector.store.verdicts import verdicts_since_sql

# sort keys the tables accept -> the SQL they order by (never spliced from a request)
CASE_SORTS = {
    "root_cause": "array_position($causes, root_cause)",
    "case_id": "case_id",
    "category": "category",
    "run_id": "run_id",
    "start_time": "start_time",
    "context_recall": "context_recall",
    "answer_support": "answer_support",
}
TRACE_SORTS = {"start_time": "t.start_time", "latency_ms": "latency_ms", "service_name": "t.service_name"}


def order_by(sorts: dict[str, str], sort: str, desc: bool, tiebreak: str) -> str:
    """The ORDER BY list of a sort key of ``sorts`` (KeyError for any other key)."""
    return f"{sorts[sort]} {'DESC' if desc else 'ASC'} NULLS LAST, {tiebreak}"


def read(con: Tx, name: str, params: dict[str, Any] | None = None, row_cap: int = 10_000) -> QueryResult:
    """One of the UI's plain reads (``sql/ui/<name>.sql``)."""
    return run_select(con, sql("ui", name), params or {}, row_cap=row_cap)


def cases_page(
    con: Tx, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int, causes: list[str]
) -> QueryResult:
    """A page of the case table and (``_total``) the count of the rows that match; sorted by root
    cause, in the order of ``causes``."""
    order = order_by(CASE_SORTS, sort, desc, "case_id, trace_id")
    params = {**params, "limit": limit, "offset": offset}
    if "$causes" in order:
        params["causes"] = causes
    return run_select(con, sql("ui", "cases_page").format(order=order), params, row_cap=limit)


def traces_page(
    con: Tx, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int
) -> QueryResult:
    order = order_by(TRACE_SORTS, sort, desc, "t.trace_id")
    return run_select(
        con,
        sql("ui", "traces_page").format(order=order),
        {**params, "limit": limit, "offset": offset},
        row_cap=limit,
    )


def trace_verdicts(con: Tx, trace_id: str) -> QueryResult:
    """A trace's current verdicts; they were all written since its ``verdicts_since`` (when known),
    so the scan skips older rows."""
    since = con.execute(sql("ui", "verdicts_since"), {"t": trace_id}).fetchall()
    at: datetime | None = since[0][0] if since else None
    bound, params = verdicts_since_sql(at)
    return run_select(
        con,
        sql("ui", "trace_verdicts") + bound + " ORDER BY evaluator, metric, span_id",
        {"t": trace_id, **params},
        row_cap=5000,
    )
