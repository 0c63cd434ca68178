"""Export's operations on the store: the per-trace tables, the traces a selection names, and the rows
of some traces as Arrow record batches (``collector.api.export`` writes them to Parquet; the statements
are ``sql/export/*.sql``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from collector.store.backend import is_lake
from collector.store.base import Con, arrow_batches, operation
from collector.store.templates import filled

AREA = "export"
# Tables exported with a trace, besides those discovered (any base table with a trace_id column).
KEEP_OUT = ("human_labels",)


def trace_tables(tx: Con, keep: tuple[str, ...] = KEEP_OUT) -> list[str]:
    """Base tables holding per-trace rows (a trace_id column), ``traces`` first, but those in ``keep``.
    On a lake, the names users read (``lake.work.export_tables``)."""
    from collector.store.lake import work as lake_work

    if is_lake(tx):
        return lake_work.export_tables(tx, keep)
    names = [r[0] for r in tx.execute(filled(AREA, "trace_tables")).fetchall() if r[0] not in keep]
    return ["traces"] + [n for n in names if n != "traces"]


@operation
def select_traces(
    tx: Con,
    *,
    service: str | None = None,
    since: object = None,
    until: object = None,
    limit: int | None = None,
) -> list[str]:
    """Trace ids by service and start time (``until`` exclusive), oldest first."""
    params: dict[str, Any] = {"service": service, "since": since, "until": until, "limit": limit}
    return [r[0] for r in tx.execute(filled(AREA, "select_traces"), params).fetchall()]


@operation
def trace_rows(
    tx: Con, trace_ids: list[str], batch_rows: int = 50_000
) -> Iterator[tuple[str, list[pa.RecordBatch]]]:
    """For each per-trace table (``trace_tables``, ``traces`` first): its rows of these traces with the
    ``day`` of their trace's start, in record batches of at most ``batch_rows``."""
    tx.register("_x_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        for table in trace_tables(tx):
            text = filled(AREA, "trace_row") if table == "traces" else filled(AREA, "table_rows", table=table)
            yield table, list(tx.sql(text).to_arrow_reader(batch_rows))
    finally:
        # a consumer that failed half-way (a full or read-only target) may close the generator only
        # after its connection was closed: nothing is registered any more then
        with contextlib.suppress(duckdb.ConnectionException):
            tx.unregister("_x_ids")


@operation
def old_signal_rows(
    tx: Con, service: str | None, before: datetime, batch_rows: int = 50_000
) -> Iterator[tuple[str, list[pa.RecordBatch]]]:
    """The rows ``retention.delete_old_signals`` deletes, per table (``metric_points``, ``log_records``),
    with the ``day`` of their own time, in record batches of at most ``batch_rows``."""
    params = {"s": service, "before": before}
    for table, name in (("metric_points", "old_points"), ("log_records", "old_log_records")):
        yield table, list(arrow_batches(tx, filled(AREA, name), params, batch_rows))
