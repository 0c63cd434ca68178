"""Export traces to Parquet, one dataset per table, partitioned by the trace's day.

Layout: ``OUT/<table>/day=YYYY-MM-DD/<stamp>-<n>.parquet`` (Hive partitioning, readable by
``pyarrow.dataset``, DuckDB ``read_parquet(..., hive_partitioning=true)``, Spark, Polars). The day is
the UTC date of the trace's start, so every row of one trace lands in the same partition. Rows are
streamed in Arrow record batches from a cursor and written by pyarrow (the database itself is
sandboxed without file access). Each export adds new files and never overwrites old ones. Metric
points and log records of no stored trace, which retention deletes by their own age
(``export_old_signals``), are partitioned by the day of their own time.

Every directory written to is resolved, each of its components, and must lie inside ``OUT``
resolved: a table's or a day's directory that is a symbolic link leading elsewhere is refused
(``PermanentError``) before anything is written there, so an export confined to a directory (the
API's ``export_dir``) cannot be led out of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from collector.store import export as store_export
from collector.store.base import Tx
from collector.store.export import KEEP_OUT, select_traces, trace_tables
from ragfault_core.errors import PermanentError

__all__ = ["KEEP_OUT", "export_old_signals", "export_traces", "read_export", "select_traces", "trace_tables"]


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
    con: Tx, trace_ids: list[str], out_dir: str | Path, batch_rows: int = 50_000
) -> dict[str, int]:
    """Write every per-trace table's rows of these traces; returns rows written per table."""
    return _write(store_export.trace_rows(con, trace_ids, batch_rows), Path(out_dir), batch_rows)


def export_old_signals(
    con: Tx, service: str | None, before: datetime, out_dir: str | Path, batch_rows: int = 50_000
) -> dict[str, int]:
    """Write the metric points and traceless log records of ``service`` from before ``before`` (what
    retention deletes by their own age), partitioned by the day of their time; rows per table."""
    return _write(store_export.old_signal_rows(con, service, before, batch_rows), Path(out_dir), batch_rows)


def confined(path: Path, root: Path) -> Path:
    """``path`` with every component resolved (symbolic links followed), which must lie inside
    ``root`` (itself resolved); else ``PermanentError``."""
    real = path.resolve()
    if real != root and root not in real.parents:
        raise PermanentError(
            f"the export's directory {path} leads outside {root} (a symbolic link): nothing was written there"
        )
    return real


def _days(batches: list[pa.RecordBatch]) -> set[str]:
    """The ``day`` partition values of these rows."""
    days: set[str] = set()
    for b in batches:
        i = b.schema.get_field_index("day")
        if i >= 0:
            # pyarrow names a NULL day's directory as Hive does
            days.update(
                "__HIVE_DEFAULT_PARTITION__" if d is None else str(d)
                for d in pc.unique(b.column(i)).to_pylist()
            )
    return days


def _write(tables: Iterable[tuple[str, list[pa.RecordBatch]]], out: Path, batch_rows: int) -> dict[str, int]:
    stamp = uuid.uuid4().hex[:12]
    written: dict[str, int] = {}
    root = out.resolve()
    for table, rows in tables:
        batches = [_stringify_json(b) for b in rows]
        n = sum(b.num_rows for b in batches)
        written[table] = n
        if not n:
            continue
        # the table's directory and each of its days' (pyarrow creates them, or writes into them)
        target = confined(root / table, root)
        for day in _days(batches):
            confined(target / f"day={day}", root)
        ds.write_dataset(
            pa.Table.from_batches(batches).to_batches(max_chunksize=batch_rows),
            target,
            schema=batches[0].schema,
            format="parquet",
            partitioning=ds.partitioning(pa.schema([("day", pa.string())]), flavor="hive"),
            basename_template=f"{stamp}-{{i}}.parquet",
            existing_data_behavior="overwrite_or_ignore",
        )
    return written


def read_export(out_dir: str | Path, table: str) -> pa.Table:
    """Read one exported table back (with its ``day`` partition column)."""
    return ds.dataset(Path(out_dir) / table, format="parquet", partitioning="hive").to_table()
