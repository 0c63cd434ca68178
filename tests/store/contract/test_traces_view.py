"""The ``traces`` rows of both backends for the same spans: a table the file keeps up to date at
ingest and settle, a view the lake sums up from its spans and settle rows. Every column equal, for a
trace whole, one settled then opened again by a late span, one whose spans came twice, and one
that never settled."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from collector.ingest.span_rows import flatten
from collector.settling.settle import Settler
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import new_span_id, request, span
from tests.store.contract.build import spans_batch
from tests.store.contract.conftest import lake_set
from tests.store.contract.stored import T0

SETTLE = timedelta(seconds=2)
WHOLE, LATE, TWICE, OPEN = ("0b" * 16, "0c" * 16, "0d" * 16, "0e" * 16)


@pytest.fixture
def both(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[list[Any]]:
    if not lake_set():
        pytest.skip("needs the lake extra (DuckDB 1.5.5 + extension packages): run in .lake-venv")
    from collector.store import Store
    from collector.store.lake.store import LakeStore

    lake = request.getfixturevalue("lake")
    stores: list[Any] = [
        Store(tmp_path / "file.duckdb"),
        LakeStore(lake.catalog, lake.data_path, extension_repository=False),
    ]
    try:
        yield stores
    finally:
        for s in stores:
            s.close()


def _batches() -> tuple[list[Any], list[Any]]:
    """What is sent before the settle round and after it (the same batches for both stores)."""
    before = [spans_batch(bytes.fromhex(t), T0, T0) for t in (WHOLE, LATE, TWICE)]
    before.append(before[2])  # sent again
    late = T0 + timedelta(seconds=30)
    extra = span(bytes.fromhex(LATE), span_id=new_span_id(), parent=b"\x00" * 7 + b"\x01", name="late")
    after = [batch_to_arrow(flatten(request([extra], "shop"), received_at=late))]
    after.append(spans_batch(bytes.fromhex(OPEN), late, late))
    return before, after


def _feed(store: Any, before: list[Any], after: list[Any]) -> None:
    con = store.cursor()
    settler = Settler(
        store.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    for batch in before:
        store.write_spans(con, batch)
    assert settler.run_once(now=T0 + SETTLE + timedelta(seconds=1)) == 3
    for batch in after:
        store.write_spans(con, batch)


def test_traces_has_the_same_rows_on_both_backends(both: list[Any]) -> None:
    file, lake = both
    before, after = _batches()
    for store in both:
        _feed(store, before, after)
    read = "SELECT * FROM traces ORDER BY trace_id"
    columns = [r[0] for r in file.cursor().execute("DESCRIBE traces").fetchall()]
    assert [r[0] for r in lake.cursor().execute("DESCRIBE traces").fetchall()] == columns
    on_file, on_lake = (s.cursor().execute(read).fetchall() for s in both)
    assert len(on_file) == 4
    for f, k in zip(on_file, on_lake, strict=True):
        assert dict(zip(columns, k, strict=True)) == dict(zip(columns, f, strict=True))
