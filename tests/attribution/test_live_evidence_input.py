"""The live evidence evaluator on any text (Hypothesis): it never raises, always gives its four rows,
each ``ok`` (with ``passed`` false exactly when it names evidence) or ``not_applicable`` with a
reason; and it gives no rows for a trace with a gold case."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.builtin.live_evidence import SPEC, Config
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import GoldCase, KBDocument
from evaluators.trace_view import StepDoc, StepInfo, TraceView
from tests.attribution.data import GOLD, KB

KNOWLEDGE = KnowledgeBase([KBDocument(**d) for d in KB])
WORDS = [
    "Logs",
    "retained",
    "7",
    "days",
    "R-17",
    "wait",
    "30",
    "seconds",
    "年度会员",
    "退款",
    "天",
    "，",
    "。",
    "?",
]
text = st.lists(st.sampled_from(WORDS) | st.text(max_size=12), max_size=14).map(" ".join)
METRICS = ["live_no_retrieval", "live_candidate_miss", "live_dropped", "live_over_refusal"]


def trace(question: str, answer: str, cands: list[str], kept: int, prompt: str | None) -> TraceView:
    t0 = datetime(2026, 9, 1)
    steps = [StepInfo("llm", None, "llm", "llm", t0, t0, 1.0, "OK", input_text=prompt, output_text=answer)]
    docs = []
    if cands:
        steps.insert(0, StepInfo("r", None, "retrieval", "retrieve", t0, t0, 1.0, "OK"))
        docs = [StepDoc("r", "candidate", i, None, None, c, None, None, "span") for i, c in enumerate(cands)]
        steps.insert(1, StepInfo("k", None, "rerank", "rerank", t0, t0, 1.0, "OK"))
        docs += [
            StepDoc("k", "reranked", i, None, None, c, None, None, "span") for i, c in enumerate(cands[:kept])
        ]
    return TraceView(
        "t", t0, t0, query_text=question, answer_text=answer, steps=tuple(steps), documents=tuple(docs)
    )


@settings(max_examples=150, deadline=None)
@given(text, text, st.lists(text, max_size=4), st.integers(0, 4), st.none() | text)
def test_any_text(question: str, answer: str, cands: list[str], kept: int, prompt: str | None) -> None:
    inp = EvalInput(trace(question, answer, cands, kept, prompt), None, KNOWLEDGE, datetime(2026, 9, 1))
    rows = SPEC.fn(inp, Config())
    assert [r.metric for r in rows] == METRICS
    for r in rows:
        assert r.status in ("ok", "not_applicable"), r
        if r.status == "ok":
            assert r.passed is (not r.details["found"]), r
            assert r.value is not None and r.value >= 0
        else:
            assert r.reason and r.value is None and r.passed is None


def test_no_rows_with_a_gold_case() -> None:
    case = GoldCase(**GOLD[0])
    inp = EvalInput(trace("How long?", "7 days.", [], 0, None), case, KNOWLEDGE, datetime(2026, 9, 1))
    assert SPEC.fn(inp, Config()) == []
