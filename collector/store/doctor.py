"""The reads of ``ragfault doctor`` (``GET /api/v1/coverage``): the services that have traces, the
spans no reader could read, the fields the structural layer or a mapping filled, and which traces
joined a gold case. Statements in ``sql/doctor/``; every read is bounded (``row_cap``) and runs on
the caller's read cursor."""

from __future__ import annotations

from typing import Any

from collector.store.reader import run_select
from collector.store.sqlfiles import sql

AREA = "doctor"


def services(cursor: Any) -> list[list[Any]]:
    """(service name, settled traces) of the services that have settled traces (at most 50)."""
    return run_select(cursor, sql(AREA, "services"), {}, row_cap=50).rows


def latest_start(cursor: Any, service: str | None) -> Any:
    """When the latest settled trace (of ``service``, or of any) started; None without one. A stored
    timestamp comes back as ISO text (``run_select``)."""
    rows = run_select(cursor, sql(AREA, "latest_start"), {"service": service}, row_cap=1).rows
    return rows[0][0] if rows else None


def unread_spans(cursor: Any, params: dict[str, Any], row_cap: int) -> list[list[Any]]:
    """(trace id, span name, scope, attributes, convention) of recent traces with unread spans."""
    return run_select(cursor, sql(AREA, "unread_spans"), params, row_cap=row_cap).rows


def inferred_fields(cursor: Any, params: dict[str, Any], row_cap: int) -> list[list[Any]]:
    """(span name, field, source, steps) of the fields of recent steps no reader read."""
    return run_select(cursor, sql(AREA, "inferred_fields"), params, row_cap=row_cap).rows


def gold_joins(
    cursor: Any, service: str | None, since: Any, traces: int, rows: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Which recent settled traces joined a gold case, per service (``sql/doctor/gold_joins``),
    and up to ``rows`` of those whose question no case asks (``gold_join_misses``); both empty
    without gold cases."""
    params = {"service": service, "since": since, "traces": traces}
    counts = run_select(cursor, sql(AREA, "gold_joins"), params, row_cap=1000).as_dict()
    misses = run_select(
        cursor, sql(AREA, "gold_join_misses"), {**params, "rows": rows}, row_cap=rows
    ).as_dict()
    return (
        [dict(zip(counts["columns"], r, strict=True)) for r in counts["rows"]],
        [dict(zip(misses["columns"], r, strict=True)) for r in misses["rows"]],
    )
