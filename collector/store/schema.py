"""Numbered SQL migrations and the Arrow types of the ingest tables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import duckdb
import pyarrow as pa

from collector.ingest.batch import SPAN_COLUMNS, ArrowBatch, SpanBatch
from collector.model import DOCUMENT, SPAN, STEP
from collector.store import sqlfiles
from collector.store.tx import transaction


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every bundled migration, in order."""
    out = []
    for entry in resources.files("collector.store").joinpath("migrations").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), name, entry.read_text(encoding="utf-8")))
    return sorted(out)


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchone()
    if not exists or not exists[0]:
        return 0
    row = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def holds_ragfault(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database ``con`` opened is a ragfault store (its own catalog has the migrations
    table): a DuckDB file another program made opens just as well, and is refused on this."""
    row = con.execute(sqlfiles.sql("schema", "holds_ragfault")).fetchone()
    return bool(row and row[0])


# a column's ``USING COMPRESSION zstd`` (migration 020 and later)
_ZSTD_CLAUSE = re.compile(r"\s+USING\s+COMPRESSION\s+zstd\b", re.IGNORECASE)


def zstd_columns(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this database can store a string column ZSTD-compressed. A file in a storage format
    older than DuckDB 1.2's cannot (a file made by DuckDB 1.x keeps format v1.0.0 unless told
    otherwise): DuckDB 2 refuses the clause there, DuckDB 1.5 accepts it and stores the column
    uncompressed. An in-memory database has no format and takes the clause."""
    row = con.execute(
        "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    if row is None or not row[0]:
        return True
    found = re.match(r"v(\d+)\.(\d+)", str(row[0]))
    return found is not None and (int(found[1]), int(found[2])) >= (1, 2)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations, each in its own transaction. Returns the names applied. On a file
    that cannot store ZSTD columns (``zstd_columns``) a column's compression clause is left out: the
    column is created as before, with DuckDB's own choice."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
        "applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    # every bundled migration not recorded yet, in order (not only those above the highest recorded:
    # a migration numbered below one already applied, e.g. from a branch merged later, still runs)
    done = {int(r[0]) for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
    applied = []
    zstd = zstd_columns(con)
    for version, name, sql in migrations():
        if version in done:
            continue
        if not zstd:
            sql = _ZSTD_CLAUSE.sub("", sql)
        with transaction(con):
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, name])
        applied.append(name)
    return applied


_TS = pa.timestamp("us")
_S = pa.string()

# the Arrow schemas of what ingest writes, from the one definition of each table (``collector.model``)
SPAN_SCHEMA = SPAN.arrow_schema(ingest_only=True)
STEP_SCHEMA = STEP.arrow_schema(ingest_only=True)
DOC_SCHEMA = DOCUMENT.arrow_schema(ingest_only=True)


# One row a trace of a request: what the ``traces`` table needs from its spans, summed up where the
# spans are decoded (often a worker process), so the writer only adds up a few rows a trace.
TRACE_SCHEMA = pa.schema([
    ("trace_id", _S), ("first_received_at", _TS), ("last_received_at", _TS), ("span_count", pa.int64()),
    ("error_count", pa.int64()), ("has_root", pa.bool_()), ("root_span_id", _S), ("root_name", _S),
    ("start_time", _TS), ("end_time", _TS), ("root_service", _S), ("service_name", _S), ("case_id", _S),
    ("run_id", _S), ("session_id", _S), ("user_id", _S),
])  # fmt: skip

# the span columns ``trace_summary`` reads
SUMMARY_COLUMNS = (
    "trace_id", "span_id", "parent_span_id", "name", "status_code", "received_at", "start_time",
    "end_time", "service_name", "case_id", "run_id", "session_id", "user_id",
)  # fmt: skip
_SUMMARY_INDEX = [SPAN_COLUMNS.index(c) for c in SUMMARY_COLUMNS]


def trace_summary(spans: pa.Table) -> pa.Table:
    """The spans of a batch summed up per trace (``TRACE_SCHEMA``), one row a trace in the order of
    their first span.

    A root span is one without a parent; ``root_*`` come from it, ``service_name`` from any span.
    Which value is kept when spans disagree (two roots, two case ids) is arbitrary, as it is in SQL's
    ``any_value``: here the least of the values given."""
    if not spans.num_rows:
        return TRACE_SCHEMA.empty_table()
    columns = [spans.column(c).to_pylist() for c in SUMMARY_COLUMNS]
    return _summarize(zip(*columns, strict=True))


def _summarize(spans: Iterable[Sequence[Any]]) -> pa.Table:
    """``trace_summary`` of spans given as ``SUMMARY_COLUMNS`` rows (times as datetimes or integer
    microseconds, None for none). In Python: a request's few hundred spans cost less than one
    grouping of Arrow's engine, which starts a plan for each (about 2 ms)."""
    by: dict[str, list[Any]] = {}
    for tid, sid, parent, name, status, received, start, end, service, case, run, session, user in spans:
        root = parent is None
        error = 1 if status == "ERROR" else 0
        t = by.get(tid)
        if t is None:
            by[tid] = [
                received, received, 1, error, root, sid if root else None, name if root else None,
                start, end, service if root else None, service, case, run, session, user,
            ]  # fmt: skip
            continue
        t[2] += 1
        t[3] += error
        if received is not None:
            t[0] = received if t[0] is None or received < t[0] else t[0]
            t[1] = received if t[1] is None or received > t[1] else t[1]
        if root:
            t[4] = True
            t[5] = _least(t[5], sid)
            t[6] = _least(t[6], name)
            t[9] = _least(t[9], service)
        if start is not None and (t[7] is None or start < t[7]):
            t[7] = start
        if end is not None and (t[8] is None or end > t[8]):
            t[8] = end
        t[10], t[11], t[12] = _least(t[10], service), _least(t[11], case), _least(t[12], run)
        t[13], t[14] = _least(t[13], session), _least(t[14], user)
    values = list(zip(*by.values(), strict=True))
    arrays = [pa.array(list(by), _S)]
    arrays += [pa.array(v, f.type) for v, f in zip(values, list(TRACE_SCHEMA)[1:], strict=True)]
    return pa.Table.from_arrays(arrays, schema=TRACE_SCHEMA)


def _least(a: Any, b: Any) -> Any:
    """The lesser of two values, None being no value (as SQL's ``min``)."""
    if a is None:
        return b
    return a if b is None or a <= b else b


def batch_to_arrow(batch: SpanBatch) -> ArrowBatch:
    """The rows of a flattened request as Arrow tables of the ingest schemas."""
    spans = rows_to_arrow(batch.spans, SPAN_SCHEMA)
    picked = [[r[i] for i in _SUMMARY_INDEX] for r in batch.spans]
    for p in picked:  # the times as the spans' table holds them (integer microseconds, None for none)
        p[6], p[7] = _ns_to_us(p[6]), _ns_to_us(p[7])
    return ArrowBatch(
        spans,
        rows_to_arrow(batch.steps, STEP_SCHEMA),
        rows_to_arrow(batch.docs, DOC_SCHEMA),
        batch.rejected,
        batch.errors,
        _summarize(picked) if picked else TRACE_SCHEMA.empty_table(),
    )


# Columns that ``flatten`` leaves as integer nanoseconds since the epoch (0 = not set).
_NS_COLUMNS = frozenset({"start_time", "end_time"})


def rows_to_arrow(rows: list[tuple[object, ...]], schema: pa.Schema) -> pa.Table:
    """Row tuples (in schema order) -> a table; whole columns are converted at once."""
    if not rows:
        return schema.empty_table()
    columns = list(zip(*rows, strict=True))
    arrays = []
    for values, f in zip(columns, schema, strict=True):
        if f.name in _NS_COLUMNS and f.type == _TS:
            arrays.append(pa.array([_ns_to_us(v) for v in values], _TS))
        elif f.type == _TS and values.count(values[0]) == len(values):
            arrays.append(pa.repeat(pa.scalar(values[0], _TS), len(values)))  # a batch's received_at
        else:
            arrays.append(_column(values, f.type))
    return pa.table(arrays, schema=schema)


def _ns_to_us(ns: Any) -> int | None:
    """Nanoseconds since the epoch -> microseconds, rounded to the nearest; 0 is None."""
    return (ns + 500) // 1000 if ns else None


def _column(values: Sequence[object], typ: pa.DataType) -> pa.Array:
    """One Arrow column. Extracted integers come from untrusted attributes (a token count of
    "1e30", a document index past 2**31): one that does not fit its column becomes NULL rather than
    failing the whole group commit. The raw attribute JSON still holds the value."""
    if values and type(values[0]) is bytes and typ == _S:  # UTF-8 already (a span's attributes)
        return pa.array(values, pa.binary()).cast(_S)  # the cast checks the bytes are UTF-8
    try:
        return pa.array(values, type=typ)
    except (OverflowError, pa.ArrowInvalid):
        if not pa.types.is_integer(typ):
            raise
        bits = typ.bit_width
        if pa.types.is_signed_integer(typ):
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            lo, hi = 0, (1 << bits) - 1
        return pa.array([v if v is None or lo <= v <= hi else None for v in values], type=typ)  # type: ignore[operator,unused-ignore]
