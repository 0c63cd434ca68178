"""evidence_in_kb (evaluators/builtin/evidence_kb.py): is the gold evidence in the registry?"""

from __future__ import annotations

from evaluators.builtin import evidence_kb
from evaluators.spec import NoConfig
from tests.evaluators.evidence_builders import case, inp, kb, one, rag

REGISTRY = kb(
    {"doc_id": "retention-v2", "content": "Logs are retained for 7 days."},
    {
        "doc_id": "refund-policy-2026",
        "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
    },
)


def run(gold, registry=REGISTRY):
    return one(evidence_kb.evaluate(inp(rag(candidates=[]), gold, registry), NoConfig()), "evidence_in_kb")


def test_not_applicable_edges():
    assert run(None).reason == "no gold case"
    assert run(case([])).reason == "no gold evidence"
    empty = run(case([{"doc_id": "retention-v2"}]), kb())
    assert (
        empty.status == "not_applicable"
        and empty.value is None
        and empty.reason == "empty knowledge-base registry"
    )


def test_known_and_unknown_documents():
    m = run(
        case([{"doc_id": "retention-v2", "quote": "7 days"}, {"doc_id": "retention-v3", "quote": "3 days"}])
    )
    assert (m.status, m.numerator, m.denominator, m.value, m.passed) == ("ok", 1, 2, 0.5, False)
    assert [a["label"] for a in m.details["absent"]] == ["retention-v3"]
    assert run(case([{"doc_id": "retention-v2"}])).passed is True


def test_unknown_id_whose_quote_lives_elsewhere_is_absent_but_pointed_at():
    m = run(case([{"doc_id": "retention-policy", "quote": "retained for 7 days"}]))
    assert (m.value, m.passed) == (0.0, False)
    assert m.details["absent"][0]["quote_found_in"] == ["retention-v2"]


def test_quote_only_items_are_found_by_content_cjk_included():
    m = run(case([{"quote": "30天内可申请退款，按剩余天数计算"}, {"quote": "logs are retained for 7 days"}]))
    assert (m.numerator, m.denominator) == (2, 2)
    m = run(case([{"quote": "7 天内可全额退款"}]))
    assert (m.numerator, m.denominator, m.passed) == (0, 1, False)


def test_any_of_present_when_one_alternative_is():
    m = run(case([{"any_of": [{"doc_id": "retention-v3"}, {"doc_id": "retention-v2"}]}, {"doc_id": "nope"}]))
    assert (m.numerator, m.denominator) == (1, 2)


def test_chunk_only_evidence_is_unverifiable_not_absent():
    m = run(case([{"chunk_id": "c-123"}]))
    assert m.status == "not_applicable" and "chunk ids only" in m.reason
    m = run(case([{"chunk_id": "c-123"}, {"doc_id": "retention-v2"}]))
    assert (m.numerator, m.denominator, m.passed) == (1, 1, True)
    assert m.details["unverifiable"] == ["c-123"]


def test_quote_not_in_the_named_document_is_reported():
    m = run(case([{"doc_id": "retention-v2", "quote": "retained for 30 days"}]))
    assert m.value == 1.0 and m.details["quote_mismatch"] == ["retention-v2"]
