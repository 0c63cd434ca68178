"""context_recall and context_retention (evaluators/builtin/context.py): denominators and drop steps."""

from __future__ import annotations

from evaluators.builtin import context
from evaluators.spec import NoConfig
from tests.evaluators.evidence_builders import case, inp, kb, one, rag

CFG = NoConfig()
A = {"id": "retention-v2", "content": "Logs are retained for 7 days."}
B = {
    "id": "retry-v2",
    "content": "Error R-17 means the request was rate limited. Wait 30 seconds before retrying.",
}
C = {"id": "export-v2", "content": "Logs can be exported as JSON."}
EV_A = [{"doc_id": "retention-v2", "quote": "retained for 7 days"}]


def run(trace, gold=None, registry=None):
    ms = context.evaluate(inp(trace, gold, registry), CFG)
    return one(ms, "context_recall"), one(ms, "context_retention")


def test_no_case_and_no_evidence_are_not_applicable():
    for gold, reason in ((None, "no gold case"), (case([]), "no gold evidence")):
        recall, retention = run(rag(candidates=[A]), gold)
        for m in (recall, retention):
            assert m.status == "not_applicable" and m.value is None and m.passed is None
            assert m.reason == reason


def test_no_context_stage_is_not_applicable_and_says_so():
    # a retrieval-only trace: no LLM call, no explicit context
    recall, retention = run(rag(candidates=[A], llm=False), case(EV_A))
    assert recall.status == retention.status == "not_applicable"
    assert "no context stage" in recall.reason


def test_all_retained():
    recall, retention = run(rag(candidates=[A, B]), case(EV_A))
    assert (recall.numerator, recall.denominator, recall.value, recall.passed) == (1, 1, 1.0, True)
    assert (retention.numerator, retention.denominator, retention.passed) == (1, 1, True)
    assert retention.reason is None and retention.details["dropped"] == []


def test_rerank_cut_names_the_reranker():
    trace = rag(candidates=[B, C, A], reranked=[B, C])
    recall, retention = run(trace, case(EV_A))
    assert (recall.value, recall.passed) == (0.0, False)
    assert (retention.numerator, retention.denominator, retention.value, retention.passed) == (
        0,
        1,
        0.0,
        False,
    )
    assert retention.reason == "rerank_cut"
    [dropped] = retention.details["dropped"]
    assert dropped["step"] == "rerank_cut" and dropped["span_id"] == "rr"
    assert dropped["candidate_rank"] == 3 and dropped["label"] == "retention-v2"


def test_rerank_cut_judged_on_the_reranker_input_when_recorded():
    # the reranker saw only B and C (the retriever's A never reached it): not a rerank cut
    trace = rag(candidates=[A, B, C], rerank_input=[B, C], reranked=[B])
    _, retention = run(trace, case(EV_A))
    assert retention.details["dropped"][0]["step"] == "not_in_prompt"


def test_truncation_after_the_reranker_is_not_in_prompt():
    # the reranker kept A, but the prompt only holds B (token budget)
    trace = rag(candidates=[A, B], reranked=[A, B], context=[B])
    _, retention = run(trace, case(EV_A))
    assert retention.value == 0.0 and retention.reason == "not_in_prompt"
    assert retention.details["dropped"][0]["span_id"] == "llm"


def test_no_retrieval_and_empty_candidates():
    gold = case(EV_A)
    for trace in (rag(candidates=None, context=[]), rag(candidates=[], context=[])):
        recall, retention = run(trace, gold)
        assert (recall.status, recall.numerator, recall.denominator, recall.value) == ("ok", 0, 1, 0.0)
        assert retention.status == "not_applicable"
        assert retention.reason == "no evidence unit among the candidates"


def test_unit_only_in_the_prompt_does_not_inflate_retention():
    # unit 0 reached the prompt through something that is no candidate (a tool, a system prompt);
    # unit 1 was a candidate and was dropped
    gold = case(EV_A + [{"doc_id": "export-v2", "quote": "exported as JSON"}])
    trace = rag(candidates=[C, B], context=[B], prompt="Logs are retained for 7 days.\n" + B["content"])
    recall, retention = run(trace, gold)
    assert (recall.numerator, recall.denominator) == (1, 2)
    assert (retention.numerator, retention.denominator, retention.value) == (0, 1, 0.0)


def test_any_of_group_is_one_unit():
    gold = case(
        [
            {
                "any_of": [
                    {"doc_id": "retention-v2", "quote": "7 days"},
                    {"doc_id": "retention-v3", "quote": "7 days"},
                ]
            },
            {"doc_id": "export-v2", "quote": "exported as JSON"},
        ]
    )
    recall, retention = run(rag(candidates=[A, C], context=[A]), gold)
    assert (recall.numerator, recall.denominator) == (1, 2)
    assert (retention.numerator, retention.denominator) == (1, 2)
    assert [d["label"] for d in retention.details["dropped"]] == ["export-v2"]


def test_duplicate_ids_count_a_unit_once():
    recall, retention = run(rag(candidates=[A, A, B], context=[A, A]), case(EV_A))
    assert (recall.numerator, recall.denominator) == (1, 1)
    assert (retention.numerator, retention.denominator) == (1, 1)


def test_unknown_document_without_quote_match_is_not_evidence():
    other = {"id": "retention-v9", "content": "Logs are kept somewhere."}
    recall, retention = run(rag(candidates=[other]), case(EV_A))
    assert recall.value == 0.0 and retention.status == "not_applicable"


def test_documents_without_ids_identified_through_the_registry():
    # LangChain-style candidates: content only, a chunk of the registry document
    registry = kb(
        {
            "doc_id": "retention-v2",
            "content": "Retention. Logs are retained for 7 days. Older logs are deleted.",
        }
    )
    gold = case([{"doc_id": "retention-v2"}])  # no quote: only the registry can tie the chunk to the id
    recall, retention = run(rag(candidates=["Logs are retained for 7 days.", B["content"]]), gold, registry)
    assert (recall.value, retention.value) == (1.0, 1.0)
    # without the registry the chunk cannot be identified
    recall, _ = run(rag(candidates=["Logs are retained for 7 days."]), gold)
    assert recall.value == 0.0


def test_chunk_uuid_with_the_source_id_in_metadata():
    chunk = {
        "id": "0f8e2c1a-5b7d-4e0a-9c3e-2a1b4c6d8e9f",
        "content": "Logs are retained for 7 days.",
        "metadata": {"ref_doc_id": "retention-v2"},
    }
    gold = case([{"doc_id": "retention-v2"}])
    recall, retention = run(rag(candidates=[B, chunk], reranked=[B]), gold)
    assert recall.value == 0.0
    assert retention.details["dropped"][0]["step"] == "rerank_cut"


def test_cjk_quote_with_spacing_and_punctuation_differences():
    gold = case([{"doc_id": "refund-policy-2026", "quote": "30 天内可申请退款，按剩余天数计算退款金额"}])
    cand = "年度会员购买后30天内可申请退款 按剩余天数计算退款金额；超过30天不支持退款。"
    recall, retention = run(rag(candidates=[cand, "会员权益仅限本人账号使用。"]), gold)
    assert (recall.value, retention.value) == (1.0, 1.0)
    recall, retention = run(
        rag(candidates=["会员权益仅限本人账号使用。", cand], context=["会员权益仅限本人账号使用。"]), gold
    )
    assert (recall.value, retention.value, retention.reason) == (0.0, 0.0, "not_in_prompt")


def test_quote_in_prompt_retains_a_unit_even_when_no_document_survives():
    # the prompt holds only an excerpt of the candidate, so no candidate is derived into context
    long = {
        "id": "retention-v2",
        "content": "Retention policy. Logs are retained for 7 days. Older logs are purged nightly.",
    }
    trace = rag(candidates=[long], prompt="Context: logs are retained for 7 days\nQuestion: how long?")
    recall, retention = run(trace, case(EV_A))
    assert (recall.value, retention.value) == (1.0, 1.0)


def test_explicit_context_decides_over_the_prompt():
    trace = rag(candidates=[A, B], context=[B], explicit_context=True, prompt=A["content"] + B["content"])
    recall, retention = run(trace, case(EV_A))
    assert recall.value == 0.0 and retention.reason == "not_in_prompt"
