"""Export traces to Parquet, one dataset per table, partitioned by the trace's day.

Layout: ``OUT/<table>/day=YYYY-MM-DD/<stamp>-<n>.parquet`` (Hive partitioning, readable by
``pyarrow.dataset``, DuckDB ``read_parquet(..., hive_partitioning=true)``, Spark, Polars). The day is
the UTC date of the trace's start, so every row of one trace lands in the same partition. Rows are
streamed in Arrow record batches from a cursor and written by pyarrow (the database itself is
sandboxed without file access). Each export adds new files and never overwrites old ones.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

# Tables exported with a trace, besides those discovered (any base table with a trace_id column).
KEEP_OUT = ("human_labels",)


def trace_tables(con: duckdb.DuckDBPyConnection, keep: tuple[str, ...] = KEEP_OUT) -> list[str]:
    """Base tables holding per-trace rows (a trace_id column), ``traces`` first."""
    rows = con.execute(
        "SELECT DISTINCT c.table_name FROM information_schema.columns c JOIN information_schema.tables t "
        "ON t.table_name = c.table_name AND t.table_schema = c.table_schema "
        "WHERE c.column_name = 'trace_id' AND t.table_type = 'BASE TABLE' AND t.table_schema = 'main' "
        "ORDER BY c.table_name"
    ).fetchall()
    names = [r[0] for r in rows if r[0] not in keep]
    return ["traces"] + [n for n in names if n != "traces"]


def _stringify_json(batch: pa.RecordBatch) -> pa.RecordBatch:
    """DuckDB's JSON type arrives as an Arrow extension type; Parquet gets plain strings."""
    cols, fields = [], []
    for f, col in zip(batch.schema, batch.columns, strict=True):
        if isinstance(f.type, pa.ExtensionType):
            col = col.storage if hasattr(col, "storage") else col.cast(pa.string())
            f = pa.field(f.name, col.type)
        cols.append(col)
        fields.append(f)
    return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))


def export_traces(
    con: duckdb.DuckDBPyConnection, trace_ids: list[str], out_dir: str | Path, batch_rows: int = 50_000
) -> dict[str, int]:
    """Write every per-trace table's rows of these traces; returns rows written per table."""
    out = Path(out_dir)
    stamp = uuid.uuid4().hex[:12]
    written: dict[str, int] = {}
    con.register("_x_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        for table in trace_tables(con):
            day = "strftime(coalesce(tr.start_time, tr.first_received_at), '%Y-%m-%d')"
            if table == "traces":
                sql = f"SELECT tr.*, {day} AS day FROM traces tr WHERE tr.trace_id IN (SELECT trace_id FROM _x_ids)"
            else:
                sql = (
                    f"SELECT x.*, coalesce({day}, 'unknown') AS day FROM {table} x "
                    "LEFT JOIN traces tr ON tr.trace_id = x.trace_id WHERE x.trace_id IN (SELECT trace_id FROM _x_ids)"
                )
            reader = con.sql(sql).to_arrow_reader(batch_rows)
            batches = [_stringify_json(b) for b in reader]
            n = sum(b.num_rows for b in batches)
            written[table] = n
            if not n:
                continue
            ds.write_dataset(
                pa.Table.from_batches(batches).to_batches(max_chunksize=batch_rows),
                out / table,
                schema=batches[0].schema,
                format="parquet",
                partitioning=ds.partitioning(pa.schema([("day", pa.string())]), flavor="hive"),
                basename_template=f"{stamp}-{{i}}.parquet",
                existing_data_behavior="overwrite_or_ignore",
            )
    finally:
        con.unregister("_x_ids")
    return written


def read_export(out_dir: str | Path, table: str) -> pa.Table:
    """Read one exported table back (with its ``day`` partition column)."""
    return ds.dataset(Path(out_dir) / table, format="parquet", partitioning="hive").to_table()


def select_traces(
    con: duckdb.DuckDBPyConnection,
    *,
    service: str | None = None,
    since: object = None,
    until: object = None,
    limit: int | None = None,
) -> list[str]:
    """Trace ids by service and start time (``until`` exclusive), oldest first."""
    rows = con.execute(
        "SELECT trace_id FROM traces WHERE ($service IS NULL OR service_name = $service) "
        "AND ($since IS NULL OR coalesce(start_time, first_received_at) >= CAST($since AS TIMESTAMP)) "
        "AND ($until IS NULL OR coalesce(start_time, first_received_at) < CAST($until AS TIMESTAMP)) "
        "ORDER BY coalesce(start_time, first_received_at), trace_id LIMIT coalesce($limit, 9223372036854775807)",
        {"service": service, "since": since, "until": until, "limit": limit},
    ).fetchall()
    return [r[0] for r in rows]
