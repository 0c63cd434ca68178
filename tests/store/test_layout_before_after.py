"""The storage layout of migration 020 (per-column compression) changes how rows are kept, not what
users read: the bundled queries, the ``attribution`` view, ``SELECT attributes FROM spans`` and the
step and document rows give the same results on a database in the layout before it (migrations up to
the one before 020, the demo's rows copied in), after that database is migrated, and on the demo's
database written in the new layout by a real server."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from collector.store import Store
from collector.store.schema import migrations
from collector.store.templates import filled
from queries import all_queries
from tests.demo_db import demo_db  # noqa: F401 (fixture)
from tests.needs import duckdb_at_least

LAYOUT = 20  # the first migration of the new layout
RUN = "demo-v1"


def readings() -> dict[str, tuple[str, dict[str, Any]]]:
    """What is compared: every bundled query (the demo's run where one is asked for), the
    attribution view, the spans' raw attributes, the steps and the step documents."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, q in sorted(all_queries().items()):
        given: dict[str, object] = {p: RUN for p in ("run_id", "base_run", "new_run") if p in q.params}
        out[f"query {name}"] = (q.sql, q.bind(given))
    out["attribution view"] = ("SELECT * FROM attribution", {})
    out["spans attributes"] = ("SELECT trace_id, span_id, attributes, events, links FROM spans", {})
    # (a column a later migration added holds nothing on rows stored before it: it is left out)
    out["steps"] = (
        "SELECT COLUMNS(lambda c: c NOT IN ('provenance', 'run_group', 'baseline_of')) FROM steps",
        {},
    )
    out["step_documents"] = ("SELECT * FROM step_documents", {})
    return out


def read_all(con: duckdb.DuckDBPyConnection, layout_before: bool = False) -> dict[str, list[tuple[Any, ...]]]:
    """Each reading's rows, in a canonical order (a query without ORDER BY may return any). On a
    layout before a migration (``layout_before``), a bundled view it cannot hold (``layout_views``) is
    not read: neither its query nor a reading that names it; every other reading must run."""
    lacking = _lacking_views(con) if layout_before else set()
    out = {}
    for name, (sql, params) in readings().items():
        if name.removeprefix("query ") in lacking or any(re.search(rf"\b{v}\b", sql) for v in lacking):
            continue
        rows = con.execute(sql, params).fetchall()
        out[name] = sorted(rows, key=repr)
    return out


def _lacking_views(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The bundled views the database does not hold."""
    held = {
        str(r[0])
        for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database()"
        ).fetchall()
    }
    return {q.view for q in all_queries().values() if q.view} - held


def layout_views(con: duckdb.DuckDBPyConnection) -> None:
    """The bundled views a layout before a migration can hold: a view that reads a column a later
    migration adds (``run_marks``: ``steps.run_group``, migration 029) cannot be made on it."""
    for q in all_queries().values():
        if q.view:
            try:
                con.execute(filled("views", "create_view", view=q.view, body=q.sql))
            except (duckdb.BinderException, duckdb.CatalogException):
                continue


def differences(a: dict[str, list[tuple[Any, ...]]], b: dict[str, list[tuple[Any, ...]]]) -> list[str]:
    return [f"{name}: {len(a[name])} rows vs {len(b[name])}" for name in a if a[name] != b[name]]


def copy_demo_before(demo: Path, con: duckdb.DuckDBPyConnection, before: int) -> None:
    """Apply the migrations before ``before`` to the empty database of ``con`` and copy the demo
    database's rows in, table by table, by column name."""
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, "
        "applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    for version, name, sql in migrations():
        # the layout before ``before``, and the later migrations that only add tables of their own
        # (the bundled queries read them; they change no table the layout migration rewrites)
        if version >= before and (version <= before or not _only_adds_tables(sql)):
            continue
        con.execute(sql)
        con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, name])
    con.execute(f"ATTACH '{demo}' AS demo (READ_ONLY)")
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND table_name <> 'schema_migrations'"
    ).fetchall()
    for (table,) in tables:
        cols = ", ".join(
            f'"{c}"'
            for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND table_name = ? ORDER BY column_index",
                [table],
            ).fetchall()
        )
        con.execute(f'INSERT INTO "{table}" ({cols}) SELECT {cols} FROM demo."{table}"')
    con.execute("DETACH demo")


def _only_adds_tables(sql: str) -> bool:
    """Whether every statement of a migration is a ``CREATE TABLE`` (comments aside)."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    statements = [st.strip() for st in body.split(";") if st.strip()]
    return bool(statements) and all(re.match(r"(?i)CREATE\s+TABLE\b", st) for st in statements)


def old_layout(demo: Path, db: Path) -> None:
    """A database in the layout before migration 020 holding the demo database's rows (copied table
    by table, by column name), in the newest storage format, as the store makes a new file (one in
    DuckDB 1.x's default v1.0.0 format cannot hold ZSTD columns: ``schema.zstd_columns``)."""
    con = duckdb.connect(str(db), config={"storage_compatibility_version": "latest"})
    try:
        copy_demo_before(demo, con, LAYOUT)
        layout_views(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def compressions(con: duckdb.DuckDBPyConnection, table: str, column: str) -> set[str]:
    return {
        str(r[0])
        for r in con.execute(
            f"SELECT DISTINCT compression FROM pragma_storage_info('{table}') "
            "WHERE column_name = ? AND segment_type <> 'VALIDITY'",
            [column],
        ).fetchall()
    }


@pytest.fixture(scope="module")
def old_db(
    tmp_path_factory: pytest.TempPathFactory,
    demo_db: Path,  # noqa: F811
) -> tuple[Path, dict[str, list[tuple[Any, ...]]]]:
    """The demo's rows in the old layout (a file to copy, not to migrate) and what it reads."""
    db = tmp_path_factory.mktemp("layout") / "old-layout.duckdb"
    old_layout(demo_db, db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert "ZSTD" not in compressions(con, "spans", "attributes")
        return db, read_all(con, layout_before=True)
    finally:
        con.close()


@duckdb_at_least(2, "a column forced to ZSTD is stored uncompressed")
def test_queries_read_the_same_before_and_after_the_layout_change(
    tmp_path: Path,
    demo_db: Path,  # noqa: F811
    old_db: tuple[Path, dict[str, list[tuple[Any, ...]]]],
) -> None:
    db = tmp_path / "old-layout.duckdb"
    shutil.copy(old_db[0], db)
    before = old_db[1]
    # the demo filled what is compared: a reading of nothing would prove nothing
    for name in (
        "query attribution",
        "query root_causes",
        "attribution view",
        "spans attributes",
        "step_documents",
    ):
        assert before[name], f"{name} is empty on the demo database"

    store = Store(db)  # applies 020 and every later migration
    store.close()  # checkpoints: the rows are rewritten in the new layout
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert compressions(con, "spans", "attributes") == {"ZSTD"}
        assert compressions(con, "steps", "input_text") == {"ZSTD"}
        migrated = read_all(con)
    finally:
        con.close()
    assert differences(before, migrated) == []

    # the demo's own database: the same traces written by a real server in the new layout
    fresh = tmp_path / "fresh.duckdb"
    shutil.copy(demo_db, fresh)
    con = duckdb.connect(str(fresh), read_only=True)
    try:
        assert compressions(con, "spans", "attributes") == {"ZSTD"}
        written = read_all(con)
    finally:
        con.close()
    assert differences(before, written) == []


@pytest.mark.parametrize(
    "damage",
    [
        # a span lost on the way
        "DELETE FROM spans WHERE span_id = (SELECT min(span_id) FROM spans)",
        # one attribute value changed
        "UPDATE spans SET attributes = replace(CAST(attributes AS VARCHAR), 'a', 'b') "
        "WHERE span_id = (SELECT min(span_id) FROM spans WHERE CAST(attributes AS VARCHAR) LIKE '%a%')",
        # two text columns swapped in a rebuilt table
        "UPDATE steps SET query_text = input_text, input_text = query_text WHERE query_text IS DISTINCT FROM input_text",
    ],
)
def test_the_comparison_sees_a_layout_change_that_changed_rows(
    tmp_path: Path,
    old_db: tuple[Path, dict[str, list[tuple[Any, ...]]]],
    damage: str,
) -> None:
    before = old_db[1]
    damaged = tmp_path / "damaged.duckdb"
    shutil.copy(old_db[0], damaged)
    con = duckdb.connect(str(damaged))
    try:
        con.execute(damage)
    finally:
        con.close()
    store = Store(damaged)
    store.close()
    con = duckdb.connect(str(damaged), read_only=True)
    try:
        assert differences(before, read_all(con)) != []
    finally:
        con.close()
