"""The lake's raw span tables and the views that keep one row per span, and making every table of a
lake when a collector opens it.

A lake table has no primary key, unique constraint or index, so a span sent to two collectors (or
re-sent past a collector's memory of it) may be stored twice in the raw tables ``span_rows``,
``step_rows`` and ``step_document_rows``. What users and the bundled SQL read, the views ``spans``,
``steps``, ``step_documents`` and ``traces``, keep one row per span; maintenance deletes the extra
copies (``store.LakeStore.compact_duplicates``). The raw tables have the single-file store's columns,
from their one definition (``collector.model``), so the two stores hold the same rows.
"""

from __future__ import annotations

import duckdb

from collector.ingest.batch import DOC_COLUMNS
from collector.model import DOCUMENT, SPAN, STEP
from collector.store.lake import ddl, schema
from collector.store.lake.attach import LAKE
from collector.store.sqlfiles import sql
from collector.store.tx import rollback

MODEL_TABLES = {t.name: t for t in (SPAN, STEP, DOCUMENT)}
# step columns a lake made before them fills from its spans when they are added (migration 029)
BACKFILLED_STEP_COLUMNS = {"run_group", "baseline_of"}
RAW_TABLES = {"spans": "span_rows", "steps": "step_rows", "step_documents": "step_document_rows"}
# a document's identity: its row but for the time it was received
DOC_KEY = ", ".join(c for c in DOC_COLUMNS if c != "received_at")
# what a user reads: one row per span whatever the raw tables hold
VIEWS = {
    "spans": "SELECT * FROM span_rows QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY received_at) = 1",
    "steps": "SELECT DISTINCT ON (trace_id, span_id) * FROM step_rows",
    "step_documents": f"SELECT DISTINCT ON ({DOC_KEY}) * FROM step_document_rows",
    # the single-file store keeps this table up to date at ingest; here it is summed up when read
    "traces": """
SELECT trace_id, min(received_at) AS first_received_at, max(received_at) AS last_received_at,
       count(*) AS span_count, count(*) FILTER (WHERE status_code = 'ERROR') AS error_count,
       bool_or(parent_span_id IS NULL) AS has_root,
       any_value(span_id) FILTER (WHERE parent_span_id IS NULL) AS root_span_id,
       any_value(name) FILTER (WHERE parent_span_id IS NULL) AS root_name,
       min(start_time) AS start_time, max(end_time) AS end_time,
       coalesce(any_value(service_name) FILTER (WHERE parent_span_id IS NULL), any_value(service_name)) AS service_name,
       any_value(case_id) AS case_id, any_value(run_id) AS run_id, any_value(session_id) AS session_id,
       any_value(user_id) AS user_id
FROM spans GROUP BY trace_id""",
}


def span_table_columns() -> dict[str, list[tuple[str, str, bool]]]:
    """(column, type, not null) of ``spans``, ``steps`` and ``step_documents``: the single-file
    store's columns, from their one definition (``collector.model``)."""
    return {
        table: [(c.name, c.duck, not c.nullable) for c in MODEL_TABLES[table].columns] for table in RAW_TABLES
    }


def create(con: duckdb.DuckDBPyConnection) -> None:
    """Every table and view of the lake, made or brought up to date (a later migration's column),
    safely when several collectors start at once; then each table's Parquet compression."""
    for table, columns in span_table_columns().items():
        raw = RAW_TABLES[table]
        cols = ", ".join(f"{c} {t}{' NOT NULL' if nn else ''}" for c, t, nn in columns)
        _ddl_retrying(con, f"CREATE TABLE IF NOT EXISTS {raw} ({cols})")
        have = {r[0] for r in con.execute(f"DESCRIBE {raw}").fetchall()}
        for c, t, _ in columns:  # a later migration's column
            if c not in have:
                _ddl_retrying(con, f"ALTER TABLE {raw} ADD COLUMN IF NOT EXISTS {c} {t}")
        if table == "steps" and have and not have >= BACKFILLED_STEP_COLUMNS:
            # steps stored before the run's marks were columns: theirs from their spans, once
            _ddl_retrying(con, sql("lake/tables", "backfill_run_marks"))
    # settling's and evaluation's tables, the file store's others, the views over all of them
    schema.create(con, VIEWS)
    _compress(con)


def _compress(con: duckdb.DuckDBPyConnection) -> None:
    """The Parquet files of the raw tables, the state tables (``schema.STATE_TABLES``) and the signal
    tables are written ZSTD-compressed (DuckLake's default is Snappy): the spans' attributes, where
    every document and the prompt are, take 2.5 times fewer bytes. Set once per table, kept in the
    catalog; a value set there by hand is left as it is."""
    have = {
        str(r[0])
        for r in con.execute(
            f"SELECT scope_entry FROM {LAKE}.options() WHERE option_name = 'parquet_compression' "
            "AND scope = 'TABLE'"
        ).fetchall()
    }
    missing = [
        f"CALL {LAKE}.set_option('parquet_compression', 'zstd', table_name => '{table}')"
        for table in (*RAW_TABLES.values(), *schema.STATE_TABLES, *schema.SIGNAL_TABLES)
        if not any(entry == table or entry.endswith(f".{table}") for entry in have)
    ]
    if missing:  # one catalog transaction (each DDL alone is a commit of its own)
        _ddl_retrying(con, ";\n".join(["BEGIN TRANSACTION", *missing, "COMMIT"]))


def _ddl_retrying(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """DDL that another collector starting at the same moment may commit first (``ddl``)."""
    ddl.idempotent(lambda: con.execute(sql), what="the lake's tables", undo=lambda: rollback(con))
