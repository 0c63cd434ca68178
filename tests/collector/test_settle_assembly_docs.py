"""Settling fetches only the documents ``assemble`` needs (explicit context rows, and the first row of
each text in the order ``assemble`` ranks them), and derives the same context as from every row."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.settling.assemble import DocView, assemble
from collector.settling.settle import load_trace_parts
from collector.store import Store
from tests.collector.test_assemble import rag_steps

TEXTS = [
    "Refunds are accepted within 30 days of delivery.",
    "refunds are accepted within 30 days of delivery",  # the same once normalized, another text
    "Shipping is free above 50 euros.",
    "Gift cards never expire.",
    "",
]
PROMPT = "Context: Refunds are accepted within 30 days of delivery. Gift cards never expire. Question: ?"
SPANS = {"candidate": "ret", "rerank_input": "rr", "reranked": "rr", "context": "llm"}

row = st.tuples(
    st.sampled_from(["candidate", "rerank_input", "reranked", "context"]),
    st.sampled_from(TEXTS),
    st.sampled_from(["a", "b", None]),  # doc id
    st.sampled_from(["span", "derived"]),
)


def _all_rows(store: Store, trace_id: str) -> list[DocView]:
    """Every stored row but derived ones, in the order settling read them before."""
    return [
        DocView(*r)
        for r in store.con.execute(
            "SELECT span_id, stage, position, doc_id, chunk_id, content, score, metadata, source FROM step_documents "
            "WHERE trace_id = $t AND source <> 'derived' ORDER BY span_id, stage, position",
            {"t": trace_id},
        ).fetchall()
    ]


def _key(d: DocView) -> tuple[object, ...]:
    return (d.span_id, d.stage, d.position, d.doc_id, d.content, d.score, d.source)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One database for every example (opening one costs more than the example): each example
    writes a trace id of its own, so examples never see each other's rows."""
    store = Store(tmp_path_factory.mktemp("assembly") / "a.duckdb")
    yield store
    store.close()


_trace_ids = itertools.count(1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, max_size=14))
def test_the_same_context_as_from_every_row(
    shared_store: Store, rows: list[tuple[str, str, str | None, str]]
) -> None:
    store = shared_store
    trace_id = f"{next(_trace_ids):032x}"
    positions: dict[str, int] = {}
    for i, (stage, text, doc_id, source) in enumerate(rows):
        if stage != "context":
            source = "span"  # only the context stage is ever derived
        pos = positions[stage] = positions.get(stage, -1) + 1
        store.con.execute(
            "INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, content, score, source, "
            "received_at) VALUES ($t, $s, $stage, $p, $d, $c, $score, $src, $at)",
            {
                "t": trace_id, "s": SPANS[stage], "stage": stage, "p": pos, "d": doc_id, "c": text,
                "score": float(i), "src": source, "at": datetime(2026, 1, 1),
            },
        )  # fmt: skip
    _, fetched = load_trace_parts(store.con, [trace_id])
    every = _all_rows(store, trace_id)
    assert len(fetched[trace_id]) <= len(every)
    expected = assemble(rag_steps(PROMPT), every).context
    got = assemble(rag_steps(PROMPT), fetched[trace_id]).context
    assert [_key(d) for d in got] == [_key(d) for d in expected]


def test_a_reranked_copy_names_the_document_and_repeats_are_fetched_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.duckdb")
    try:
        text = TEXTS[0]
        for stage, span, doc_id, score in (
            ("candidate", "ret", "cand-id", 0.2),
            ("rerank_input", "rr", "cand-id", 0.2),
            ("reranked", "rr", "reranked-id", 0.97),
        ):
            store.con.execute(
                "INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, content, score, source, "
                "received_at) VALUES ('t', $s, $stage, 0, $d, $c, $score, 'span', $at)",
                {
                    "s": span,
                    "stage": stage,
                    "d": doc_id,
                    "c": text,
                    "score": score,
                    "at": datetime(2026, 1, 1),
                },
            )
        store.con.execute(  # another trace with the same text: fetched for its own trace
            "INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, content, score, source, "
            "received_at) VALUES ('u', 'ret', 'candidate', 0, 'other', $c, 0.5, 'span', $at)",
            {"c": text, "at": datetime(2026, 1, 1)},
        )
        _, fetched = load_trace_parts(store.con, ["t", "u"])
        assert [(d.stage, d.doc_id) for d in fetched["t"]] == [("reranked", "reranked-id")]
        assert [(d.stage, d.doc_id) for d in fetched["u"]] == [("candidate", "other")]
        context = assemble(rag_steps(PROMPT), fetched["t"]).context
        assert [(d.doc_id, d.score) for d in context] == [("reranked-id", 0.97)]
    finally:
        store.close()
