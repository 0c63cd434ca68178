"""The Traceloop SDK decorators' spans (``@workflow``, ``@task``, ``@agent``, ``@tool``) as attribute
dicts, shaped as ``traceloop.sdk.decorators.base`` writes them: the call's arguments as
``{"args": [...], "kwargs": {...}}``, its return value as JSON. The end-to-end test with the real SDK
is ``tests/frameworks/test_traceloop_sdk.py``."""

from __future__ import annotations

import json
from typing import Any

from collector.normalize import normalize_span
from collector.normalize.traceloop import call_args

PASSAGES = [
    {"id": "refund-window#0", "text": "Refunds within 30 days.", "score": 4.0, "metadata": {"doc_id": "refund-window"}},
    {"id": "shipping#2", "text": "Shipping is free.", "score": 1.0, "metadata": {"doc_id": "shipping"}},
]  # fmt: skip


def decorated(kind: str, name: str, args: list[Any], kwargs: dict[str, Any], result: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "traceloop.workflow.name": "answer",
        "traceloop.span.kind": kind,
        "traceloop.entity.name": name,
        "traceloop.entity.input": json.dumps({"args": args, "kwargs": kwargs}),
        "traceloop.entity.output": json.dumps(result),
        "traceloop.association.properties.session_id": "s-1",
        "traceloop.association.properties.user_id": "u-1",
    }
    if kind == "tool":
        attrs["gen_ai.tool.name"] = name
    return attrs


def test_a_task_returning_documents_is_a_retrieval_with_its_query_unwrapped() -> None:
    step = normalize_span(decorated("task", "retrieve", ["refunds?"], {"top_k": 2}, PASSAGES))
    assert (step.step_type, step.convention, step.query_text) == ("retrieval", "traceloop", "refunds?")
    assert [(d.stage, d.position, d.chunk_id, d.doc_id, d.score) for d in step.docs] == [
        ("candidate", 0, "refund-window#0", "refund-window", 4.0),
        ("candidate", 1, "shipping#2", "shipping", 1.0),
    ]
    assert step.docs[0].content == "Refunds within 30 days."
    assert (step.session_id, step.user_id) == ("s-1", "u-1")


def test_a_query_keyword_wins_and_a_methods_self_is_left_out() -> None:
    by_name = normalize_span(decorated("task", "r", ["Retriever"], {"query": "refunds?"}, PASSAGES))
    assert by_name.query_text == "refunds?"
    # a decorated method: ``self`` arrives as its class name, an identifier
    method = normalize_span(
        decorated("task", "r", ["KeywordRetriever", "how do refunds work?"], {}, PASSAGES)
    )
    assert method.query_text == "how do refunds work?"
    # two texts, neither an identifier: no single query
    ambiguous = normalize_span(decorated("task", "r", ["refund policy", "shipping policy"], {}, PASSAGES))
    assert ambiguous.step_type == "retrieval" and ambiguous.query_text is not None
    assert ambiguous.query_text.startswith('{"args"')  # the input as it came, not a guess


def test_a_task_given_documents_and_returning_documents_is_a_rerank() -> None:
    step = normalize_span(decorated("task", "fit_budget", [PASSAGES], {"budget": 1}, PASSAGES[:1]))
    assert step.step_type == "rerank"
    assert [(d.stage, d.doc_id) for d in step.docs] == [
        ("rerank_input", "refund-window"),
        ("rerank_input", "shipping"),
        ("reranked", "refund-window"),
    ]
    # given as a keyword argument, too
    by_kw = normalize_span(decorated("task", "rerank", ["q"], {"passages": PASSAGES}, PASSAGES[::-1]))
    assert [(d.stage, d.doc_id) for d in by_kw.docs if d.stage == "reranked"] == [
        ("reranked", "shipping"),
        ("reranked", "refund-window"),
    ]


def test_tasks_returning_other_lists_stay_chains() -> None:
    for result in (["Paris", "Rome"], [{"city": "Paris"}], [], {"answer": "yes"}, "plain text", 3):
        step = normalize_span(decorated("task", "t", ["q"], {}, result))
        assert step.step_type == "chain" and step.docs == [], result


def test_a_tool_returning_documents_keeps_them_as_its_candidates() -> None:
    step = normalize_span(decorated("tool", "search_kb", [], {"query": "refunds?"}, PASSAGES))
    assert (step.step_type, step.tool_name) == ("tool", "search_kb")
    # the result stays the list (not the text of its last document)
    assert json.loads(step.tool_result or "") == PASSAGES
    assert [(d.stage, d.doc_id) for d in step.docs] == [
        ("candidate", "refund-window"),
        ("candidate", "shipping"),
    ]
    plain = normalize_span(decorated("tool", "weather", ["Berlin"], {}, "sunny"))
    assert (plain.tool_result, plain.docs) == ("sunny", [])


def test_workflow_and_agent_roots_read_the_question_from_the_wrapped_input() -> None:
    wf = normalize_span(decorated("workflow", "answer", ["How long is the warranty?"], {}, "Two years."))
    assert (wf.step_type, wf.query_text) == ("chain", "How long is the warranty?")
    ag = normalize_span(decorated("agent", "support", [], {"question": "When do you close?"}, "At 19."))
    assert (ag.step_type, ag.query_text) == ("agent", "When do you close?")


def test_call_args_accepts_only_the_decorators_shape() -> None:
    assert call_args('{"args": ["q"], "kwargs": {}}') == (["q"], {})
    assert call_args({"args": [], "kwargs": {"a": 1}}) == ([], {"a": 1})
    for value in ('{"args": "q", "kwargs": {}}', '{"inputs": "q", "kwargs": {}}', "[1, 2]", "not json", None):
        assert call_args(value) is None, value
    assert call_args('{"args": [], "kwargs": {}, "tags": []}') is None


def test_llamaindex_inner_retrieve_reports_no_second_copy_of_the_nodes() -> None:
    node = json.dumps(
        {
            "node": {"id_": "n-1", "text": "Refunds within 30 days.", "metadata": {"doc_id": "d"}},
            "score": 0.9,
            "class_name": "NodeWithScore",
        }
    )
    nodes = json.dumps([node])
    base = {"traceloop.span.kind": "task", "traceloop.entity.name": "VectorIndexRetriever.task"}
    outer = normalize_span(
        {
            **base,
            "traceloop.entity.input": json.dumps({"str_or_query_bundle": "refunds?"}),
            "traceloop.entity.output": nodes,
        }
    )
    assert outer.step_type == "retrieval" and [(d.stage, d.doc_id) for d in outer.docs] == [
        ("candidate", "d")
    ]
    inner = normalize_span(
        {
            **base,
            "traceloop.entity.input": json.dumps({"query_bundle": {"query_str": "refunds?"}}),
            "traceloop.entity.output": nodes,
        }
    )
    assert (inner.step_type, inner.query_text, inner.docs) == ("retrieval", "refunds?", [])


def test_haystack_openllmetry_pipeline_and_generator_spans() -> None:
    """``opentelemetry-instrumentation-haystack`` 0.62.4: the pipeline's inputs by component, its
    result with the generator's ChatMessage as a dataclass, and a generator span whose "completion"
    is the key of the generator's result."""
    q = "How long is the warranty?"
    result = {"llm": {"replies": [{"_role": "assistant", "_content": [{"text": "Two years."}], "_meta": {}}]}}
    root = normalize_span(
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.name": "haystack_pipeline",
            "traceloop.entity.input": json.dumps(
                {"args": [], "kwargs": {"retriever": {"query": q}, "prompt_builder": {"question": q}}}
            ),
            "traceloop.entity.output": json.dumps(result),
        }
    )
    assert (root.step_type, root.query_text, root.output_text) == ("chain", q, "Two years.")
    # two components asked different things: no single query
    two = normalize_span(
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.input": json.dumps(
                {"args": [], "kwargs": {"a": {"query": "x"}, "b": {"query": "y"}}}
            ),
        }
    )
    assert two.query_text is None
    generator = {
        "gen_ai.system": "OpenAI",
        "llm.request.type": "chat",
        "gen_ai.completion.0.role": "assistant",
    }
    wrapper = normalize_span({**generator, "gen_ai.completion.0.content": "replies"})
    assert (wrapper.step_type, wrapper.output_text) == ("llm", None)
    # a model that really answered "replies" names the model that responded
    real = normalize_span(
        {**generator, "gen_ai.completion.0.content": "replies", "gen_ai.response.model": "m"}
    )
    assert real.output_text == "replies"
