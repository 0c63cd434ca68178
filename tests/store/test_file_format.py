"""A new database file is written in the newest storage format its DuckDB has: DuckDB 1.x makes
v1.0.0 files by default, which keep every string over a few KB whole, so each span under a 10 KB
resource stored its 10 KB again. A file made before keeps its format."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import duckdb

from collector.ingest.span_rows import flatten
from collector.store import Store
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import kv, new_span_id, new_trace_id, request, span

T0 = datetime(2026, 3, 2, 12, 0, 0)
VERSION = "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = current_database()"


def _version(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    row = con.execute(VERSION).fetchone()
    assert row is not None and row[0], row
    found = re.match(r"v(\d+)\.(\d+)", str(row[0]))
    assert found is not None, row
    return int(found[1]), int(found[2])


def _write(path: Path, resource_bytes: int, requests: int = 8, spans: int = 250) -> int:
    """Spans under one resource of ``resource_bytes`` a request (different between requests, as
    hosts differ); the file's size after a checkpoint."""
    store = Store(str(path))
    con = store.cursor()
    for r in range(requests):
        tid = new_trace_id()
        req = request([span(tid, new_span_id(), name=f"op{i}") for i in range(spans)], "shop")
        for i in range(resource_bytes // 100):
            req.resource_spans[0].resource.attributes.append(
                kv(f"env.v{i:03d}", f"{r}-" + os.urandom(45).hex())
            )
        store.write_spans(con, batch_to_arrow(flatten(req, received_at=T0)))
    con.execute("CHECKPOINT")
    assert _version(con) >= (1, 2)
    store.close()
    return path.stat().st_size


def test_a_large_resource_repeated_on_every_span_costs_next_to_nothing_on_disk(tmp_path: Path) -> None:
    small = _write(tmp_path / "small.duckdb", 0)
    large = _write(tmp_path / "large.duckdb", 10_000)
    # 2,000 spans x 10 KB = 20 MB of copies as written; a v1.0.0 file grew by ~19.5 MB
    assert large - small < 2_000_000, (small, large)


def test_a_file_made_before_keeps_its_storage_format(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path), config={"storage_compatibility_version": "v1.0.0"}) as con:
        assert _version(con) == (1, 0)
    store = Store(str(path))
    try:
        assert _version(store.cursor()) == (1, 0)
    finally:
        store.close()
