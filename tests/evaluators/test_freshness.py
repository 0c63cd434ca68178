"""stale_candidates and stale_context (evaluators/builtin/freshness.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evaluators.builtin import freshness
from tests.evaluators.evidence_builders import case, inp, kb, one, rag

REGISTRY = kb(
    {
        "doc_id": "retry-v2",
        "valid_from": "2026-01-01",
        "content": "Error R-17 means the request was rate limited. Wait 30 seconds before retrying.",
    },
    {
        "doc_id": "retention-v1",
        "valid_from": "2025-01-01",
        "valid_to": "2026-01-01",
        "superseded_by": "retention-v2",
        "content": "Logs are retained for 30 days.",
    },
    {"doc_id": "retention-v2", "valid_from": "2026-01-01", "content": "Logs are retained for 7 days."},
    {
        "doc_id": "refund-policy-2024",
        "valid_from": "2024-01-01",
        "valid_to": "2026-03-01",
        "superseded_by": "refund-policy-2026",
        "content": "年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。",
    },
    {
        "doc_id": "refund-policy-2026",
        "valid_from": "2026-03-01",
        "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
    },
    {
        "doc_id": "notice-2027",
        "valid_from": "2027-01-01",
        "content": "From 2027 logs are retained for 3 days.",
    },
)
V1 = {"id": "retention-v1", "content": "Logs are retained for 30 days."}
V2 = {"id": "retention-v2", "content": "Logs are retained for 7 days."}
RETRY = {
    "id": "retry-v2",
    "content": "Error R-17 means the request was rate limited. Wait 30 seconds before retrying.",
}
R2024 = {"id": "refund-policy-2024", "content": "年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。"}
R2026 = {
    "id": "refund-policy-2026",
    "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
}
SEPT = datetime(2026, 9, 15)


def run(trace, gold=None, registry=REGISTRY, **cfg):
    return freshness.evaluate(inp(trace, gold, registry), freshness.Config(**cfg))


def test_superseded_and_expired_at_the_trace_time():
    ms = run(rag(candidates=[V1, V2, RETRY], start=SEPT))
    step, trace = one(ms, "stale_candidates", "ret"), one(ms, "stale_candidates")
    for m in (step, trace):
        assert (m.status, m.numerator, m.denominator, m.passed) == ("ok", 1, 3, None)
        [s] = m.details["stale"]
        assert s["doc_id"] == "retention-v1" and s["why"] == ["superseded", "expired"]
        assert s["superseded_by"] == "retention-v2" and s["source"] == "registry"


def test_the_same_document_is_fresh_before_its_successor_and_the_successor_not_yet_valid():
    ms = run(rag(candidates=[V1, V2], start=datetime(2025, 6, 1)))
    m = one(ms, "stale_candidates")
    assert (m.numerator, m.denominator) == (1, 2)
    [s] = m.details["stale"]
    assert s["doc_id"] == "retention-v2" and s["why"] == ["not_yet_valid"]


def test_case_as_of_overrides_the_trace_time():
    gold = case([], as_of="2025-06-01")
    m = one(run(rag(candidates=[V1], start=SEPT), gold), "stale_candidates")
    assert m.numerator == 0
    m = one(
        run(rag(candidates=[V1], start=datetime(2025, 6, 1)), case([], as_of="2026-09-15")),
        "stale_candidates",
    )
    assert m.numerator == 1


def test_unknown_documents_use_their_span_metadata():
    docs: list[dict[str, Any] | str] = [
        {"id": "wiki-1", "content": "Wiki page one.", "metadata": {"valid_to": "2026-02-01T00:00:00Z"}},
        {"id": "wiki-2", "content": "Wiki page two.", "metadata": {"superseded_by": "wiki-3", "version": 2}},
        {"id": "wiki-3", "content": "Wiki page three.", "metadata": {"version": 3}},
        {"id": "wiki-4", "content": "Wiki page four."},
    ]
    m = one(run(rag(candidates=docs, start=SEPT)), "stale_candidates")
    assert (m.numerator, m.denominator) == (2, 4)
    by_id = {s["doc_id"]: s for s in m.details["stale"]}
    assert by_id["wiki-1"]["why"] == ["expired"] and by_id["wiki-1"]["source"] == "metadata"
    assert by_id["wiki-2"]["why"] == ["superseded"] and by_id["wiki-2"]["version"] == "2"


def test_registry_row_wins_over_span_metadata():
    claims_fresh = {**V1, "metadata": {"valid_to": None, "superseded_by": ""}}
    m = one(run(rag(candidates=[claims_fresh], start=SEPT)), "stale_candidates")
    assert m.numerator == 1 and m.details["stale"][0]["source"] == "registry"


def test_documents_without_ids_and_chunk_uuids_are_found_in_the_registry():
    chunk = {
        "id": "7d1f1c5e-2f0b-4f7e-8a3d-0c9b8a7f6e5d",
        "content": "something",
        "metadata": {"document_id": "refund-policy-2024"},
    }
    no_id = "Logs are retained for 30 days."
    m = one(run(rag(candidates=[chunk, no_id, "Unregistered text."], start=SEPT)), "stale_candidates")
    assert (m.numerator, m.denominator) == (2, 3)
    assert sorted(s["doc_id"] for s in m.details["stale"]) == ["refund-policy-2024", "retention-v1"]


def test_duplicates_count_once_and_steps_separately():
    trace = rag(candidates=[V1, V1, V2], extra_steps=[("ret2", [V2, RETRY])], start=SEPT)
    ms = run(trace)
    assert (one(ms, "stale_candidates", "ret").numerator, one(ms, "stale_candidates", "ret").denominator) == (
        1,
        2,
    )
    assert one(ms, "stale_candidates", "ret2").numerator == 0
    t = one(ms, "stale_candidates")
    assert (t.numerator, t.denominator) == (1, 3)


def test_no_retrieval_empty_candidates_and_no_context():
    ms = run(rag(candidates=None, context=[], start=SEPT))
    assert one(ms, "stale_candidates").reason == "no retrieval step"
    assert one(ms, "stale_context").status == "not_applicable"
    ms = run(rag(candidates=[], context=[], start=SEPT))
    for m in (one(ms, "stale_candidates", "ret"), one(ms, "stale_candidates")):
        assert m.status == "not_applicable" and m.value is None and m.reason == "no candidates"
    assert one(ms, "stale_context").reason == "no context documents"


def test_stale_context_followed_fails_under_both_policies():
    # seed 000 baseline, stale-version: the answer repeats the superseded 30 days
    trace = rag(candidates=[V1, RETRY], answer="Logs are retained for 30 days.", start=SEPT)
    for policy in ("when_followed", "always"):
        m = one(run(trace, stale_context=policy), "stale_context")
        assert (m.numerator, m.denominator, m.passed, m.label) == (1, 2, False, policy)
        assert m.details["stale"][0]["followed"] is True
        assert m.details["followed_claims"] == {"retention-v1": ["Logs are retained for 30 days"]}


def test_stale_context_not_followed_passes_only_when_followed_is_the_policy():
    # seed 000 corrected run: both versions in context, the answer follows the current one
    trace = rag(
        candidates=[V2, V1], answer="Under the current policy, logs are retained for 7 days.", start=SEPT
    )
    m = one(run(trace), "stale_context")
    assert (m.numerator, m.denominator, m.passed) == (1, 2, True)
    assert m.details["stale"][0] == {**m.details["stale"][0], "doc_id": "retention-v1", "followed": False}
    assert one(run(trace, stale_context="always"), "stale_context").passed is False


def test_a_claim_both_versions_support_does_not_follow_the_stale_one():
    trace = rag(candidates=[V2, V1], answer="Logs are retained.", start=SEPT)
    assert one(run(trace), "stale_context").passed is True


def test_chinese_refund_traces_a_and_c():
    gold = case(
        [{"doc_id": "refund-policy-2026", "quote": "30 天内可申请退款"}],
        negative_doc_ids=["refund-policy-2024"],
        as_of="2026-09-15",
    )
    a = one(run(rag(candidates=[R2024, R2026], answer="7 天内可全额退款。"), gold), "stale_context")
    assert (a.numerator, a.denominator, a.passed) == (1, 2, False)
    assert a.details["negative"] == ["refund-policy-2024"]
    c = one(run(rag(candidates=[R2026], answer="7 天内全额退款。"), gold), "stale_context")
    assert (c.numerator, c.denominator, c.passed) == (0, 1, True)
    assert c.details["negative"] == []


def test_negative_documents_among_candidates_are_flagged():
    gold = case([], negative_doc_ids=["refund-policy-2024"])
    m = one(
        run(rag(candidates=[R2026, R2024], context=[R2026], answer="30 天内可申请退款。", start=SEPT), gold),
        "stale_candidates",
    )
    assert m.details["negative"] == ["refund-policy-2024"] and m.numerator == 1


def test_no_answer_cannot_follow():
    m = one(run(rag(candidates=[V1], answer="", start=SEPT)), "stale_context")
    assert (m.numerator, m.passed) == (1, True)
