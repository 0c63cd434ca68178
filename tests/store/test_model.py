"""The one definition of a span, a step, a document and a verdict (``collector.model``) is what the
store holds: a database file migrated from scratch has exactly its columns, in its order, with its
types and NOT NULLs; the migrations compress exactly its ZSTD columns; and what is derived from it
(the ingest column lists and Arrow schemas, the verdict schema, the lake's DDL) and what projects it
(the assembly and evaluator views, the SQL that fetches their rows) agree with it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import duckdb
import pytest

from collector.ingest import batch
from collector.model import DOCUMENT, SPAN, STEP, TABLES, VERDICT, VERDICT_HISTORY, Table
from collector.settling.assemble import DOC_FIELDS, StepView
from collector.store import Store, schema, verdicts
from collector.store.lake import schema as lake_schema
from collector.store.lake import tables as lake_tables
from collector.store.schema import migrations
from collector.store.sqlfiles import statement
from evaluators.service.running import EVAL_SCHEMA
from evaluators.trace_view import StepDoc, StepInfo


def stored_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, bool]]:
    """(name, DuckDB type, nullable) of a table as the database describes it, in order."""
    return [
        (str(c), str(t), n == "YES")
        for c, t, n in con.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
    ]


def modelled(table: Table, *, nullable: bool | None = None) -> list[tuple[str, str, bool]]:
    return [(c.name, c.duck, c.nullable if nullable is None else nullable) for c in table.columns]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file the store created and migrated from scratch."""
    path = tmp_path_factory.mktemp("model") / "fresh.duckdb"
    Store(str(path)).close()
    return path


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_a_database_migrated_from_scratch_has_exactly_the_models_columns(
    migrated: Path, table: Table
) -> None:
    con = duckdb.connect(str(migrated), read_only=True)
    try:
        assert stored_columns(con, table.name) == modelled(table)
    finally:
        con.close()


def test_the_verdict_history_has_the_verdicts_columns_none_required(migrated: Path) -> None:
    con = duckdb.connect(str(migrated), read_only=True)
    try:
        assert stored_columns(con, VERDICT_HISTORY) == modelled(VERDICT, nullable=True)
    finally:
        con.close()


def _latest_definitions() -> dict[str, str]:
    """Each table's column list in the last migration that creates it (a rebuilt ``x_NNN`` counts
    as ``x``)."""
    out: dict[str, str] = {}
    create = re.compile(r"CREATE TABLE (\w+?)(?:_\d{3})? \((.*?)\n\);", re.DOTALL)
    for _, _, sql in migrations():
        for name, body in create.findall(sql):
            out[name] = body
    return out


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_the_migrations_compress_exactly_the_models_zstd_columns(table: Table) -> None:
    body = _latest_definitions()[table.name]
    compressed = set(re.findall(r"^\s*(\w+)\s+[\w\[\]]+\s+USING COMPRESSION zstd", body, re.MULTILINE))
    assert compressed == {c.name for c in table.columns if c.zstd}


def test_the_ingest_lists_and_schemas_are_the_models() -> None:
    assert SPAN.names == batch.SPAN_COLUMNS  # every span column is written at ingest
    assert STEP.names == batch.STEP_COLUMNS
    assert tuple(c for c in DOCUMENT.names if c != "content_source") == batch.DOC_COLUMNS  # filled at settle
    for arrow_schema, table in (
        (schema.SPAN_SCHEMA, SPAN),
        (schema.STEP_SCHEMA, STEP),
        (schema.DOC_SCHEMA, DOCUMENT),
    ):
        assert arrow_schema.names == list(table.ingest_names)
        assert [f.type for f in arrow_schema] == [table.column(n).arrow for n in table.ingest_names]
    assert EVAL_SCHEMA.equals(VERDICT.arrow_schema())
    assert VERDICT.names == verdicts.EVAL_COLUMNS


def test_the_lakes_raw_tables_and_appended_verdicts_are_declared_from_the_model() -> None:
    declared = lake_tables.span_table_columns()
    for table in (SPAN, STEP, DOCUMENT):
        assert declared[table.name] == [(c.name, c.duck, not c.nullable) for c in table.columns]
    made = lake_schema.tables()
    assert made["evaluation_rows"] == ", ".join(f"{c.name} {c.duck}" for c in VERDICT.columns)
    assert made["derived_documents"].startswith(", ".join(f"{c.name} {c.duck}" for c in DOCUMENT.columns))


def _select_list(sql: str) -> list[str]:
    head = re.search(r"^SELECT (.*?)\s+FROM steps", sql, re.DOTALL | re.MULTILINE)
    assert head is not None, sql
    return [c.strip() for c in head.group(1).split(",")]


def test_the_views_of_a_step_and_a_document_are_projections_of_the_model() -> None:
    """StepView (assembly), StepInfo and StepDoc (evaluators) hold model columns only, with the
    statements that fetch them selecting exactly their fields in their order."""
    step_view = [f.name for f in dataclasses.fields(StepView)]
    step_info = [f.name for f in dataclasses.fields(StepInfo)]
    assert set(step_view) <= set(STEP.names) and set(step_info) <= set(STEP.names)
    assert set(StepDoc._fields) <= set(DOCUMENT.names) and set(DOC_FIELDS) <= set(DOCUMENT.names)
    assert _select_list(statement("settle", "trace_steps").sql) == ["trace_id", *step_view]
    assert _select_list(statement("verdicts", "step_rows").sql) == ["trace_id", *step_info]
