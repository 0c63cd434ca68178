"""A retrieval reported twice (an outer span with the documents, a nested one without, as the
LlamaIndex instrumentor does) counts once: per-step means and call counts are not diluted."""

from __future__ import annotations

from datetime import datetime, timedelta

from evaluators.base import EvalInput, KnowledgeBase, StepDoc, StepInfo, TraceView
from evaluators.builtin import retrieval, retrieval_decision
from evaluators.gold import Evidence, GoldCase

T0 = datetime(2026, 1, 1)


def step(span: str, parent: str | None, kind: str, at: int) -> StepInfo:
    return StepInfo(
        span,
        parent,
        kind,
        span,
        T0 + timedelta(milliseconds=at),
        T0 + timedelta(milliseconds=at + 5),
        5.0,
        "OK",
    )


def doc(span: str, pos: int, doc_id: str, content: str) -> StepDoc:
    return StepDoc(span, "candidate", pos, doc_id, doc_id, content, 0.9 - pos / 10, None, "span")


def trace(nested_docs: bool) -> EvalInput:
    steps = (
        step("root", None, "chain", 0),
        step("outer", "root", "retrieval", 1),
        step("inner", "outer", "retrieval", 2),
        step("llm", "root", "llm", 10),
    )
    docs = (doc("outer", 0, "a", "Refunds within 30 days."), doc("outer", 1, "b", "Shipping is free."))
    if nested_docs:  # two genuine retrievals, both with documents
        docs += (doc("inner", 0, "b", "Shipping is free."),)
    view = TraceView("t" * 32, steps=steps, documents=docs)
    case = GoldCase(case_id="c", query="refund window?", evidence=[Evidence(doc_id="a", quote="30 days")])
    return EvalInput(view, case, KnowledgeBase())


def by_name(metrics: list, name: str, trace_level: bool = True):
    return [m for m in metrics if m.metric == name and (m.span_id is None) == trace_level]


def test_document_less_nested_retrieval_is_not_a_second_step() -> None:
    inp = trace(nested_docs=False)
    assert [s.span_id for s in inp.trace.retrieval_steps] == ["outer"]
    out = retrieval.evaluate(inp, retrieval.Config(ks=(1, 2)))
    (mrr,) = by_name(out, "mrr")
    assert (mrr.value, mrr.denominator) == (1.0, 1)  # not (1 + 0) / 2
    assert len(by_name(out, "mrr", trace_level=False)) == 1
    calls = [
        m
        for m in retrieval_decision.evaluate(inp, retrieval_decision.Config())
        if m.metric == "retrieval_calls"
    ]
    assert calls[0].value == 1


def test_two_retrievals_with_documents_both_count() -> None:
    inp = trace(nested_docs=True)
    assert [s.span_id for s in inp.trace.retrieval_steps] == ["outer", "inner"]
    (mrr,) = by_name(retrieval.evaluate(inp, retrieval.Config(ks=(1,))), "mrr")
    assert (mrr.value, mrr.denominator) == (0.5, 2)
