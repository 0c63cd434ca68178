"""Export on every backend: the traces a selection names, and every per-trace row of them, by day."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from collector.api.export import export_traces, read_export
from collector.store import export
from tests.store.contract.build import spans_batch
from tests.store.contract.conftest import requires

DAY = datetime(2026, 3, 2, 12, 0, 0)
A, B = "0d" * 16, "0e" * 16


def test_selected_traces_are_exported_whole_by_day(backend: Any, tmp_path: Path) -> None:
    requires(backend, "export")
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(A), DAY - timedelta(days=1), DAY))
    backend.write_spans(con, spans_batch(bytes.fromhex(B), DAY, DAY, service="other"))
    tables = export.trace_tables(con)
    assert tables[0] == "traces" and {"spans", "steps", "step_documents"} <= set(tables)
    assert "human_labels" not in tables
    assert export.select_traces(con) == [A, B]  # oldest first
    assert export.select_traces(con, service="other") == [B]
    assert export.select_traces(con, until=DAY) == [A]  # until is exclusive
    assert export.select_traces(con, since=DAY) == [B]
    assert export.select_traces(con, limit=1) == [A]
    written = export_traces(con, [A], tmp_path)
    assert written["traces"] == 1 and written["spans"] == 3 and written["steps"] == 3
    spans = read_export(tmp_path, "spans")
    assert set(spans.column("trace_id").to_pylist()) == {A}
    assert set(spans.column("day").to_pylist()) == {"2026-03-01"}
