"""The answer-side evaluators (refusal, fact_coverage, answer_support, citations, retrieval_decision)
over hand-built EvalInputs, and the seed examples' figures."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from evaluators.builtin import answer_support, citations, fact_coverage, refusal, retrieval_decision
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import GoldCase, KBDocument, parse_jsonl
from evaluators.metric import Metric
from evaluators.trace_view import StepDoc, StepInfo, TraceView

T0 = datetime(2026, 9, 30, 12, 0, 0)

# seed 000 (the log-retention example)
LOG_KB = parse_jsonl(
    "\n".join(
        [
            '{"doc_id": "retry-v2", "version": "2", "valid_from": "2026-01-01", "content": "Error R-17 means the '
            'request was rate limited. Wait 30 seconds before retrying.", "acl": ["public"]}',
            '{"doc_id": "retention-v1", "version": "1", "valid_from": "2025-01-01", "valid_to": "2026-01-01", '
            '"superseded_by": "retention-v2", "content": "Logs are retained for 30 days.", "acl": ["public"]}',
            '{"doc_id": "retention-v2", "version": "2", "valid_from": "2026-01-01", "content": "Logs are retained '
            'for 7 days.", "acl": ["public"]}',
            '{"doc_id": "export-v2", "version": "2", "valid_from": "2026-01-01", "content": "Logs can be exported '
            'as JSON.", "acl": ["public"]}',
        ]
    ),
    KBDocument,
    "doc_id",
)
LOG_CASES = {
    c.case_id: c
    for c in parse_jsonl(
        "\n".join(
            [
                '{"case_id": "exact-id", "query": "How long should I wait before retrying after error R-17?", '
                '"answerable": true, "expected_behavior": "answer", "must_retrieve": true, "evidence": [{"doc_id": '
                '"retry-v2", "quote": "Wait 30 seconds before retrying"}], "required_facts": [{"id": "wait-30s", '
                '"text": "30 seconds"}], "as_of": "2026-09-30"}',
                '{"case_id": "two-facts", "query": "How long are logs retained, and which export format is '
                'supported?", "answerable": true, "expected_behavior": "answer", "must_retrieve": true, "evidence": '
                '[{"doc_id": "retention-v2", "quote": "retained for 7 days"}, {"doc_id": "export-v2", "quote": '
                '"exported as JSON"}], "required_facts": [{"id": "keep-7d", "text": "7 days"}, {"id": "json", '
                '"text": "JSON"}], "as_of": "2026-09-30"}',
                '{"case_id": "stale-version", "query": "Under the current policy, how long are logs retained?", '
                '"answerable": true, "expected_behavior": "answer", "must_retrieve": true, "evidence": [{"doc_id": '
                '"retention-v2", "quote": "retained for 7 days"}], "required_facts": [{"id": "keep-7d", "text": '
                '"7 days"}], "negative_doc_ids": ["retention-v1"], "as_of": "2026-09-30"}',
                '{"case_id": "no-answer", "query": "What is the maximum number of days retention can be extended '
                'to?", "answerable": false, "expected_behavior": "refuse", "must_retrieve": true, "evidence": [], '
                '"required_facts": [], "as_of": "2026-09-30"}',
            ]
        ),
        GoldCase,
        "case_id",
    )
}
LOG_CONTENT = {d.doc_id: d.content or "" for d in LOG_KB}

# (case, top-2 candidates, answer) of expected.md
BASELINE = [
    ("exact-id", ["retry-v2", "export-v2"], "Wait 30 seconds, then retry."),
    ("two-facts", ["retention-v2", "retry-v2"], "Logs are retained for 7 days."),
    ("stale-version", ["retention-v1", "retry-v2"], "Logs are retained for 30 days."),
    ("no-answer", ["retention-v2", "export-v2"], "Retention can be extended to 90 days."),
]
CORRECTED = [
    ("exact-id", ["retry-v2", "export-v2"], "Wait 30 seconds, then retry."),
    (
        "two-facts",
        ["retention-v2", "export-v2"],
        "Logs are retained for 7 days. They can be exported as JSON.",
    ),
    (
        "stale-version",
        ["retention-v2", "retention-v1"],
        "Under the current policy, logs are retained for 7 days.",
    ),
    (
        "no-answer",
        ["retention-v2", "export-v2"],
        "The documents do not say how far retention can be extended.",
    ),
]


def _step(span_id: str, step_type: str, start: int, **kw: Any) -> StepInfo:
    return StepInfo(
        span_id=span_id,
        parent_span_id=None if span_id == "root" else "root",
        step_type=step_type,
        name=kw.pop("name", span_id),
        start_time=T0 + timedelta(milliseconds=start),
        end_time=T0 + timedelta(milliseconds=start + kw.get("duration", 10)),
        duration_ms=float(kw.pop("duration", 10)),
        status_code=kw.pop("status_code", "OK"),
        is_root=span_id == "root",
        **kw,
    )


def _docs(span_id: str, stage: str, items: list[dict[str, Any]], source: str = "span") -> list[StepDoc]:
    return [
        StepDoc(
            span_id,
            stage,
            i,
            d.get("id"),
            d.get("chunk_id"),
            d.get("content"),
            None,
            d.get("metadata"),
            source,
        )
        for i, d in enumerate(items)
    ]


def trace(
    query: str,
    answer: str | None,
    candidates: list[dict[str, Any]] | None = (),  # type: ignore[assignment]
    *,
    context: list[dict[str, Any]] | None = None,
    explicit_context: bool = False,
    prompt: str | None = None,
    llm: bool = True,
    cite: tuple[str, ...] = (),
    tools: list[dict[str, Any]] = (),  # type: ignore[assignment]
    tokens: tuple[int | None, int | None, int | None] = (100, 20, 120),
    root_ms: float = 250.0,
) -> TraceView:
    """A RAG trace as the assembler would present it: candidates=None means no retrieval step; the
    context defaults to the candidates and is derived from the prompt unless ``explicit_context``."""
    steps = [_step("root", "chain", 0, duration=root_ms, output_text=answer)]
    documents: list[StepDoc] = []
    if candidates is not None:
        steps.append(_step("ret", "retrieval", 1, query_text=query))
        documents += _docs("ret", "candidate", list(candidates))
    ctx = list(candidates or []) if context is None else context
    for i, t in enumerate(tools):
        steps.append(
            _step(
                f"tool{i}",
                "tool",
                20 + i,
                name=t["name"],
                tool_name=t["name"],
                status_code=t.get("status", "OK"),
            )
        )
    if llm:
        if prompt is None:
            blocks = "\n\n".join(d.get("content") or "" for d in ctx)
            prompt = f"Answer from the context only.\n\nContext:\n{blocks}\n\nQuestion: {query}"
        documents += _docs(
            "root" if explicit_context else "llm", "context", ctx, "span" if explicit_context else "derived"
        )
        steps.append(
            _step(
                "llm",
                "llm",
                50,
                input_text=prompt,
                output_text=answer,
                citations=cite,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                total_tokens=tokens[2],
            )  # fmt: skip
        )
    elif explicit_context:
        documents += _docs("root", "context", ctx, "span")
    return TraceView(
        trace_id="t" * 32,
        start_time=T0,
        end_time=T0 + timedelta(milliseconds=root_ms),
        query_text=query,
        answer_text=answer,
        answer_span_id="llm" if llm else None,
        steps=tuple(steps),
        documents=tuple(documents),
    )


def ev(view: TraceView, case: GoldCase | None = None, kb: list[KBDocument] | None = None) -> EvalInput:
    return EvalInput(
        view, case, KnowledgeBase(kb if kb is not None else LOG_KB), case.as_of if case else None
    )


def kbdocs(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "content": LOG_CONTENT[i]} for i in ids]


def one(metrics: list[Metric], name: str, span_id: str | None | type = type) -> Metric:
    found = [m for m in metrics if m.metric == name and (span_id is type or m.span_id == span_id)]
    assert len(found) == 1, (name, metrics)
    return found[0]


def run_all(view: TraceView, case: GoldCase | None, kb: list[KBDocument] | None = None) -> list[Metric]:
    inp = ev(view, case, kb)
    out: list[Metric] = []
    for mod in (refusal, fact_coverage, answer_support, citations, retrieval_decision):
        if mod.SPEC.needs_case and case is None:
            continue
        out += mod.SPEC.fn(inp, mod.SPEC.config())
    return out


# --- seed 000: the summary figures --------------------------------------------------------------------


def _run(run: list[tuple[str, list[str], str]]) -> dict[str, list[Metric]]:
    return {
        cid: run_all(trace(LOG_CASES[cid].query, answer, kbdocs(*top2)), LOG_CASES[cid])
        for cid, top2, answer in run
    }


def _figures(results: dict[str, list[Metric]]) -> dict[str, Any]:
    support = [one(ms, "answer_support") for ms in results.values()]
    support_ok = [m for m in support if m.status == "ok"]
    coverage = [one(ms, "fact_coverage") for ms in results.values()]
    coverage_ok = [m for m in coverage if m.status == "ok"]
    cells = [one(ms, "answerability").label for ms in results.values()]
    return {
        "support_micro": (sum(m.numerator for m in support_ok), sum(m.denominator for m in support_ok)),
        "coverage_macro": round(sum(m.value for m in coverage_ok) / len(coverage_ok), 2),
        "coverage_cases": len(coverage_ok),
        "correct_refusal": (
            cells.count("refused_unanswerable"),
            sum(c.endswith("_unanswerable") for c in cells),
        ),
        "false_refusal": (
            cells.count("refused_answerable"),
            sum(c.endswith("_answerable") and "un" not in c for c in cells),
        ),
    }


def test_seed_000_baseline_figures() -> None:
    results = _run(BASELINE)
    f = _figures(results)
    assert f["support_micro"] == (3, 4)
    assert f["coverage_macro"] == 0.50 and f["coverage_cases"] == 3
    assert f["correct_refusal"] == (0, 1)
    assert f["false_refusal"] == (0, 3)
    # per case, as expected.md says
    assert (
        one(results["two-facts"], "fact_coverage").numerator,
        one(results["two-facts"], "fact_coverage").denominator,
    ) == (1, 2)
    stale = results["stale-version"]
    assert one(stale, "answer_support").value == 1.0  # faithful to the stale text ...
    assert one(stale, "fact_coverage").value == 0.0  # ... yet the required fact is not stated
    no_answer = results["no-answer"]
    assert (
        one(no_answer, "answer_support").numerator == 0 and one(no_answer, "answer_support").denominator == 1
    )
    assert one(no_answer, "answerability").label == "answered_unanswerable"
    assert one(no_answer, "answerability").passed is False
    assert one(no_answer, "fact_coverage").status == "not_applicable"


def test_seed_000_corrected_figures() -> None:
    results = _run(CORRECTED)
    f = _figures(results)
    assert f["support_micro"] == (4, 4)
    assert f["coverage_macro"] == 1.00
    assert f["correct_refusal"] == (1, 1)
    assert f["false_refusal"] == (0, 3)
    assert one(results["two-facts"], "answer_support").denominator == 2
    refusal_support = one(results["no-answer"], "answer_support")
    assert refusal_support.status == "not_applicable" and refusal_support.reason == "no claims"
    assert refusal_support.value is None
    assert one(results["no-answer"], "refusal").label == "refused"
    assert all(one(ms, "answerability").passed for ms in results.values())


# --- seed 002: the refund traces, the layers these evaluators decide ------------------------------------

REFUND_KB = [
    KBDocument(
        doc_id="refund-policy-2024", version="2024", content="年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。",
        valid_to=datetime(2026, 3, 1), superseded_by="refund-policy-2026", acl=["support"],
    ),
    KBDocument(
        doc_id="refund-policy-2026", version="2026",
        content="年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。", acl=["support"],
    ),
    KBDocument(doc_id="member-transfer", content="会员权益仅限本人账号使用。", acl=["support"]),
    KBDocument(doc_id="finance-discounts", content="大客户合同折扣由财务部单独审批。", acl=["finance"]),
]  # fmt: skip
REFUND_TEXT = {d.doc_id: d.content or "" for d in REFUND_KB}
REFUND_DAY_20 = GoldCase(
    case_id="refund-day-20", query="年度会员买了第 20 天，还能退款吗？", must_retrieve=True, risk="high",
    evidence=[{"doc_id": "refund-policy-2026", "quote": "30 天内可申请退款，按剩余天数计算退款金额"}],
    required_facts=[
        {"id": "within-30", "text": "30 天内可退款", "aliases": ["30 天内可申请退款", "30天内"]},
        {"id": "prorated", "text": "按剩余天数计算", "aliases": ["按剩余天数"]},
    ],
    negative_doc_ids=["refund-policy-2024"], user_scope=["support"], as_of=datetime(2026, 9, 15),
)  # fmt: skip
FAMILY = GoldCase(
    case_id="family-plan-price", query="家庭套餐多少钱一年？", answerable=False, expected_behavior="refuse",
    must_retrieve=True, user_scope=["support"],
)  # fmt: skip


def rdocs(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "content": REFUND_TEXT[i]} for i in ids]


def test_seed_002_trace_a_follows_the_stale_policy_faithfully() -> None:
    ms = run_all(
        trace(REFUND_DAY_20.query, "7 天内可全额退款", rdocs("refund-policy-2024", "refund-policy-2026")),
        REFUND_DAY_20,
        REFUND_KB,
    )
    s = one(ms, "answer_support")
    assert s.passed is True and s.details["claims"][0]["doc_id"] == "refund-policy-2024"
    assert one(ms, "fact_coverage").value == 0.0
    assert one(ms, "facts_missing_in_context").passed is False


def test_seed_002_trace_c_seven_against_thirty_is_an_unsupported_claim() -> None:
    ms = run_all(
        trace(REFUND_DAY_20.query, "7 天内全额退款", rdocs("refund-policy-2026")), REFUND_DAY_20, REFUND_KB
    )
    s = one(ms, "answer_support")
    assert (s.numerator, s.denominator, s.passed) == (0, 1, False)
    assert s.details["claims"][0]["verdict"] in ("contradicted", "unsupported")
    assert s.details["contradicted"] + s.details["unsupported"] == 1
    assert one(ms, "answerability").label == "answered_answerable"


def test_seed_002_trace_c_without_the_question_words_is_contradicted() -> None:
    cfg = answer_support.Config(ignore_query_terms=False)
    inp = ev(
        trace(REFUND_DAY_20.query, "7 天内可全额退款", rdocs("refund-policy-2026")), REFUND_DAY_20, REFUND_KB
    )
    s = one(answer_support.evaluate(inp, cfg), "answer_support")
    assert s.details["claims"][0]["verdict"] == "contradicted"
    assert s.details["contradicted"] == 1 and s.details["unsupported"] == 0


def test_seed_002_trace_f_g_h_refusal_table() -> None:
    f = run_all(
        trace(FAMILY.query, "家庭套餐 299 元一年", rdocs("refund-policy-2026", "member-transfer")),
        FAMILY,
        REFUND_KB,
    )
    assert one(f, "answerability").label == "answered_unanswerable"
    assert one(f, "answer_support").passed is False
    g = run_all(
        trace(
            FAMILY.query,
            "资料里没有家庭套餐价格的信息，建议咨询人工客服。",
            rdocs("refund-policy-2026", "member-transfer"),
        ),
        FAMILY,
        REFUND_KB,
    )
    assert one(g, "answerability").label == "refused_unanswerable" and one(g, "answerability").passed is True
    assert one(g, "answer_support").status == "not_applicable"
    h = run_all(
        trace(REFUND_DAY_20.query, "不清楚，请咨询人工客服。", rdocs("refund-policy-2026")),
        REFUND_DAY_20,
        REFUND_KB,
    )
    assert one(h, "answerability").label == "refused_answerable" and one(h, "answerability").passed is False
    # the refusal states no fact, and both facts were in the context
    assert (one(h, "fact_coverage").numerator, one(h, "fact_coverage").denominator) == (0, 2)
    assert one(h, "fact_coverage").status == "ok"
    missing = one(h, "facts_missing_in_context")
    assert (missing.numerator, missing.denominator, missing.passed) == (2, 2, False)
    assert missing.details["missing_in_context"] == ["within-30", "prorated"]


def test_seed_002_trace_d_no_retrieval() -> None:
    ms = run_all(trace(REFUND_DAY_20.query, "7 天内可全额退款", None), REFUND_DAY_20, REFUND_KB)
    d = one(ms, "retrieval_decision")
    assert d.label == "must_retrieve×skipped" and d.passed is False and d.numerator == 0
    assert one(ms, "answer_support").passed is False  # the prompt held no policy


# --- refusal ------------------------------------------------------------------------------------------


def test_refusal_without_a_case_and_the_answerability_sides() -> None:
    ms = run_all(trace("q?", "I don't know."), None)
    r = one(ms, "refusal")
    assert (r.value, r.label, r.status) == (1.0, "refused", "ok")
    assert one(ms, "answerability").status == "not_applicable"
    ms = run_all(trace("q?", "Logs are retained for 7 days."), None)
    assert (one(ms, "refusal").value, one(ms, "refusal").label) == (0.0, "answered")

    premise = GoldCase(case_id="p", query="年度会员 7 天退款怎么申请？", expected_behavior="correct_premise")
    ms = run_all(
        trace(premise.query, "现行政策是 30 天内可申请退款。", rdocs("refund-policy-2026")),
        premise,
        REFUND_KB,
    )
    assert one(ms, "answerability").label == "answered_answerable"
    clarify = GoldCase(case_id="c", query="我的会员能退吗？", answerable=False, expected_behavior="clarify")
    ms = run_all(trace(clarify.query, "请问您是哪天购买的？"), clarify, REFUND_KB)
    assert one(ms, "refusal").details["kind"] == "clarification"
    assert one(ms, "answerability").label == "refused_unanswerable"


def test_refusal_empty_answer_is_not_applicable_and_config_patterns() -> None:
    for answer in ("", None, "   "):
        ms = run_all(trace("q?", answer), LOG_CASES["no-answer"])
        assert one(ms, "refusal").status == "not_applicable"
        assert one(ms, "answerability").status == "not_applicable"
        assert one(ms, "answer_support").status == "not_applicable"
    inp = ev(trace("q?", "That is outside my remit."), None)
    assert one(refusal.evaluate(inp, refusal.Config()), "refusal").label == "answered"
    assert (
        one(refusal.evaluate(inp, refusal.Config(extra_patterns=("outside my remit",))), "refusal").label
        == "refused"
    )
    with pytest.raises(ValueError):
        refusal.Config(extra_patterns=("(unclosed",))


# --- fact coverage --------------------------------------------------------------------------------------


def test_fact_coverage_denominator_edges() -> None:
    view = trace("q?", "Logs are retained for 7 days.", kbdocs("retention-v2"))
    no_case = fact_coverage.evaluate(ev(view, None), fact_coverage.Config())
    assert {m.status for m in no_case} == {"not_applicable"} and {m.reason for m in no_case} == {
        "no gold case"
    }
    no_facts = fact_coverage.evaluate(ev(view, LOG_CASES["no-answer"]), fact_coverage.Config())
    assert [(m.metric, m.status, m.value) for m in no_facts] == [
        ("fact_coverage", "not_applicable", None),
        ("facts_missing_in_context", "not_applicable", None),
    ]


def test_facts_missing_in_context_only_counts_facts_the_model_saw() -> None:
    case = LOG_CASES["two-facts"]
    # JSON missing from the answer, and export-v2 not in the context: incomplete but not the answer's fault
    ms = run_all(trace(case.query, "Logs are retained for 7 days.", kbdocs("retention-v2", "retry-v2")), case)
    assert one(ms, "fact_coverage").value == 0.5
    m = one(ms, "facts_missing_in_context")
    assert (m.numerator, m.denominator, m.passed) == (0, 2, True)
    # with export-v2 in the context the missing fact counts
    ms = run_all(
        trace(case.query, "Logs are retained for 7 days.", kbdocs("retention-v2", "export-v2")), case
    )
    m = one(ms, "facts_missing_in_context")
    assert (m.numerator, m.passed, m.details["missing_in_context"]) == (1, False, ["json"])


def test_facts_in_context_through_the_evidence_when_the_text_differs() -> None:
    case = GoldCase(
        case_id="x", query="Which export format?", evidence=[{"doc_id": "export-v2"}],
        required_facts=[{"id": "fmt", "text": "JavaScript Object Notation"}],
    )  # fmt: skip
    ms = run_all(trace(case.query, "Logs are retained for 7 days.", kbdocs("export-v2")), case)
    m = one(ms, "facts_missing_in_context")
    assert m.numerator == 1 and m.details["facts"][0]["how"] == "evidence"
    ms = run_all(trace(case.query, "Logs are retained for 7 days.", kbdocs("retention-v2")), case)
    assert one(ms, "facts_missing_in_context").numerator == 0


# --- answer support ---------------------------------------------------------------------------------------


def test_answer_support_details_and_span() -> None:
    case = LOG_CASES["two-facts"]
    answer = (
        "Logs are retained for 30 days. They can be exported as JSON. Retention can be extended to 90 days."
    )
    ms = run_all(trace(case.query, answer, kbdocs("retention-v2", "export-v2")), case)
    s = one(ms, "answer_support")
    assert s.span_id == "llm"
    assert (s.numerator, s.denominator, s.passed) == (1, 3, False)
    assert (s.details["supported"], s.details["contradicted"], s.details["unsupported"]) == (1, 1, 1)
    rows = {r["claim"]: r for r in s.details["claims"]}
    assert rows["Logs are retained for 30 days"]["doc_id"] == "retention-v2"
    assert rows["They can be exported as JSON"]["sentence"] == "Logs can be exported as JSON."
    assert rows["They can be exported as JSON"]["doc_id"] == "export-v2"


def test_answer_support_explicit_context_beats_the_prompt() -> None:
    case = LOG_CASES["stale-version"]
    view = trace(
        case.query, "Logs are retained for 30 days.", kbdocs("retention-v1", "retention-v2"),
        context=kbdocs("retention-v2"), explicit_context=True,
    )  # fmt: skip
    s = one(run_all(view, case), "answer_support")
    assert s.passed is False and s.details["context"] == "context"


def test_answer_support_falls_back_to_the_prompt_without_the_question() -> None:
    # no retrieval and no context documents: what the model saw is its input
    view = trace("How long are logs retained?", "Logs are retained for 7 days.", None,
                 prompt="System: logs are retained for 7 days.\nUser: How long are logs retained?")  # fmt: skip
    s = one(run_all(view, None), "answer_support")
    assert s.passed is True and s.details["context"] == "prompt"
    # the question itself supports nothing
    view = trace("Are logs retained for 7 days?", "Logs are retained for 7 days.", None,
                 prompt="User: Are logs retained for 7 days?")  # fmt: skip
    s = one(run_all(view, None), "answer_support")
    assert s.passed is False


def test_answer_support_no_claims_and_no_context() -> None:
    s = one(run_all(trace("q?", "I don't know."), None), "answer_support")
    assert s.status == "not_applicable" and s.reason == "no claims" and s.details == {"refusal": True}
    s = one(run_all(trace("q?", "Logs are retained for 7 days.", None, llm=False), None), "answer_support")
    assert (
        s.status == "not_applicable"
        and s.reason == "missing answer_llm_input: no context recorded"
        and s.span_id is None
    )


def test_answer_support_threshold_from_config() -> None:
    # three of the claim's four content terms (billing is not in the context): enough at 0.6; at 0.8
    # the lexical tier cannot show support, nor a difference, so it leaves the claim undecided
    view = trace("q?", "Billing logs are retained for 7 days.", kbdocs("retention-v2"))
    assert one(answer_support.evaluate(ev(view), answer_support.Config()), "answer_support").passed is True
    strict = answer_support.Config(min_coverage=0.8)
    rows = answer_support.evaluate(ev(view), strict)
    s = one(rows, "answer_support")
    assert s.status == "not_applicable" and s.reason == "all claims undecided" and s.details["undecided"] == 1
    assert (
        one(rows, "answer_support_undecided").numerator,
        one(rows, "answer_support_undecided").denominator,
    ) == (1, 1)
    with pytest.raises(ValueError):
        answer_support.Config(min_coverage=0.4, contradiction_coverage=0.5)


# --- citations ----------------------------------------------------------------------------------------------


def test_citation_validity() -> None:
    docs = kbdocs("retention-v2", "export-v2")
    s = one(
        run_all(trace("q?", "Logs are retained for 7 days.", docs, cite=("retention-v2",)), None),
        "citation_validity",
    )
    assert (s.numerator, s.denominator, s.passed, s.span_id) == (1, 1, True, "llm")
    s = one(
        run_all(
            trace("q?", "Logs are retained for 7 days.", docs, cite=("retention-v2", "retention-v1")), None
        ),
        "citation_validity",
    )
    assert (s.numerator, s.denominator, s.passed) == (1, 2, False) and s.details["invalid"] == [
        "retention-v1"
    ]


def test_citation_markers_in_the_answer_name_known_documents_only() -> None:
    docs = kbdocs("retention-v2")
    s = one(
        run_all(trace("q?", "Logs are retained for 7 days [retention-v2] [1].", docs), None),
        "citation_validity",
    )
    assert (s.numerator, s.denominator) == (1, 1) and s.details["from_answer_markers"] == ["retention-v2"]
    s = one(
        run_all(trace("q?", "Logs are retained for 30 days [retention-v1].", docs), None), "citation_validity"
    )
    assert (s.numerator, s.denominator, s.details["invalid"]) == (0, 1, ["retention-v1"])
    s = one(run_all(trace("q?", "Logs are retained for 7 days [sic].", docs), None), "citation_validity")
    assert s.status == "not_applicable" and s.reason == "no citations"


def test_citation_of_a_source_document_through_chunk_metadata() -> None:
    chunk = {
        "id": "chunk-9f2",
        "chunk_id": "chunk-9f2",
        "content": "Logs are retained for 7 days.",
        "metadata": {"ref_doc_id": "policy-doc"},
    }
    s = one(
        run_all(
            trace("q?", "Logs are retained for 7 days.", [chunk], cite=("policy-doc", "chunk-9f2")), None, []
        ),
        "citation_validity",
    )
    assert (s.numerator, s.denominator) == (2, 2)
    # a registry document identified by content, cited by its registry id
    s = one(run_all(trace("q?", "Logs are retained for 7 days.", [{"content": "Logs are retained for 7 days."}],
                          cite=("retention-v2",)), None), "citation_validity")  # fmt: skip
    assert s.passed is True


# --- retrieval decision ---------------------------------------------------------------------------------------


def test_retrieval_decision_table_and_counters() -> None:
    case = LOG_CASES["exact-id"]
    ms = run_all(
        trace(
            case.query,
            "Wait 30 seconds.",
            kbdocs("retry-v2"),
            tools=[{"name": "calculator", "status": "ERROR"}],
        ),
        case,
    )
    d = one(ms, "retrieval_decision")
    assert (d.label, d.passed, d.numerator) == ("must_retrieve×retrieved", True, 1)
    values = {
        m.metric: m.value
        for m in ms
        if m.metric
        in ("retrieval_calls", "tool_calls", "llm_calls", "total_tokens", "latency_ms", "tool_errors")
    }
    assert values == {
        "retrieval_calls": 1,
        "tool_calls": 1,
        "llm_calls": 1,
        "total_tokens": 120,
        "latency_ms": 250.0,
        "tool_errors": 1,
    }

    may = GoldCase(case_id="m", query="hi", must_retrieve=False)
    assert (
        one(run_all(trace("hi", "Hello there friend.", None), may), "retrieval_decision").label
        == "may_skip×skipped"
    )
    d = one(run_all(trace("hi", "Hello there friend.", None), None), "retrieval_decision")
    assert (d.label, d.passed) == ("unknown×skipped", True)
    # an agent's search tool is a retrieval
    d = one(
        run_all(trace(case.query, "Wait 30 seconds.", None, tools=[{"name": "search_kb"}]), case),
        "retrieval_decision",
    )
    assert (d.label, d.passed, d.numerator) == ("must_retrieve×retrieved", True, 1)


def test_retrieval_decision_missing_tokens_and_input_tokens_only() -> None:
    ms = run_all(trace("q?", "A b c d.", None, tokens=(None, None, None)), None)
    assert one(ms, "total_tokens").status == "not_applicable"
    ms = run_all(trace("q?", "A b c d.", None, tokens=(30, 12, None)), None)
    assert one(ms, "total_tokens").value == 42
