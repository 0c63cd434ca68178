"""Retention's operations on the store: the services with traces, the traces past a service's limits,
the deletion of whole traces, and of metric points and traceless log records by their own age
(``collector.maintenance.retention`` holds the policy; the statements are ``sql/retention/*.sql``)."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa

from collector.store.backend import is_lake
from collector.store.base import Con, operation
from collector.store.export import KEEP_OUT, trace_tables
from collector.store.lake import work as lake_work
from collector.store.templates import filled
from collector.store.tx import transaction

AREA = "retention"


@operation
def trace_services(tx: Con) -> list[str | None]:
    """Every service name the traces have (None for traces without one)."""
    return [r[0] for r in tx.execute(filled(AREA, "trace_services")).fetchall()]


@operation
def expired_traces(
    tx: Con,
    service: str | None,
    *,
    cutoff: datetime | None,
    max_traces: int | None,
    max_spans: int | None,
) -> list[str]:
    """The traces of ``service`` first received before ``cutoff``, or (settled ones) beyond its
    ``max_traces`` traces or ``max_spans`` spans received last; a None limit does not apply. By the
    time ragfault received them, never the start time a client sent (``sql/retention``)."""
    params = {"s": service, "cutoff": cutoff, "mt": max_traces, "ms": max_spans}
    return [r[0] for r in tx.execute(filled(AREA, "expired_traces"), params).fetchall()]


@operation
def delete_traces(tx: Con, trace_ids: list[str], keep: tuple[str, ...] = KEEP_OUT) -> dict[str, int]:
    """Delete these traces from every per-trace table but those in ``keep``, in one transaction, the
    ``traces`` row last; returns rows deleted per table."""
    if not trace_ids:
        return {}
    if is_lake(tx):
        return lake_work.delete_traces(tx, trace_ids, keep)
    tx.register("_del_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    counts: dict[str, int] = {}
    try:
        with transaction(tx):
            tables = trace_tables(tx, keep)
            for table in tables[1:] + tables[:1]:  # the traces row last
                row = tx.execute(filled(AREA, "delete_trace_rows", table=table)).fetchall()[0]
                counts[table] = int(row[0]) if row else 0
    finally:
        tx.unregister("_del_ids")
    return counts


@operation
def signal_services(tx: Con) -> list[str | None]:
    """Every service name the log records and metric points have (None for those without one)."""
    return [r[0] for r in tx.execute(filled(AREA, "signal_services")).fetchall()]


@operation
def delete_old_signals(tx: Con, service: str | None, before: datetime) -> dict[str, int]:
    """Delete the metric points of ``service`` received before ``before``, and its log records
    received then that belong to no stored trace (a trace's records go with it), in one transaction;
    returns rows deleted per table. By when they were received, not the time their client gave them."""
    params = {"s": service, "before": before}
    counts: dict[str, int] = {}
    with transaction(tx):
        for table, name in (
            ("metric_points", "delete_old_points"),
            ("log_records", "delete_old_log_records"),
        ):
            row = tx.execute(filled(AREA, name), params).fetchall()[0]
            counts[table] = int(row[0]) if row else 0
    return counts
