"""duplicate_candidates (evaluators/builtin/duplicates.py)."""

from __future__ import annotations

from typing import Any

from evaluators.builtin import duplicates
from evaluators.spec import NoConfig
from tests.evaluators.evidence_builders import inp, one, rag


def run(trace):
    return duplicates.evaluate(inp(trace), NoConfig())


def test_repeated_chunk_ids_and_contents():
    cands: list[dict[str, Any] | str] = [
        {"id": "c1", "content": "Logs are retained for 7 days."},
        {"id": "c2", "content": "Logs can be exported as JSON."},
        {"id": "c1", "content": "Logs are retained for 7 days."},  # same chunk again
        {"id": "c9", "content": "  logs ARE retained for 7 days "},  # same text, other id
        "Logs can be exported as JSON!",  # same text, no id at all
        {"id": "c3", "content": "Error R-17 means rate limited."},
    ]
    ms = run(rag(candidates=cands))
    m = one(ms, "duplicate_candidates", "ret")
    assert (m.status, m.numerator, m.denominator, m.value, m.passed) == ("ok", 3, 6, 0.5, None)
    assert [(r["rank"], r["repeats_rank"], r["by"]) for r in m.details["repeats"]] == [
        (3, 1, "chunk_id"),
        (4, 1, "content"),
        (5, 2, "content"),
    ]


def test_chunks_of_one_source_document_are_not_duplicates():
    cands: list[dict[str, Any] | str] = [
        {"id": "u-1", "content": "Part one of the policy.", "metadata": {"ref_doc_id": "policy"}},
        {"id": "u-2", "content": "Part two of the policy.", "metadata": {"ref_doc_id": "policy"}},
    ]
    m = one(run(rag(candidates=cands)), "duplicate_candidates", "ret")
    assert (m.numerator, m.denominator) == (0, 2)


def test_no_retrieval_and_empty_candidates():
    [m] = run(rag(candidates=None))
    assert (m.status, m.reason) == ("not_applicable", "no retrieval step")
    ms = run(rag(candidates=[]))
    for m in (one(ms, "duplicate_candidates", "ret"), one(ms, "duplicate_candidates")):
        assert (m.status, m.value, m.reason) == ("not_applicable", None, "no candidates")


def test_trace_row_is_micro_over_steps_and_reports_cross_step_repeats():
    a = {"id": "a", "content": "Alpha text."}
    b = {"id": "b", "content": "Beta text."}
    ms = run(rag(candidates=[a, a, b], extra_steps=[("ret2", [b, {"id": "c", "content": "Gamma text."}])]))
    assert one(ms, "duplicate_candidates", "ret").numerator == 1
    assert one(ms, "duplicate_candidates", "ret2").numerator == 0
    t = one(ms, "duplicate_candidates")
    assert (t.numerator, t.denominator) == (1, 5)
    assert t.details["cross_step_repeats"] == 1
