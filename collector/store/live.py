"""The live page's reads beyond the bundled queries it draws (``online_health``, ``triage``): the causes
``live_attribution`` proves by hour and service, when the latest live trace started, what one triage
screen shows beside the trace view, and the ``triage`` query's rows as the page's queue and as the
backlog counted by service and reason. Each runs through ``reader.run_select`` (one SELECT in a
read-only transaction, a row cap), the page's queue through ``reader.select_table`` (the same, its rows
kept as Arrow: ``backlog_of`` counts them); the statements are ``sql/live/*.sql``.

The queue and the backlog are the bundled ``triage`` query itself put in their ``{body}`` and run with
its own parameters, so the page, the gauges and a user's query of it count the same traces.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa

from collector.store.base import Con, operation
from collector.store.reader import QueryResult, TableResult, run_select, select_table
from collector.store.sqlfiles import sql
from collector.store.templates import filled
from collector.store.verdicts import registered
from queries import load_query

ITEM_PARTS = ("live", "feedback", "promoted", "case")
"""What a triage screen shows beside the trace view, each the statement ``item_<part>``: the suspected
cause, the feedback, a promotion and the gold case the trace joins."""


@operation
def causes(
    con: Con, since: datetime | None, until: datetime | None, service: str | None, row_cap: int
) -> QueryResult:
    """Live traces per hour, service and the root cause ``live_attribution`` proves (``sql/live/causes``),
    of the traces started in ``[since, until)`` of ``service`` (None: no bound, every service)."""
    params = {"since": since, "until": until, "service": service}
    return run_select(con, sql("live", "causes"), params, row_cap=row_cap)


@operation
def latest(con: Con) -> str | None:
    """When the latest live trace started (as ``run_select`` gives a time: ISO text), or None."""
    value = run_select(con, sql("live", "latest"), {}, row_cap=1).rows[0][0]
    return None if value is None else str(value)


@operation
def triage_item(con: Con, trace_id: str) -> dict[str, QueryResult]:
    """A triage screen's reads of one trace, by part (``ITEM_PARTS``): each a row or none."""
    return {
        part: run_select(con, sql("live", f"item_{part}"), {"t": trace_id}, row_cap=1) for part in ITEM_PARTS
    }


def _triage(name: str) -> str:
    """The statement ``name`` with the bundled ``triage`` query as its body."""
    return filled("live", name, body=load_query("triage").sql)


@operation
def triage_queue(con: Con, params: dict[str, Any], row_cap: int) -> TableResult:
    """The ``triage`` query's rows given ``params`` (its own: ``service``, ``since``, ``limit`` ...),
    only the columns the live page shows, in the query's order, kept as Arrow (``backlog_of`` counts
    them; the page shows its first rows)."""
    return select_table(con, _triage("triage_queue"), load_query("triage").bind(params), row_cap=row_cap)


@operation
def backlog_of(con: Con, queue: pa.Table, row_cap: int) -> QueryResult:
    """``triage_queue``'s rows counted by service and reason: the statement ``triage_backlog`` counts
    the query's rows with, over these rows (the query is not run again)."""
    with registered(con, {"_triage_queue": queue}):
        return run_select(
            con, filled("live", "triage_backlog", body=sql("live", "queue_rows")), row_cap=row_cap
        )


@operation
def triage_backlog(con: Con, params: dict[str, Any], row_cap: int) -> QueryResult:
    """The ``triage`` query's rows given ``params`` counted by service and reason."""
    return run_select(con, _triage("triage_backlog"), load_query("triage").bind(params), row_cap=row_cap)
