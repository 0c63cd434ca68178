"""A read-only node: ``ragfault query --catalog … --data-path …`` attaches the lake read-only and runs
the same sandboxed SQL as the server's API, while a collector writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from collector.store.lake.store import LakeStore
from tests.collector.test_store_write import arrow, rag_trace
from tests.store.conftest import Lake


def query(lake: Lake, sql: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGFAULT_EXTENSION_REPOSITORY": "false"}
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "query", sql, "--catalog", lake.catalog,
         "--data-path", str(lake.data_path), "--format", "json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_read_only_node_queries_the_lake_and_cannot_change_it(lake: Lake) -> None:
    writer = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        for _ in range(3):
            writer.write_spans(writer.cursor(), arrow(rag_trace()))
        done = query(lake, "SELECT count(*) AS spans, count(DISTINCT trace_id) AS traces FROM spans")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [{"spans": 6, "traces": 3}]
        # the sandbox of the API: no writes, no files
        for refused in ("DELETE FROM span_rows", "SELECT * FROM read_text('/etc/passwd')"):
            done = query(lake, refused)
            assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        writer.write_spans(writer.cursor(), arrow(rag_trace()))  # the collector writes on meanwhile
        assert json.loads(query(lake, "SELECT count(*) AS n FROM spans").stdout) == [{"n": 8}]
        # the report of a read-only node: the bundled queries over the lake's views (no gold cases yet)
        report = subprocess.run(
            [sys.executable, "-m", "ragfault.cli", "report", "--catalog", lake.catalog, "--data-path",
             str(lake.data_path)],
            capture_output=True, text=True, timeout=300, env={**os.environ, "RAGFAULT_EXTENSION_REPOSITORY": "false"},
        )  # fmt: skip
        assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
        assert "Root cause" in report.stdout, report.stdout
    finally:
        writer.close()
    done = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "query", "SELECT 1", "--catalog", lake.catalog],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "--data-path" in done.stderr
