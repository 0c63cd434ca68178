"""A retrieval reported twice (an outer span with the documents, a nested one without, as the
LlamaIndex instrumentor does) counts once: per-step means and call counts are not diluted."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from evaluators.builtin import retrieval, retrieval_decision
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import Evidence, GoldCase
from evaluators.trace_view import StepDoc, StepInfo, TraceView

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


def tool(span: str, parent: str | None, name: str, at: int) -> StepInfo:
    return StepInfo(
        span,
        parent,
        "tool",
        name,
        T0 + timedelta(milliseconds=at),
        T0 + timedelta(milliseconds=at + 5),
        5.0,
        "OK",
        tool_name=name,
    )


KB_DOCS = [("a", "Refunds within 30 days."), ("b", "Shipping is free."), ("c", "Returns need a receipt.")]


def agent_trace(outer_docs: list[int] | None, inner_kind: str = "tool") -> EvalInput:
    """An agent whose ``search_kb`` tool calls a retriever (a ``retrieve`` tool, or a retrieval
    step) that found a, b, c; ``search_kb`` lists ``outer_docs`` of them (None: a text result)."""
    inner = (
        tool("inner", "outer", "retrieve", 3)
        if inner_kind == "tool"
        else step("inner", "outer", "retrieval", 3)
    )
    steps = (
        step("root", None, "agent", 0),
        tool("outer", "root", "search_kb", 2),
        inner,
        step("llm", "root", "llm", 10),
    )
    docs = tuple(doc("inner", i, d, text) for i, (d, text) in enumerate(KB_DOCS))
    for pos, i in enumerate(outer_docs or ()):
        docs += (doc("outer", pos, KB_DOCS[i][0], KB_DOCS[i][1]),)
    case = GoldCase(case_id="c", query="refund window?", evidence=[Evidence(doc_id="a", quote="30 days")])
    return EvalInput(TraceView("t" * 32, steps=steps, documents=docs), case, KnowledgeBase())


def calls_of(inp: EvalInput) -> tuple[float | None, object]:
    out = retrieval_decision.evaluate(inp, retrieval_decision.Config())
    (calls,) = [m for m in out if m.metric == "retrieval_calls"]
    (decision,) = [m for m in out if m.metric == "retrieval_decision"]
    return calls.value, (decision.details or {})["retrieval_tool_calls"]


def test_a_search_tool_that_hands_on_a_nested_retrieval_s_documents_is_one_call() -> None:
    # a text result (smolagents' ``search_kb``), the same list, or its first few: one retrieval
    for outer in (None, [0, 1, 2], [0, 1], [1]):
        for inner_kind in ("tool", "retrieval"):
            inp = agent_trace(outer, inner_kind)
            assert calls_of(inp)[0] == 1, (outer, inner_kind)
            held = [(s.span_id, [d.doc_id for d in ds]) for s, ds in inp.trace.candidates_by_step]
            assert held == [("inner", ["a", "b", "c"])], (outer, inner_kind)  # the retriever's own list
    assert calls_of(agent_trace([0, 1]))[1] == ["retrieve"]


def test_a_tool_that_adds_documents_of_its_own_is_a_retrieval_of_its_own() -> None:
    """A fusion: the outer tool lists a document the inner retrieval did not find."""
    inp = agent_trace([0, 1])
    extra = doc("outer", 2, "d", "Gift cards never expire.")
    inp = EvalInput(
        TraceView("t" * 32, steps=inp.trace.steps, documents=inp.trace.documents + (extra,)), inp.case, inp.kb
    )
    assert calls_of(inp) == (2, ["search_kb", "retrieve"])
    assert [s.span_id for s, _ in inp.trace.candidates_by_step] == ["outer", "inner"]


def test_no_retrieval_seen_gives_no_recall_of_zero() -> None:
    """A trace that shows no retrieval and nothing of what the model saw (an agent framework's own
    spans, recording neither a tool's result nor a prompt) cannot tell whether the evidence was ever
    retrieved: the trace's recall@k and hit@k are not applicable naming what is missing, as
    candidate_recall is, never 0; a trace whose prompt is known and that retrieved nothing gets 0."""
    steps = (step("root", None, "agent", 0), step("llm", "root", "llm", 1))
    case = GoldCase(case_id="c", query="refund window?", evidence=[Evidence(doc_id="a", quote="30 days")])
    blind = EvalInput(TraceView("u" * 32, steps=steps, documents=()), case, KnowledgeBase())
    out = retrieval.evaluate(blind, retrieval.Config(ks=(1, 5)))
    for name in ("recall@1", "hit@1", "recall@5", "hit@5", "candidate_recall"):
        (m,) = by_name(out, name)
        assert (m.status, m.details["missing_fields"]) == ("not_applicable", ["answer_llm_input"]), name
    prompted = (steps[0], dataclasses.replace(steps[1], input_text="Answer briefly: refund window?"))
    seen = EvalInput(TraceView("v" * 32, steps=prompted, documents=()), case, KnowledgeBase())
    out = retrieval.evaluate(seen, retrieval.Config(ks=(1, 5)))
    (recall,) = by_name(out, "recall@5")
    assert (recall.status, recall.value) == ("ok", 0.0)
