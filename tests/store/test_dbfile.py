"""The store's probe of a ``--db`` file (``collector.store.dbfile``): what it reads of a file it does
not open for writing, and the mark the demo leaves on the files it makes. ``tests/ragfault`` runs the
commands that decide from these (refusals, ``demo --force``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from collector.store import Store, dbfile
from collector.store.sqlfiles import sql
from ragfault import dbfile as cli_dbfile


def test_a_demo_mark_is_the_files_one_table(tmp_path: Path) -> None:
    path = tmp_path / "o'neil demo.duckdb"  # a quote in the name: ATTACH's literal is quoted
    at = datetime(2026, 12, 1, 8, 30)
    dbfile.mark_demo(path, at, "made by a test")
    assert not Path(f"{path}.wal").exists()  # written whole
    assert dbfile.tables(path) == (dbfile.DEMO_TABLE,)
    assert cli_dbfile.catalog(path, what_to_do="-").demo
    assert dbfile.foreign_values(path, ["a"], ["b"]) is None  # no traces or gold cases yet
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute(f"SELECT made_at, note FROM {dbfile.DEMO_TABLE}").fetchall() == [
            (at, "made by a test")
        ]
    finally:
        con.close()


def test_the_demo_table_is_one_name() -> None:
    assert cli_dbfile.DEMO_TABLE == dbfile.DEMO_TABLE
    for name in ("demo_mark_table", "demo_mark"):
        assert f"made.{dbfile.DEMO_TABLE} " in sql("dbfile", name)


def test_a_ragfault_files_tables_and_what_it_holds_beyond_the_allowed(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    store = Store(path)
    try:
        store.con.execute(
            "INSERT INTO traces (trace_id, service_name) VALUES ('t1', 'shop'), ('t2', NULL), ('t3', 'ok'), ('t4', 'ok')"
        )
        store.con.execute(
            "INSERT INTO gold_cases (case_id, dataset, query) VALUES ('c1', 'ok', 'q'), ('c2', 'theirs', 'q')"
        )
    finally:
        store.close()
    found = dbfile.tables(path)
    assert "schema_migrations" in found and "traces" in found and list(found) == sorted(found)
    services, datasets = dbfile.foreign_values(path, ["ok"], ["ok"]) or ([], [])
    assert sorted(services) == ["(none)", "shop"] and datasets == ["theirs"]
    assert dbfile.foreign_values(path, ["ok", "shop"], ["ok", "theirs"]) == (["(none)"], [])


def test_a_file_that_cannot_be_attached_says_why(tmp_path: Path) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_text("not a database\n" * 10, encoding="utf-8")
    with pytest.raises(dbfile.CannotOpen) as caught:
        dbfile.tables(path)
    assert str(caught.value).strip()
