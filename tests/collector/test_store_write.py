"""The writer's two paths: all spans new (plain inserts) and some spans already stored or repeated in
one batch (rolled back, then written keeping the new spans once). Both leave spans, steps, documents
and the trace totals in agreement."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.ingest.batch import ArrowBatch
from collector.ingest.span_rows import flatten
from collector.store import Store
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
    assert store.con.execute("SELECT count(*) FROM traces WHERE has_root AND span_count = 2").fetchall() == [
        (2,)
    ]


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
        traces = [
            rag_trace() + rag_trace()[1:] for _ in range(40)
        ]  # root + 2 children (one from another trace id)
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
        # a job runs while no ingest commit does (the lanes' gate)
        commits_during_job = writer.call(lambda con: writer._gate._commits, timeout=60)
        for t in senders:
            t.join()
        stored = sum(f.result(60) for f in futures)
        assert stored == 120
        assert commits_during_job == 0
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
    assert store.con.execute("SELECT span_count, has_root, error_count FROM traces").fetchall() == [
        (2, True, 1)
    ]


def test_a_trace_the_writer_no_longer_remembers_is_still_merged(tmp_path: Path) -> None:
    """New traces are inserted without ON CONFLICT when the writer has not seen their ids lately.
    A trace it forgot (aged out, or stored before a restart) makes that insert fail; the batch is
    then written through the merging path, and the totals stay right."""
    from collector.store.file.ingest import KnownTraces

    store = Store(tmp_path / "forget.duckdb")
    store._known = KnownTraces(size=1)  # remembers one trace id at a time
    a, b, c = rag_trace(), rag_trace(), rag_trace()
    store.write_spans(store.con, arrow(a[:1]))
    store.write_spans(store.con, arrow(b[:1]))
    store.write_spans(store.con, arrow(c[:1]))  # a is forgotten now
    assert store.write_spans(store.con, arrow(a[1:])) == 1
    store.close()
    store = Store(tmp_path / "forget.duckdb")  # a restart: b's late span comes after it
    try:
        assert store.write_spans(store.con, arrow(b[1:] + c[1:])) == 2
        assert counts(store) == (6, 6, 9, 6)
        assert store.con.execute("SELECT DISTINCT span_count, has_root FROM traces").fetchall() == [(2, True)]
    finally:
        store.close()


def test_trace_rows_agree_with_their_spans_however_the_spans_arrive(tmp_path: Path) -> None:
    """Randomized: traces of 1-5 spans (a root or none, errors, case ids, two services) sent in
    random requests, commits and order, with a writer that remembers few trace ids, so both the
    plain and the merging path run. Every ``traces`` row must agree with its stored spans."""
    import random
    from datetime import datetime, timedelta

    from opentelemetry.proto.trace.v1.trace_pb2 import Status

    from collector.store.file.ingest import KnownTraces

    rng = random.Random(11)
    store = Store(tmp_path / "random.duckdb")
    store._known = KnownTraces(size=7)
    try:
        spans = []
        for _ in range(60):
            tid, root = new_trace_id(), new_span_id()
            for k in range(rng.randint(1, 5)):
                attrs = {"ragfault.case_id": f"case-{rng.randint(0, 3)}"} if rng.random() < 0.3 else {}
                s = span(
                    tid,
                    span_id=root if k == 0 else None,
                    parent=b"" if k == 0 else root,
                    name=f"op{k}",
                    attrs=attrs,
                )
                if rng.random() < 0.2:
                    s.status.code = Status.STATUS_CODE_ERROR
                if k == 0 and rng.random() < 0.3:
                    continue  # a trace whose root never arrives
                spans.append((s, rng.choice(["svc-a", "svc-b"])))
        rng.shuffle(spans)
        t0 = datetime(2026, 1, 1)
        i = n_request = 0
        while i < len(spans):
            commit = []
            for _ in range(rng.randint(1, 3)):  # requests queued together make one commit
                part = spans[i : i + rng.randint(1, 12)]
                i += len(part)
                for service in ("svc-a", "svc-b"):
                    mine = [s for s, svc in part if svc == service]
                    if mine:
                        n_request += 1
                        received = t0 + timedelta(seconds=n_request)
                        commit.append(
                            batch_to_arrow(flatten(request(mine, service=service), received_at=received))
                        )
            if commit:
                store.write_spans(store.con, ArrowBatch.merge(commit))
        disagree = store.con.execute(
            """
            SELECT t.trace_id FROM traces t JOIN (
                SELECT trace_id, count(*) n, count(*) FILTER (WHERE status_code = 'ERROR') errors,
                       bool_or(parent_span_id IS NULL) has_root, min(received_at) AS first, max(received_at) AS last,
                       min(start_time) start_time, max(end_time) end_time,
                       list(span_id) FILTER (WHERE parent_span_id IS NULL) roots,
                       list(name) FILTER (WHERE parent_span_id IS NULL) root_names,
                       list(service_name) services, list(case_id) FILTER (WHERE case_id IS NOT NULL) cases
                FROM spans GROUP BY trace_id) s USING (trace_id)
            WHERE t.span_count <> s.n OR t.error_count <> s.errors OR t.has_root <> s.has_root
               OR t.first_received_at <> s.first OR t.last_received_at <> s.last
               OR t.start_time <> s.start_time OR t.end_time <> s.end_time
               OR (t.root_span_id IS NULL) <> (NOT s.has_root)
               OR (s.has_root AND NOT (list_contains(s.roots, t.root_span_id)
                                       AND list_contains(s.root_names, t.root_name)))
               OR NOT list_contains(s.services, t.service_name)
               OR (t.case_id IS NULL) <> (len(s.cases) = 0)
               OR (t.case_id IS NOT NULL AND NOT list_contains(s.cases, t.case_id))
            """
        ).fetchall()
        assert disagree == []
        n_traces = len({s.trace_id for s, _ in spans})
        assert store.con.execute("SELECT count(*) FROM traces").fetchall() == [(n_traces,)]
        assert store.con.execute("SELECT count(*) FROM spans").fetchall() == [(len(spans),)]
    finally:
        store.close()


def test_a_requests_trace_summary_matches_sql_over_its_spans() -> None:
    """The per-trace summary a decode worker sends with each request holds what SQL finds in
    the request's spans."""
    from collector.store.schema import trace_summary

    a, b = rag_trace(), rag_trace()
    batch = arrow(a + b[1:])
    rows = {r["trace_id"]: r for r in trace_summary(batch.spans).to_pylist()}
    assert {k: (r["span_count"], r["has_root"], r["root_name"]) for k, r in rows.items()} == {
        a[0].trace_id.hex(): (2, True, "query"),
        b[0].trace_id.hex(): (1, False, None),
    }
    assert rows[a[0].trace_id.hex()]["root_span_id"] == a[0].span_id.hex()
    assert rows[b[0].trace_id.hex()]["service_name"] == "test-app"
    assert rows[b[0].trace_id.hex()]["root_service"] is None
