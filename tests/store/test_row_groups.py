"""The store's file is attached with row groups of ``ROW_GROUP_ROWS`` rows, by every open and every
cursor: the checkpoint that completes a row group compresses all of it while every write waits, so
the group's size bounds that stall (bench/README.md, "a store in use")."""

from __future__ import annotations

from pathlib import Path

from collector.store import Store
from collector.store.file.connect import ROW_GROUP_ROWS, sibling


def _groups(con, table: str) -> list[int]:
    rows = con.execute(
        f"SELECT row_group_id, max(start + count) - min(start) FROM pragma_storage_info('{table}') "
        "WHERE column_id = 0 GROUP BY ALL ORDER BY 1"
    ).fetchall()
    return [n for _, n in rows]


def test_row_groups_keep_their_size_across_opens_and_cursors(tmp_path: Path) -> None:
    path = tmp_path / "ragfault.duckdb"
    store = Store(path)
    try:
        cur = store.cursor()  # a reader's connection: the store's tables, not the instance's first database
        assert cur.execute("SELECT current_database()").fetchone() == ("ragfault",)
        cur.execute(f"CREATE TABLE filler AS SELECT range AS i FROM range({2 * ROW_GROUP_ROWS + 100})")
        cur.execute("CHECKPOINT")
        assert _groups(cur, "filler") == [ROW_GROUP_ROWS, ROW_GROUP_ROWS, 100]
        assert sibling(cur).execute("SELECT count(*) FROM filler").fetchone() == (2 * ROW_GROUP_ROWS + 100,)
    finally:
        store.close()
    store = Store(path)  # opened again: appends fill groups of the same size, and none are merged back
    try:
        store.con.execute(f"INSERT INTO filler SELECT range FROM range({ROW_GROUP_ROWS})")
        store.con.execute("CHECKPOINT")
        sizes = _groups(store.con, "filler")
        assert sum(sizes) == 3 * ROW_GROUP_ROWS + 100
        assert max(sizes) == ROW_GROUP_ROWS
    finally:
        store.close()
    reader = Store(path, read_only=True)
    try:
        assert reader.cursor().execute("SELECT count(*) FROM filler").fetchone() == (
            3 * ROW_GROUP_ROWS + 100,
        )
    finally:
        reader.close()
