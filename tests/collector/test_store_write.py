"""The writer's two paths: all spans new (plain inserts) and some spans already stored or repeated in
one batch (rolled back, then written keeping the new spans once). Both leave spans, steps, documents
and the trace totals in agreement."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.batch import ArrowBatch, flatten
from collector.store.duck import Store
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span


def rag_trace() -> list:
    tid, root = new_trace_id(), new_span_id()
    docs = {}
    for i in range(3):
        docs[f"retrieval.documents.{i}.document.id"] = f"chunk-{i}"
        docs[f"retrieval.documents.{i}.document.content"] = f"refunds within {i + 10} days"
    return [
        span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN"}),
        span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **docs}),
    ]


def arrow(spans: list) -> ArrowBatch:
    return batch_to_arrow(flatten(request(spans)))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "w.duckdb")
    try:
        yield s
    finally:
        s.close()


def counts(store: Store) -> tuple[int, int, int, int]:
    row = store.con.execute(
        "SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM steps), "
        "(SELECT count(*) FROM step_documents), (SELECT coalesce(sum(span_count), 0) FROM traces)"
    ).fetchall()[0]
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


def test_new_spans_are_written_with_their_steps_documents_and_trace(store: Store) -> None:
    a, b = rag_trace(), rag_trace()
    assert store.write_spans(store.con, arrow(a + b)) == 4
    assert counts(store) == (4, 4, 6, 4)
    assert store.con.execute("SELECT count(*) FROM traces WHERE has_root AND span_count = 2").fetchall() == [(2,)]


def test_a_batch_with_stored_spans_keeps_only_the_new_ones(store: Store) -> None:
    a, b = rag_trace(), rag_trace()
    assert store.write_spans(store.con, arrow(a)) == 2
    # re-sent trace a together with new trace b: only b is added, the transaction is not lost
    assert store.write_spans(store.con, arrow(a + b)) == 2
    assert counts(store) == (4, 4, 6, 4)
    # everything again: nothing new
    assert store.write_spans(store.con, arrow(a + b)) == 0
    assert counts(store) == (4, 4, 6, 4)


def test_a_request_queued_twice_in_one_commit_is_stored_once(store: Store) -> None:
    a = rag_trace()
    once = arrow(a)
    assert store.write_spans(store.con, ArrowBatch.merge([once, arrow(a)])) == 2
    assert counts(store) == (2, 2, 3, 2)
    assert store.con.execute(
        "SELECT count(*) FROM (SELECT trace_id, span_id, stage, position FROM step_documents GROUP BY ALL "
        "HAVING count(*) > 1)"
    ).fetchall() == [(0,)]


def test_a_late_span_of_a_stored_trace_updates_its_totals(store: Store) -> None:
    a = rag_trace()
    store.write_spans(store.con, arrow(a[:1]))
    store.write_spans(store.con, arrow(a[1:]))
    assert store.con.execute("SELECT span_count, has_root FROM traces").fetchall() == [(2, True)]
    assert counts(store) == (2, 2, 3, 2)
