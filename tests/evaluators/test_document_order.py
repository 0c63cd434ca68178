"""A trace's documents reach evaluators in (span, stage, position) order, missing positions last,
whatever order the store returns the rows in: which copy of a document counts first depends on it."""

from __future__ import annotations

from pathlib import Path

from collector.ingest.span_rows import flatten
from collector.store.schema import batch_to_arrow
from evaluators.service.runner import load_views
from ragfault.local import LocalStore
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span


def rag_spans(tid: bytes, n_docs: int) -> list:
    root = new_span_id()

    def docs(prefix: str) -> dict[str, str]:
        return {
            f"{prefix}.{i}.document.{k}": v
            for i in range(n_docs)
            for k, v in (("id", f"chunk-{i % 4}"), ("content", f"refunds within {i + 10} days"))
        }

    return [
        span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN", "input.value": "refund?"}),
        span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **docs("retrieval.documents")}),
        span(tid, parent=root, name="retrieve-2", attrs={"openinference.span.kind": "RETRIEVER", **docs("retrieval.documents")}),
        span(tid, parent=root, name="rerank", attrs={
            "openinference.span.kind": "RERANKER", **docs("reranker.input_documents"),
            "reranker.output_documents.0.document.id": "chunk-2",
            "reranker.output_documents.0.document.content": "refunds within 12 days"}),
    ]  # fmt: skip


def test_documents_come_in_span_stage_position_order(tmp_path: Path) -> None:
    local = LocalStore(str(tmp_path / "o.duckdb"))
    con = local.store.con
    tids = [new_trace_id() for _ in range(3)]
    for tid in tids:
        local.store.write_spans(con, batch_to_arrow(flatten(request(rag_spans(tid, 12)))))
    local.settle_all()
    # the rows stored in a shuffled order, some positions missing
    con.execute(
        "CREATE TEMP TABLE shuffled AS SELECT * FROM step_documents ORDER BY hash(content, position, span_id)"
    )
    con.execute("DELETE FROM step_documents")
    con.execute("INSERT INTO step_documents SELECT * FROM shuffled")
    con.execute("UPDATE step_documents SET position = NULL WHERE position IN (3, 7)")

    views, _ = load_views(con, [t.hex() for t in tids])
    assert len(views) == 3
    for view in views:
        expected = con.execute(
            "SELECT span_id, stage, position, content FROM step_documents WHERE trace_id = $t "
            "ORDER BY span_id, stage, position NULLS LAST, content",
            {"t": view.trace_id},
        ).fetchall()
        got = [(d.span_id, d.stage, d.position, d.content) for d in view.documents]
        # rows equal in (span, stage, position) have no order of their own: compare within them
        key = lambda r: (r[0], r[1], r[2] is None, r[2] or 0)  # noqa: E731
        assert [key(r) for r in got] == [key(r) for r in expected]
        assert sorted(got, key=lambda r: (*key(r), r[3])) == expected
        assert sum(d.position is None for d in view.documents) >= 4
