"""Migration 021 (``details`` of ``evaluations`` and ``evaluation_history`` ZSTD-compressed) changes
how verdicts are kept, not what users read: on the demo's database in the layout before 021, every
bundled query, the ``attribution`` view and every verdict row (in the order written) read the same
after migrating. A file in the older storage format (DuckDB 1.x's v1.0.0) migrates and keeps DuckDB's
own compression."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from collector.store import Store
from collector.store.schema import zstd_columns
from tests.demo_db import demo_db  # noqa: F401 (fixture)
from tests.needs import duckdb_at_least
from tests.store.test_layout_before_after import (
    compressions,
    copy_demo_before,
    differences,
    layout_views,
    read_all,
)
from tests.store.test_zstd_columns import old_format_file

BEFORE = 21  # the migration under test: the layout before it is 001-020

VERDICTS = {
    # in the order the rows were written (rowid), not sorted: the order is part of the layout
    "evaluations": "SELECT * FROM evaluations ORDER BY rowid",
    "evaluation_history": "SELECT * FROM evaluation_history ORDER BY rowid",
}


def layout_before(demo: Path, db: Path) -> None:
    """The demo database's rows in a file migrated up to 020 (copied table by table, by name),
    with an earlier generation of some verdicts in ``evaluation_history``."""
    con = duckdb.connect(str(db))
    try:
        copy_demo_before(demo, con, BEFORE)
        con.execute(
            "INSERT INTO evaluation_history SELECT * REPLACE (generation - 1 AS generation) "
            "FROM evaluations WHERE details IS NOT NULL"
        )
        layout_views(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def read_verdicts(
    con: duckdb.DuckDBPyConnection, layout_before: bool = False
) -> dict[str, list[tuple[Any, ...]]]:
    out = read_all(con, layout_before=layout_before)
    for name, sql in VERDICTS.items():
        out[name] = con.execute(sql).fetchall()
    return out


@pytest.fixture(scope="module")
def before_db(
    tmp_path_factory: pytest.TempPathFactory,
    demo_db: Path,  # noqa: F811
) -> tuple[Path, dict[str, list[tuple[Any, ...]]]]:
    db = tmp_path_factory.mktemp("verdicts") / "before-021.duckdb"
    layout_before(demo_db, db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert "ZSTD" not in compressions(con, "evaluations", "details")
        return db, read_verdicts(con, layout_before=True)
    finally:
        con.close()


@duckdb_at_least(2, "a column forced to ZSTD is stored uncompressed")
def test_verdicts_read_the_same_after_migration_021(
    tmp_path: Path,
    before_db: tuple[Path, dict[str, list[tuple[Any, ...]]]],
) -> None:
    db = tmp_path / "before-021.duckdb"
    shutil.copy(before_db[0], db)
    before = before_db[1]
    for name in ("evaluations", "evaluation_history", "query attribution", "attribution view"):
        assert before[name], f"{name} is empty on the demo database"
    store = Store(db)  # applies 021
    store.close()  # checkpoints: the rows are rewritten in the new layout
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM schema_migrations WHERE version = 21").fetchone() == (1,)
        assert compressions(con, "evaluations", "details") == {"ZSTD"}
        assert compressions(con, "evaluation_history", "details") == {"ZSTD"}
        after = read_verdicts(con)
    finally:
        con.close()
    assert differences(before, after) == []


def test_the_comparison_sees_verdicts_reordered(
    tmp_path: Path,
    before_db: tuple[Path, dict[str, list[tuple[Any, ...]]]],
) -> None:
    """A rebuild that kept the rows but not their order would be told apart."""
    db = tmp_path / "reordered.duckdb"
    shutil.copy(before_db[0], db)
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE TABLE shuffled AS SELECT * FROM evaluations ORDER BY metric DESC, trace_id DESC")
        con.execute("DELETE FROM evaluations")
        con.execute("INSERT INTO evaluations SELECT * FROM shuffled")
        con.execute("DROP TABLE shuffled")
    finally:
        con.close()
    Store(db).close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        found = differences(before_db[1], read_verdicts(con))
    finally:
        con.close()
    n = len(before_db[1]["evaluations"])
    assert f"evaluations: {n} rows vs {n}" in found


def test_an_older_storage_format_migrates_and_keeps_duckdbs_choice(tmp_path: Path) -> None:
    db = tmp_path / "v1.duckdb"
    old_format_file(db)
    store = Store(db)
    try:
        assert not zstd_columns(store.con)
        assert store.con.execute("SELECT count(*) FROM schema_migrations WHERE version = 21").fetchone() == (
            1,
        )
        rows = [
            (f"t{i:04d}", "retrieval", "1", "cheap", "recall@5", "ok", f'{{"missed": ["unit {i}"]}}', 1)
            for i in range(3000)
        ]
        store.con.executemany(
            "INSERT INTO evaluations (trace_id, evaluator, evaluator_version, tier, metric, status, details, "
            "generation, evaluated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())",
            rows,
        )
    finally:
        store.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = compressions(con, "evaluations", "details")
        stored = con.execute("SELECT trace_id, details FROM evaluations ORDER BY rowid").fetchall()
    finally:
        con.close()
    assert "ZSTD" not in got and "Uncompressed" not in got
    assert stored == [(r[0], r[6]) for r in rows]
