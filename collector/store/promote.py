"""Promotions of live traces to gold cases (``evaluators.service.promote``, ``ragfault gold promote``): the
trace a promotion reads, its record in ``gold_promotions``, what attribution finds after it, and the
promoted cases as the gold files hold them. Statements in ``sql/promote/``; the gold case itself is
written by ``references.upsert_gold``."""

from __future__ import annotations

from typing import Any

from collector.store.base import Con, QueryFn, operation
from collector.store.reader import run_select
from collector.store.sqlfiles import sql

AREA = "promote"


@operation
def trace_row(con: Con, trace_id: str) -> dict[str, Any] | None:
    """What a promotion needs of a trace (``sql/promote/trace_row``'s columns), None when no stored
    trace has this id."""
    res = run_select(con, sql(AREA, "trace_row"), {"t": trace_id}, row_cap=1)
    return dict(zip(res.columns, res.rows[0], strict=True)) if res.rows else None


@operation
def write_promotion(con: Con, promotion: dict[str, Any]) -> None:
    """Record (again) where a promoted case came from, in a writer job: a case promoted twice keeps
    its latest record (a DELETE and an INSERT, for a lake table has no key to replace on)."""
    con.execute(sql(AREA, "drop_promotion"), {"case_id": promotion["case_id"]})
    con.execute(sql(AREA, "insert_promotion"), promotion)


@operation
def attribution(con: Con, trace_id: str) -> tuple[str | None, list[str] | None]:
    """(root cause, failing layers) attribution finds for a trace now; (None, None) while it is not
    evaluated."""
    res = run_select(con, sql(AREA, "attribution"), {"t": trace_id}, row_cap=1)
    return (res.rows[0][0], res.rows[0][1]) if res.rows else (None, None)


def promoted(run: QueryFn, dataset: str | None) -> list[Any]:
    """The raw JSON of the promoted cases (of ``dataset``, or all), in the order they were promoted,
    read through the query interface (the server's export route on a cursor, the CLI's anywhere)."""
    return [row[0] for row in run(sql(AREA, "promoted"), {"dataset": dataset})["rows"]]


def suggested_cause(run: QueryFn, trace_id: str) -> str | None:
    """The root cause live attribution suggests for a trace (None: not evaluated), read through the
    query interface (the CLI's promotion asks a server or a file alike)."""
    rows = run(sql(AREA, "suggested_cause"), {"t": trace_id})["rows"]
    return rows[0][0] if rows else None
