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


def test_writer_lanes_commit_side_by_side_and_agree_on_trace_totals(tmp_path: Path) -> None:
    """Two lanes commit at once; spans of one trace arrive in different requests, so concurrent
    commits update the same trace row and conflict: the loser is retried, nothing is lost or
    counted twice, and a job still runs alone."""
    import threading

    from collector.metrics import Metrics
    from collector.store.writer import Writer

    store = Store(tmp_path / "lanes.duckdb")
    writer = Writer(store, Metrics(), lanes=2)
    writer.start()
    try:
        traces = [rag_trace() + rag_trace()[1:] for _ in range(40)]  # root + 2 children (one from another trace id)
        # the root of trace k and its children are sent by different senders at about the same time
        halves = [arrow(t[:1]) for t in traces] + [arrow(t[1:]) for t in traces[1:] + traces[:1]]
        futures = []
        lock = threading.Lock()

        def send(part: list[ArrowBatch]) -> None:
            for b in part:  # one request at a time per sender, as an exporter sends
                f = writer.submit(b)
                with lock:
                    futures.append(f)
                f.result(60)

        senders = [threading.Thread(target=send, args=(halves[i::4],)) for i in range(4)]
        for t in senders:
            t.start()
        seen_alone = writer.call(lambda con: con.execute("SELECT count(*) FROM spans").fetchall()[0][0], timeout=60)
        for t in senders:
            t.join()
        stored = sum(f.result(60) for f in futures)
        assert stored == 120
        assert 0 <= seen_alone <= 120
        spans, steps, docs, total = counts(store)
        assert (spans, steps, docs, total) == (120, 120, 240, 120)
        assert store.con.execute(
            "SELECT count(*) FROM traces t JOIN (SELECT trace_id, count(*) n FROM spans GROUP BY 1) s "
            "USING (trace_id) WHERE t.span_count <> s.n"
        ).fetchall() == [(0,)]
    finally:
        writer.stop()
        store.close()


def test_a_commit_that_conflicts_with_another_writer_is_retried(store: Store) -> None:
    import threading

    a = rag_trace()
    store.write_spans(store.con, arrow(a[:1]))
    other = store.cursor()
    other.execute("BEGIN TRANSACTION")
    other.execute(  # another writer's commit in progress holds the trace row
        "INSERT INTO traces (trace_id) SELECT trace_id FROM traces "
        "ON CONFLICT (trace_id) DO UPDATE SET error_count = traces.error_count + 1"
    )
    release = threading.Timer(0.05, lambda: other.execute("COMMIT"))
    release.start()
    con = store.cursor()
    try:
        assert store.write_spans(con, arrow(a[1:])) == 1  # conflicted, then retried after the commit
    finally:
        release.join()
        con.close()
        other.close()
    assert counts(store) == (2, 2, 3, 2)
    # both writers' changes are in: the other's error count and this batch's span
    assert store.con.execute("SELECT span_count, has_root, error_count FROM traces").fetchall() == [(2, True, 1)]
