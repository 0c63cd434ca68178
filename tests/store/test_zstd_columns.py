"""Migration 020's ZSTD columns on a file that can hold them, and on one in an older storage format
(a file made by DuckDB 1.x), which opens, migrates and stores as before instead."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from collector.store import Store
from collector.store.schema import zstd_columns
from tests.collector.test_store_write import arrow, rag_trace
from tests.store.test_layout_before_after import compressions


def old_format_file(path: Path) -> None:
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{path}' AS f (STORAGE_VERSION 'v1.0.0')")
        con.execute("DETACH f")
    finally:
        con.close()


@pytest.mark.parametrize("old_format", [False, True])
def test_spans_stored_and_read_back_in_either_format(tmp_path: Path, old_format: bool) -> None:
    db = tmp_path / "t.duckdb"
    if old_format:
        old_format_file(db)
    # enough spans for DuckDB to compress at all (it leaves a few short strings uncompressed)
    batch = arrow([span for _ in range(200) for span in rag_trace()])
    sent = sorted(str(a) for a in batch.spans.column("attributes").to_pylist())
    store = Store(db)
    try:
        assert zstd_columns(store.con) is not old_format
        assert store.con.execute("SELECT count(*) FROM schema_migrations WHERE version = 20").fetchone() == (
            1,
        )
        assert store.write_spans(store.cursor(), batch) == 400
    finally:
        store.close()  # checkpoints
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = sorted(str(r[0]) for r in con.execute("SELECT attributes FROM spans").fetchall())
        assert stored == sent and any("refunds within 10 days" in a for a in stored)
        got = compressions(con, "spans", "attributes")
    finally:
        con.close()
    if old_format:
        assert "ZSTD" not in got and "Uncompressed" not in got
    else:
        assert got == {"ZSTD"}
