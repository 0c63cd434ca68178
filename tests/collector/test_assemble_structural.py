"""assemble() with the structural rules: the query unwrapped by shape, the answering call found from the
final answer, and its prompt found where it was recorded (its own span, an enclosing LLM call, or a
span inside it)."""

from __future__ import annotations

import json

from collector.settling.assemble import answer_prompt, assemble
from tests.collector.test_assemble import doc, step

PROMPT = "Context information is below.\nRefunds within 30 days.\nQuery: How long?\nAnswer:"


def test_the_prompt_of_a_call_that_recorded_only_its_output_is_found_inside_it() -> None:
    steps = [
        step("root", "chain", inp="How long?", out="Refunds within 30 days."),
        step("ret", "retrieval", parent="root", start=1, end=2),
        step("llm", "llm", parent="root", start=3, end=6, out="Refunds within 30 days."),
        # the custom LLM's inner task: the prompt as the call's arguments
        step(
            "inner", "chain", parent="llm", start=4, end=5, inp=json.dumps({"args": [PROMPT], "kwargs": {}})
        ),
    ]
    docs = [
        doc("ret", 0, "Refunds within 30 days.", doc_id="refund"),
        doc("ret", 1, "Shipping takes a week.", doc_id="ship"),
    ]
    found = answer_prompt(steps[2], steps)
    assert found is not None and (found[0].span_id, found[1]) == ("inner", PROMPT)
    a = assemble(steps, docs)
    assert a.answer_span_id == "llm"
    assert [(d.doc_id, d.span_id, d.source) for d in a.context] == [("refund", "llm", "derived")]


def test_no_recorded_prompt_anywhere_is_no_context() -> None:
    steps = [
        step("root", "chain", inp="How long?", out="Refunds within 30 days."),
        step("ret", "retrieval", parent="root", start=1, end=2),
        step("llm", "llm", parent="root", start=3, end=6, out="Refunds within 30 days."),
        step("inner", "chain", parent="llm", start=4, end=5, inp="ok"),  # one word: no prompt
    ]
    assert answer_prompt(steps[2], steps) is None
    assert assemble(steps, [doc("ret", 0, "Refunds within 30 days.", doc_id="refund")]).context == []


def test_the_answering_call_is_the_one_whose_output_is_the_answer() -> None:
    steps = [
        step("root", "agent", inp="How long?", out="Refunds within 30 days."),
        step("gen", "llm", parent="root", start=1, end=2, inp=PROMPT, out="Refunds within 30 days."),
        # a later call (a guardrail, a title writer) that is not the answer
        step("title", "llm", parent="root", start=3, end=4, inp="Title this chat.", out="Refund question"),
    ]
    a = assemble(steps, [doc("gen", 0, "Refunds within 30 days.", stage="candidate", doc_id="refund")])
    assert (a.answer_text, a.answer_span_id) == ("Refunds within 30 days.", "gen")


def test_a_root_input_wrapped_as_messages_gives_the_question() -> None:
    wrapped = json.dumps(
        {"payload": {"history": [{"role": "user", "content": [{"type": "text", "text": "How long?"}]}]}}
    )
    steps = [
        step("root", "chain", inp=wrapped, out="Refunds within 30 days."),
        step("llm", "llm", parent="root", start=1, end=2, inp=PROMPT, out="Refunds within 30 days."),
    ]
    assert assemble(steps, []).query_text == "How long?"
