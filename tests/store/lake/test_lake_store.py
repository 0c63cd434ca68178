"""The lake store against a real PostgreSQL catalog: the single-file store's columns, one row per span
in what users read whatever the raw tables hold, compaction of the extra copies, the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.ingest.batch import ArrowBatch
from collector.store import Store
from collector.store.lake.store import LakeStore
from collector.store.lake.tables import RAW_TABLES
from collector.store.reader import run_select
from ragfault_core.errors import ConfigError, QueryRefused
from tests.collector.otlp_build import new_span_id, new_trace_id, span
from tests.collector.test_store_write import arrow, rag_trace
from tests.store.conftest import Lake
from tests.store.contract.build import logs_batch, points_batch
from tests.store.contract.stored import T0


@pytest.fixture
def opened(lake: Lake) -> Iterator[list[LakeStore]]:
    """Lake stores opened on the test's lake, closed at the end (``open`` opens another)."""
    stores: list[LakeStore] = []
    yield stores
    for s in stores:
        s.close()


def open_lake(lake: Lake, stores: list[LakeStore]) -> LakeStore:
    s = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    stores.append(s)
    return s


def counts(store: LakeStore) -> dict[str, int]:
    con = store.cursor()
    out = {}
    for table in (
        "span_rows",
        "spans",
        "step_rows",
        "steps",
        "step_document_rows",
        "step_documents",
        "traces",
    ):
        out[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
    return out


def test_raw_tables_have_the_single_file_stores_columns(
    lake: Lake, opened: list[LakeStore], tmp_path: Path
) -> None:
    lake_store = open_lake(lake, opened)
    duck = Store(tmp_path / "single.duckdb")
    try:
        for table, raw in RAW_TABLES.items():
            q = "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position"
            expected = duck.cursor().execute(q, [table]).fetchall()
            got = (
                lake_store.cursor()
                .execute(q.replace("WHERE", "WHERE table_catalog = 'lake' AND"), [raw])
                .fetchall()
            )
            assert got == expected and len(got) > 5
    finally:
        duck.close()


def test_a_resent_request_and_a_span_twice_in_one_batch_are_stored_once(
    lake: Lake, opened: list[LakeStore]
) -> None:
    store = open_lake(lake, opened)
    con = store.cursor()
    first = rag_trace()
    assert store.write_spans(con, arrow(first)) == 2
    assert store.write_spans(con, arrow(first)) == 0  # re-sent: dropped at commit
    second = rag_trace()
    merged = ArrowBatch.merge([arrow(second), arrow(second[1:]), arrow(first[:1])])
    assert store.write_spans(con, merged) == 2
    assert counts(store) == {
        "span_rows": 4, "spans": 4, "step_rows": 4, "steps": 4,
        "step_document_rows": 6, "step_documents": 6, "traces": 2,
    }  # fmt: skip


def test_a_restarted_collector_remembers_what_the_lake_received_lately(
    lake: Lake, opened: list[LakeStore]
) -> None:
    spans = rag_trace()
    before = open_lake(lake, opened)
    assert before.write_spans(before.cursor(), arrow(spans)) == 2
    before.close()
    after = open_lake(lake, opened)
    assert after.write_spans(after.cursor(), arrow(spans)) == 0
    assert counts(after)["span_rows"] == 2


def test_a_span_stored_by_two_collectors_is_read_once_and_compacted(
    lake: Lake, opened: list[LakeStore]
) -> None:
    a, b = open_lake(lake, opened), open_lake(lake, opened)  # both started before either wrote
    shared, only_a = rag_trace(), rag_trace()
    assert a.write_spans(a.cursor(), arrow(shared + only_a)) == 4
    assert b.write_spans(b.cursor(), arrow(shared)) == 2  # b cannot know a stored them
    record = ArrowBatch.merge([logs_batch(T0, T0), points_batch(T0, T0)])
    assert a.write_signals(a.cursor(), record) == (1, 1)
    assert b.write_signals(b.cursor(), record) == (1, 1)  # nor that a stored these
    raw = counts(a)
    assert raw == {
        "span_rows": 6, "spans": 4, "step_rows": 6, "steps": 4,
        "step_document_rows": 9, "step_documents": 6, "traces": 2,
    }  # fmt: skip
    spans_before = sorted(a.cursor().execute("SELECT * EXCLUDE (received_at) FROM spans").fetchall())
    assert a.compact_duplicates() == {
        "span_rows": 2, "step_rows": 2, "step_document_rows": 3, "log_records": 1, "metric_points": 1,
    }  # fmt: skip
    assert counts(b) == {
        "span_rows": 4, "spans": 4, "step_rows": 4, "steps": 4,
        "step_document_rows": 6, "step_documents": 6, "traces": 2,
    }  # fmt: skip
    assert sorted(b.cursor().execute("SELECT * EXCLUDE (received_at) FROM spans").fetchall()) == spans_before
    assert a.compact_duplicates() == {
        "span_rows": 0, "step_rows": 0, "step_document_rows": 0, "log_records": 0, "metric_points": 0,
    }  # fmt: skip
    assert b.cursor().execute("SELECT count(*) FROM log_records").fetchall() == [(1,)]
    per_trace = b.cursor().execute("SELECT span_count, has_root FROM traces ORDER BY trace_id").fetchall()
    assert per_trace == [(2, True), (2, True)]


def test_user_sql_reads_the_lake_and_nothing_else(lake: Lake, opened: list[LakeStore]) -> None:
    store = open_lake(lake, opened)
    store.write_spans(store.cursor(), arrow(rag_trace()))
    result = run_select(store.cursor(), "SELECT count(*) AS n FROM spans", {}, row_cap=10, timeout=30)
    assert result.rows == [[2]]
    with pytest.raises(QueryRefused, match="disabled by configuration"):
        run_select(store.cursor(), "SELECT * FROM read_csv('/etc/hostname')", {}, row_cap=10, timeout=30)
    with pytest.raises(QueryRefused, match="only SELECT"):
        run_select(store.cursor(), "DELETE FROM span_rows", {}, row_cap=10, timeout=30)
    with pytest.raises(QueryRefused):  # a read-only transaction: no write through a SELECT either
        run_select(
            store.cursor(),
            "SELECT * FROM (INSERT INTO span_rows (trace_id, span_id) VALUES ('a', 'b') RETURNING *)",
            {},
            row_cap=10,
            timeout=30,
        )
    assert counts(store)["span_rows"] == 2


def test_an_unreachable_catalog_is_a_clear_error(lake: Lake, tmp_path: Path) -> None:
    from tests.pg import free_port

    with pytest.raises(ConfigError, match=r"cannot attach the lake at postgresql://u:\*\*\*@127.0.0.1"):
        LakeStore(
            f"postgresql://u:secret@127.0.0.1:{free_port()}/x", tmp_path / "d", extension_repository=False
        )


def test_a_lake_made_before_the_steps_held_the_runs_marks_fills_them_from_its_spans(
    lake: Lake, opened: list[LakeStore]
) -> None:
    tid, root = new_trace_id(), new_span_id()
    marked = [
        span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN", "ragfault.run_id": "r1",
                                                     "baggage.ragfault.run_group": "cfg"}),
        span(tid, parent=root, name="llm", attrs={"openinference.span.kind": "LLM", "ragfault.run_id": "r1",
                                                  "metadata": '{"ragfault": {"baseline_of": "r0"}}'}),
    ]  # fmt: skip
    before = open_lake(lake, opened)
    con = before.cursor()
    assert before.write_spans(con, arrow(marked)) == 2
    assert con.execute("SELECT run_id, run_group, baseline_of FROM run_marks").fetchall() == [
        ("r1", "cfg", "r0")
    ]
    # the layout before the columns: steps stored without them
    con.execute("ALTER TABLE step_rows DROP COLUMN run_group")
    con.execute("ALTER TABLE step_rows DROP COLUMN baseline_of")
    before.close()
    after = open_lake(lake, opened)  # adds the columns and fills them from the spans
    con = after.cursor()
    assert con.execute("SELECT name, run_group, baseline_of FROM steps ORDER BY name").fetchall() == [
        ("llm", None, "r0"),
        ("query", "cfg", None),
    ]
    assert con.execute("SELECT run_id, run_group, baseline_of, source FROM run_marks").fetchall() == [
        ("r1", "cfg", "r0", "traces")
    ]
