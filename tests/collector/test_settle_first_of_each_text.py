"""Settling picks the first row of each text in Python (``settling.first_of_each_text``): for a batch
of several traces it returns exactly the rows, in the order, that the SQL selection it replaced
(``QUALIFY row_number() OVER (PARTITION BY trace_id, stage = 'context', content ...)``) returned."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.settling.assemble import DOC_FIELDS, STAGE_PRIORITY
from collector.settling.settle import load_trace_parts
from collector.store import Store

TEXTS = [
    "Refunds within 30 days.",
    "refunds within 30 days",
    "Free shipping.",
    "退货期限为三十天。",
    "",
    None,
]
STAGES = ["candidate", "rerank_input", "reranked", "context", "opened", "surfaced"]

row = st.tuples(
    st.integers(0, 2),  # which trace of the batch
    st.sampled_from(STAGES),
    st.sampled_from(["ret", "rr", "llm", "a-span"]),
    st.one_of(st.none(), st.integers(0, 3)),  # position (missing ones too)
    st.sampled_from(TEXTS),
    st.sampled_from(["kb-1", "kb-2", "nowhere", None]),  # doc id (kb-1 and kb-2 have registry text)
    st.sampled_from(["span", "derived"]),
    st.sampled_from([None, '{"title": "t"}']),
)

# the selection settling made in SQL before (the statement as it was, on the same rows)
_RANK = "CASE stage " + " ".join(f"WHEN '{s}' THEN {p}" for s, p in STAGE_PRIORITY.items()) + " END"
_RANKED = ", ".join(f"'{s}'" for s in STAGE_PRIORITY)
BEFORE = (
    "WITH d AS (SELECT d.trace_id, d.span_id, d.stage, d.position, d.doc_id, d.chunk_id, "
    "coalesce(nullif(d.content, ''), k.content) AS content, d.score, d.metadata, d.source FROM step_documents d "
    "LEFT JOIN kb_documents k ON (d.content IS NULL OR d.content = '') AND k.doc_id = coalesce(d.doc_id, d.chunk_id) "
    "WHERE d.trace_id IN (SELECT unnest($ids)) AND d.source <> 'derived') "
    "SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source FROM d "
    f"WHERE ((stage = 'context' AND source = 'span') OR (stage IN ({_RANKED}) AND content <> '')) "
    "QUALIFY stage = 'context' OR row_number() OVER (PARTITION BY trace_id, stage = 'context', content "
    f"ORDER BY {_RANK}, span_id, stage, position) = 1 ORDER BY trace_id, span_id, stage, position"
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store(tmp_path_factory.mktemp("first") / "f.duckdb")
    for doc_id in ("kb-1", "kb-2"):
        store.con.execute(
            "INSERT INTO kb_documents (doc_id, content) VALUES ($d, $c)",
            {"d": doc_id, "c": f"Registry text of {doc_id}."},
        )
    yield store
    store.close()


_batches = itertools.count(1)


def _fields(d: object) -> tuple[object, ...]:
    return tuple(getattr(d, k) for k in DOC_FIELDS)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, max_size=24, unique_by=lambda r: (r[0], r[1], r[2], r[3])))
def test_the_rows_and_order_of_the_sql_selection(shared_store: Store, rows: list[tuple]) -> None:
    store = shared_store
    batch = next(_batches)
    ids = [f"{batch:016x}{i:016x}" for i in range(3)]
    for i, (t, stage, span, pos, text, doc_id, source, meta) in enumerate(rows):
        store.con.execute(
            "INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, chunk_id, content, score, "
            "metadata, source, received_at) VALUES ($t, $s, $stage, $p, $d, $c, $text, $score, $m, $src, $at)",
            {
                "t": ids[t], "s": span, "stage": stage, "p": pos, "d": doc_id, "c": f"chunk-{i}", "text": text,
                "score": float(i) if i % 3 else None, "m": meta, "src": source, "at": datetime(2026, 1, 1),
            },
        )  # fmt: skip
    _, fetched = load_trace_parts(store.con, ids)
    expected: dict[str, list[tuple[object, ...]]] = {t: [] for t in ids}
    for r in store.con.execute(BEFORE, {"ids": ids}).fetchall():
        expected[r[0]].append(tuple(r[1:]))
    got = {t: [_fields(d) for d in fetched[t]] for t in ids}
    # rows the SQL ordered as equal (same span, stage and position) may come in either order
    for t in ids:
        key = lambda f: (f[0], f[1], f[2] is None, f[2] or 0)  # noqa: E731
        assert [key(f) for f in got[t]] == [key(f) for f in expected[t]]
        assert sorted(got[t], key=repr) == sorted(expected[t], key=repr)


def test_an_empty_batch_and_traces_without_documents(tmp_path: object) -> None:
    store = Store(f"{tmp_path}/e.duckdb")
    try:
        steps, docs = load_trace_parts(store.con, ["nothing-here"])
        assert steps == {"nothing-here": []} and docs == {"nothing-here": []}
    finally:
        store.close()
