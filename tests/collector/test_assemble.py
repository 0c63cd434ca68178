"""assemble(): the query, the answer and the context stage of a settled trace (docs/architecture.md, Evidence and matching)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from collector.settling.assemble import DocView, StepView, answering_llm, assemble

T0 = datetime(2026, 1, 1, 12, 0, 0)


def step(span_id, step_type, *, parent=None, start=0, end=1, query=None, inp=None, out=None, scope=None):
    return StepView(
        span_id=span_id,
        parent_span_id=parent,
        step_type=step_type,
        start_time=T0 + timedelta(seconds=start),
        end_time=T0 + timedelta(seconds=end),
        query_text=query,
        input_text=inp,
        output_text=out,
        user_scope=scope,
        is_root=parent is None,
    )


def doc(
    span_id, position, content, *, stage="candidate", doc_id=None, chunk_id=None, score=None, source="span"
):
    return DocView(
        span_id=span_id,
        stage=stage,
        position=position,
        doc_id=doc_id,
        chunk_id=chunk_id,
        content=content,
        score=score,
        metadata=None,
        source=source,
    )


CANDIDATES = [
    doc("ret", 0, "Refunds are accepted within 30 days of delivery.", doc_id="refund-policy", score=0.9),
    doc("ret", 1, "Shipping is free above 50 euros.", doc_id="shipping", score=0.7),
    doc("ret", 2, "Gift cards never expire.", doc_id="gift-cards", score=0.5),
]


def rag_steps(prompt, answer="Within 30 days."):
    return [
        step("root", "chain", end=10, inp="How long do refunds take?", out=answer),
        step("ret", "retrieval", parent="root", start=1, end=2, query="How long do refunds take?"),
        step(
            "llm",
            "llm",
            parent="root",
            start=3,
            end=9,
            inp=prompt,
            out=answer,
            query="How long do refunds take?",
        ),
    ]


def test_derived_context_is_what_the_prompt_contains_in_prompt_order():
    # the prompt holds candidates 2 and 0, in that order, and not candidate 1
    prompt = (
        "Context:\n[1] Gift cards never expire.\n[2] Refunds are accepted within 30 days of delivery.\n"
        "Question: How long do refunds take?"
    )
    a = assemble(rag_steps(prompt), CANDIDATES)
    assert [d.doc_id for d in a.context] == ["gift-cards", "refund-policy"]
    assert [d.position for d in a.context] == [0, 1]
    assert {d.stage for d in a.context} == {"context"} and {d.source for d in a.context} == {"derived"}
    assert {d.span_id for d in a.context} == {"llm"}  # the step that received it
    assert a.context[1].score == 0.9
    assert (a.query_text, a.answer_text, a.answer_span_id) == (
        "How long do refunds take?",
        "Within 30 days.",
        "llm",
    )


def test_derived_context_tolerates_whitespace_case_and_punctuation():
    prompt = "CONTEXT: refunds   are accepted\nwithin 30 days of delivery -- shipping is free above 50 euros!"
    a = assemble(rag_steps(prompt), CANDIDATES)
    assert [d.doc_id for d in a.context] == ["refund-policy", "shipping"]


def test_derived_context_truncated_candidate_is_not_in_context():
    prompt = "Context: Refunds are accepted within 30 da"  # cut by a token budget
    assert assemble(rag_steps(prompt), CANDIDATES).context == []


def test_cjk_content_without_spaces_matches_despite_whitespace_differences():
    docs = [
        doc("ret", 0, "退款申请须在收货后三十天内提交。", doc_id="退款政策"),
        doc("ret", 1, "运费满五十元免运费。", doc_id="运费"),
    ]
    # a template or tokenizer inserted spaces and line breaks; full-width punctuation became half-width
    prompt = "参考资料：\n退款 申请 须在 收货后\n三十天内 提交. \n问题：退款期限是多久？"
    a = assemble(rag_steps(prompt, answer="三十天内。"), docs)
    assert [d.doc_id for d in a.context] == ["退款政策"]


def test_explicit_context_wins_over_derivation():
    prompt = "Context: Shipping is free above 50 euros. Gift cards never expire."
    explicit = [
        doc(
            "llm",
            0,
            "Refunds are accepted within 30 days of delivery.",
            stage="context",
            doc_id="refund-policy",
        )
    ]
    a = assemble(rag_steps(prompt), CANDIDATES + explicit)
    assert a.context == []  # nothing derived: the explicit rows (kept as sent) are the context
    # a previously derived row is not "explicit" and does not stop derivation
    stale = [doc("llm", 0, "old", stage="context", source="derived")]
    assert [d.doc_id for d in assemble(rag_steps(prompt), CANDIDATES + stale).context] == [
        "shipping",
        "gift-cards",
    ]


def test_reranked_row_represents_a_document_found_in_several_stages():
    docs = [
        doc("ret", 0, "Refunds are accepted within 30 days of delivery.", doc_id="refund-policy", score=0.2),
        doc(
            "rr",
            0,
            "Refunds are accepted within 30 days of delivery.",
            stage="rerank_input",
            doc_id="refund-policy",
            score=0.2,
        ),
        doc(
            "rr",
            0,
            "Refunds are accepted within 30 days of delivery.",
            stage="reranked",
            doc_id="refund-policy",
            score=0.97,
        ),
    ]
    a = assemble(rag_steps("Refunds are accepted within 30 days of delivery."), docs)
    assert len(a.context) == 1 and a.context[0].score == 0.97


def test_json_wrapped_root_input_and_output_are_unwrapped():
    steps = [
        step(
            "root",
            "chain",
            end=10,
            inp=json.dumps(
                {"inputs": "What is the refund window?", "tags": [], "metadata": {}, "kwargs": {}}
            ),
            out=json.dumps({"outputs": "Thirty days.", "kwargs": {"tags": []}}),
        ),
        step("llm", "llm", parent="root", start=3, end=9, inp="p", out="Thirty days."),
    ]
    a = assemble(steps, [])
    assert (a.query_text, a.answer_text) == ("What is the refund window?", "Thirty days.")
    li = [
        step(
            "root",
            "chain",
            end=10,
            inp=json.dumps({"query_bundle": {"query_str": "LlamaIndex query?", "embedding": None}}),
            out=json.dumps({"response": "LlamaIndex answer.", "source_nodes": ["<NodeWithScore>"]}),
        )
    ]
    a = assemble(li, [])
    assert (a.query_text, a.answer_text) == ("LlamaIndex query?", "LlamaIndex answer.")


def test_the_answering_llm_is_the_last_one():
    steps = [
        step("root", "agent", end=20, inp="q"),
        step("rewrite", "llm", parent="root", start=1, end=2, inp="Rewrite: q", out="better q"),
        step("ret", "retrieval", parent="root", start=3, end=4, query="better q"),
        step("toolcall", "llm", parent="root", start=5, end=6, inp="plan", out=None),  # only a tool call
        step(
            "final",
            "llm",
            parent="root",
            start=7,
            end=15,
            inp="Shipping is free above 50 euros. q",
            out="Free.",
        ),
    ]
    a = assemble(steps, CANDIDATES)
    assert a.answer_span_id == "final"
    assert a.answer_text == "Free."  # the agent root has no output: the answering LLM's
    assert [d.doc_id for d in a.context] == ["shipping"]
    assert a.query_text == "q"


def test_nested_llm_spans_pick_the_inner_call():
    # LlamaIndex: LLM.predict (prompt template, ends last) wraps LLM.complete (the rendered prompt)
    steps = [
        step("root", "chain", end=20, inp="q", out="text text"),
        step(
            "predict",
            "llm",
            parent="root",
            start=1,
            end=12,
            inp='{"prompt": "SelectorPromptTemplate(...)"}',
            out="text text",
        ),
        step(
            "complete",
            "llm",
            parent="predict",
            start=2,
            end=11,
            inp="Gift cards never expire. q",
            out="text text",
        ),
    ]
    assert answering_llm(steps).span_id == "complete"
    a = assemble(steps, CANDIDATES)
    assert a.answer_span_id == "complete" and [d.doc_id for d in a.context] == ["gift-cards"]


def test_inner_llm_without_input_uses_the_enclosing_prompt():
    steps = [
        step("root", "chain", end=20, inp="q"),
        step("outer", "llm", parent="root", start=1, end=12, inp="Gift cards never expire.", out="a"),
        step("inner", "llm", parent="outer", start=2, end=11, inp=None, out="a"),
    ]
    a = assemble(steps, CANDIDATES)
    assert a.answer_span_id == "inner" and [d.doc_id for d in a.context] == ["gift-cards"]


def test_query_falls_back_to_retrieval_then_llm_and_scope_is_found():
    no_root = [
        step("ret", "retrieval", parent="missing", start=1, end=2, query="from retrieval"),
        step(
            "llm", "llm", parent="missing", start=3, end=4, query="from llm", inp="x", out="y", scope=["hr"]
        ),
    ]
    a = assemble(no_root, [])
    assert (a.query_text, a.answer_text, a.user_scope) == ("from retrieval", "y", ["hr"])
    llm_only = [step("llm", "llm", query="only llm", inp="only llm", out="z")]
    assert assemble(llm_only, []).query_text == "only llm"


def test_no_llm_no_context():
    a = assemble([step("root", "retrieval", query="q")], CANDIDATES)
    assert (a.answer_span_id, a.context, a.query_text) == (None, [], "q")
