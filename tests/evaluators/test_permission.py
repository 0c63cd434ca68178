"""permission_violations (evaluators/builtin/permission.py)."""

from __future__ import annotations

from typing import Any

from evaluators.builtin import permission
from evaluators.spec import NoConfig
from tests.evaluators.evidence_builders import case, inp, kb, one, rag

REGISTRY = kb(
    {
        "doc_id": "refund-policy-2026",
        "acl": ["support"],
        "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
    },
    {"doc_id": "member-transfer", "acl": ["support"], "content": "会员权益仅限本人账号使用。"},
    {"doc_id": "finance-discounts", "acl": ["finance"], "content": "大客户合同折扣由财务部单独审批。"},
    {"doc_id": "public-faq", "content": "Our office opens at nine."},
    {"doc_id": "locked", "acl": [], "content": "Nobody may read this document."},
)
R2026 = {
    "id": "refund-policy-2026",
    "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
}
FIN = {"id": "finance-discounts", "content": "大客户合同折扣由财务部单独审批。"}
TRANSFER = {"id": "member-transfer", "content": "会员权益仅限本人账号使用。"}
SUPPORT = case([], user_scope=["support"])


def run(trace, gold=SUPPORT, registry=REGISTRY):
    return permission.evaluate(inp(trace, gold, registry), NoConfig())


def test_no_user_scope_is_not_applicable():
    for gold in (None, case([]), case([], user_scope=[])):
        [m] = run(rag(candidates=[FIN]), gold)
        assert (m.status, m.value, m.reason) == ("not_applicable", None, "no user scope")


def test_forbidden_candidate_per_step_and_trace():
    ms = run(rag(candidates=[R2026, FIN]))
    for m in (one(ms, "permission_violations", "ret"), one(ms, "permission_violations")):
        assert (m.status, m.numerator, m.denominator, m.value, m.passed) == ("ok", 1, 2, 0.5, False)
        [f] = m.details["forbidden"]
        assert f["doc_id"] == "finance-discounts" and f["acl"] == ["finance"] and f["rank"] == 2
    trace_row = one(ms, "permission_violations")
    assert [f["doc_id"] for f in trace_row.details["forbidden_in_context"]] == ["finance-discounts"]


def test_clean_candidates_pass():
    m = one(
        run(rag(candidates=[R2026, TRANSFER, {"id": "public-faq", "content": "Our office opens at nine."}])),
        "permission_violations",
    )
    assert (m.numerator, m.denominator, m.passed) == (0, 3, True)


def test_a_cut_candidate_is_still_a_violation():
    ms = run(rag(candidates=[R2026, FIN], reranked=[R2026]))
    m = one(ms, "permission_violations")
    assert (m.numerator, m.passed) == (1, False)
    assert m.details["forbidden_in_context"] == [] and m.details["context_docs"] == 1


def test_trace_scope_wins_over_the_case_scope():
    ms = run(rag(candidates=[R2026, FIN], user_scope=("finance",)))
    m = one(ms, "permission_violations")
    assert [f["doc_id"] for f in m.details["forbidden"]] == ["refund-policy-2026"]
    ms = run(rag(candidates=[R2026, FIN], user_scope=("finance", "support")))
    assert one(ms, "permission_violations").passed is True


def test_unknown_documents_use_span_metadata_acl():
    docs: list[dict[str, Any] | str] = [
        {"id": "hr-1", "content": "Salary bands are reviewed yearly.", "metadata": {"acl": "hr,finance"}},
        {"id": "hr-2", "content": "Holiday calendar for the team.", "metadata": {"acl": ["support", "hr"]}},
        {"id": "hr-3", "content": "Canteen menu of the week."},
        {"id": "hr-4", "content": "Canteen opening hours.", "metadata": {"acl": '["hr"]'}},
    ]
    m = one(run(rag(candidates=docs)), "permission_violations")
    assert (m.numerator, m.denominator) == (2, 4)
    assert {f["doc_id"]: f["acl"] for f in m.details["forbidden"]} == {
        "hr-1": ["hr", "finance"],
        "hr-4": ["hr"],
    }
    assert {f["acl_source"] for f in m.details["forbidden"]} == {"metadata"}


def test_registry_row_decides_over_span_metadata():
    # the registry says finance; the span claims support: the registry wins
    claimed = {**FIN, "metadata": {"acl": ["support"]}}
    assert one(run(rag(candidates=[claimed])), "permission_violations").numerator == 1
    # a registry row without acl is visible to all whatever the span says
    faq = {"id": "public-faq", "content": "Our office opens at nine.", "metadata": {"acl": ["finance"]}}
    assert one(run(rag(candidates=[faq])), "permission_violations").numerator == 0


def test_empty_acl_is_visible_to_no_one():
    m = one(
        run(rag(candidates=[{"id": "locked", "content": "Nobody may read this document."}])),
        "permission_violations",
    )
    assert (m.numerator, m.passed) == (1, False)


def test_documents_without_ids_and_chunk_uuids_through_the_registry():
    chunk = {
        "id": "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d",
        "content": "折扣审批",
        "metadata": {"file_name": "finance-discounts"},
    }
    no_id = "大客户合同折扣由财务部单独审批。"
    ms = run(rag(candidates=[chunk, no_id, "会员权益仅限本人账号使用。"]))
    m = one(ms, "permission_violations")
    # the chunk and the id-less copy are the same registry document: counted once
    assert (m.numerator, m.denominator) == (1, 2)
    assert m.details["forbidden"][0]["doc_id"] == "finance-discounts"


def test_duplicate_ids_count_once():
    m = one(run(rag(candidates=[FIN, FIN, R2026])), "permission_violations", "ret")
    assert (m.numerator, m.denominator) == (1, 2)


def test_no_retrieval_and_empty_candidates():
    [m] = run(rag(candidates=None, context=[]))
    assert (m.status, m.reason) == ("not_applicable", "no retrieval step")
    ms = run(rag(candidates=[], context=[]))
    for m in (one(ms, "permission_violations", "ret"), one(ms, "permission_violations")):
        assert (m.status, m.value, m.reason) == ("not_applicable", None, "no candidates")


def test_forbidden_context_without_retrieval_is_still_reported():
    [m] = run(rag(candidates=None, context=[FIN], explicit_context=True))
    assert m.status == "not_applicable"
    assert m.details["forbidden_in_context"][0]["doc_id"] == "finance-discounts"


def test_several_retrieval_steps():
    ms = run(rag(candidates=[R2026], extra_steps=[("ret2", [FIN, TRANSFER])]))
    assert one(ms, "permission_violations", "ret").passed is True
    assert (
        one(ms, "permission_violations", "ret2").numerator,
        one(ms, "permission_violations", "ret2").denominator,
    ) == (1, 2)
    t = one(ms, "permission_violations")
    assert (t.numerator, t.denominator) == (1, 3)
