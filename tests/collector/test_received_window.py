"""Reading a batch of traces through the received_at window (migration 005).

Steps and documents are read with a filter on the time their span was received, between the
batch's first and last received span, so the scan skips the rest of the table. These tests hold
that nothing of a trace falls outside its window: spans received hours apart, out of order across
commits, derived context documents, and rows written before the column existed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from collector.ingest.span_rows import flatten
from collector.settling.settle import load_trace_parts
from collector.store import Store
from collector.store.reader import received_window, window_sql
from collector.store.schema import batch_to_arrow, migrations
from evaluators.service.runner import fetch_tables
from ragfault.local import LocalStore
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span

T0 = datetime(2026, 11, 1, 12, 0, 0)


def rag_spans(tid: bytes) -> list:
    root = new_span_id()
    docs = {
        f"retrieval.documents.{i}.document.{k}": v
        for i in range(3)
        for k, v in (("id", f"chunk-{i}"), ("content", f"refunds within {i + 10} days"))
    }
    return [
        span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN", "input.value": "refund?"}),
        span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **docs}),
        span(tid, parent=root, name="llm", attrs={
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "refunds within 10 days. refund?",
            "llm.output_messages.0.message.content": "10 days"}),
    ]  # fmt: skip


def write(store: Store, spans: list, at: datetime) -> None:
    store.write_spans(store.con, batch_to_arrow(flatten(request(spans), received_at=at)))


def test_every_row_of_a_trace_is_inside_its_window(tmp_path: Path) -> None:
    local = LocalStore(str(tmp_path / "w.duckdb"))
    store = local.store
    late_tid, other_tid = new_trace_id(), new_trace_id()
    late = rag_spans(late_tid)
    # the root and the retriever now, the LLM call three hours later; other traces in between,
    # and one committed first although it was received (decoded) before
    write(store, late[:2], T0)
    for h in range(1, 3):
        write(store, rag_spans(new_trace_id()), T0 + timedelta(hours=h))
    write(store, late[2:], T0 + timedelta(hours=3))
    early = rag_spans(other_tid)
    write(store, early[1:], T0 + timedelta(hours=4))
    write(store, early[:1], T0 + timedelta(hours=3, minutes=59))  # received before, committed after
    assert local.settle_all() == 4

    first, last = store.con.execute(
        "SELECT first_received_at, last_received_at FROM traces WHERE trace_id = $t", {"t": other_tid.hex()}
    ).fetchall()[0]
    assert first == T0 + timedelta(hours=3, minutes=59)  # the earlier receive time, not the first commit
    assert last == T0 + timedelta(hours=4)

    for tid in (late_tid.hex(), other_tid.hex()):
        tables = fetch_tables(store.con, [tid])
        assert tables.steps.num_rows == 3
        stages = sorted(tables.docs.column("stage").to_pylist())
        # three candidates, and the context derived at settling from the LLM's prompt
        assert stages.count("candidate") == 3 and "context" in stages

        row = store.con.execute(
            "SELECT first_received_at, last_received_at FROM traces WHERE trace_id = $t", {"t": tid}
        ).fetchall()[0]
        steps, docs = load_trace_parts(store.con, [tid], received_window([row]))
        assert len(steps[tid]) == 3 and len(docs[tid]) == 3
    # the derived context documents carry a receive time inside their trace's window
    assert store.con.execute(
        "SELECT count(*) FROM step_documents d JOIN traces t USING (trace_id) "
        "WHERE d.received_at NOT BETWEEN t.first_received_at AND t.last_received_at OR d.received_at IS NULL"
    ).fetchall() == [(0,)]
    local.close()


def test_migration_fills_receive_times_of_rows_written_before(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)"
    )
    for version, name, sql in migrations():
        if version >= 5:
            break
        con.execute(sql)
        con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, name])
    # rows as the collector wrote them before migration 005: no received_at on steps or documents,
    # and a trace whose first span was committed after a later one
    tid = new_trace_id().hex()
    con.execute(
        "INSERT INTO spans (trace_id, span_id, name, received_at) VALUES "
        "($t, 'a1', 'root', $r1), ($t, 'a2', 'retrieve', $r2)",
        {"t": tid, "r1": T0, "r2": T0 - timedelta(seconds=5)},
    )
    con.execute("INSERT INTO steps (trace_id, span_id, step_type) VALUES ($t, 'a1', 'chain'), ($t, 'a2', 'retrieval')",
                {"t": tid})  # fmt: skip
    con.execute(
        "INSERT INTO step_documents (trace_id, span_id, stage, position, content, source) "
        "VALUES ($t, 'a2', 'candidate', 0, 'x', 'span')",
        {"t": tid},
    )
    con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count) VALUES ($t, $r, $r, 2)",
        {"t": tid, "r": T0},
    )
    con.close()

    store = Store(db)  # applies migration 005
    try:
        assert store.con.execute("SELECT span_id, received_at FROM steps ORDER BY span_id").fetchall() == [
            ("a1", T0), ("a2", T0 - timedelta(seconds=5))
        ]  # fmt: skip
        assert store.con.execute("SELECT received_at FROM step_documents").fetchall() == [
            (T0 - timedelta(seconds=5),)
        ]
        assert store.con.execute("SELECT first_received_at FROM traces").fetchall() == [
            (T0 - timedelta(seconds=5),)
        ]
        assert fetch_tables(store.con, [tid]).steps.num_rows == 2
    finally:
        store.close()


def test_a_window_is_given_up_when_a_time_is_unknown() -> None:
    assert received_window([]) is None
    assert received_window([(T0, None)]) is None
    assert received_window([(T0, T0 + timedelta(1)), (T0 - timedelta(1), T0)]) == (
        T0 - timedelta(1),
        T0 + timedelta(1),
    )
    assert window_sql(received_window([(T0, T0), (None, T0)])) == ("", {})
    assert window_sql((T0, T0), "d.received_at") == (
        " AND d.received_at BETWEEN $lo AND $hi",
        {"lo": T0, "hi": T0},
    )
