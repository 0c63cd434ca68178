"""The structural layer (``collector.normalize.structural`` and ``shape``): one set of unwrapping rules,
documents and messages recognised by shape, and what it fills beneath the convention readers.

The unwrapping rules are checked by Hypothesis: any text, wrapped in any nesting of the wrappers real
instrumentors use (JSON strings, content blocks, decorated calls, pipeline components, messages,
message lists under any key, one-entry objects), gives the same text back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.normalize import doclists, normalize_span, structural
from collector.normalize.shape import side

Wrap = Callable[[Any], Any]

# every wrapper takes any value (a text, or a value already wrapped) and hides it one level deeper
WRAPPERS: dict[str, Wrap] = {
    "json_string": lambda x: json.dumps(x),
    "content_blocks": lambda x: [{"type": "text", "text": x}],
    "untyped_block": lambda x: [{"text": x}],
    "call": lambda x: {"args": [x], "kwargs": {}},
    "call_kwarg": lambda x: {"args": [], "kwargs": {"question": x}},
    "method_call": lambda x: {"args": ["RetrieverQueryEngine", x], "kwargs": {}},
    "pipeline": lambda x: {"data": {"retriever": {"query": x}, "prompt_builder": {"question": x}}},
    "message": lambda x: {"role": "user", "content": x},
    "messages": lambda x: {"messages": [{"role": "system", "content": ""}, {"role": "user", "content": x}]},
    "gen_ai_parts": lambda x: [{"role": "user", "parts": [{"type": "text", "content": x}]}],
    "one_entry": lambda x: {"payload": x},
    "inputs": lambda x: {"inputs": x, "tags": [], "metadata": {}},
}

_texts = st.text(min_size=1, max_size=40).filter(
    lambda t: t.strip() != "" and t.lstrip()[:1] not in '{["' and not t.isidentifier()
)


def _wrapped(text: str, names: list[str]) -> Any:
    value: Any = text
    for name in names:
        value = WRAPPERS[name](value)
    return value


@settings(max_examples=400, deadline=None)
@given(text=_texts, names=st.lists(st.sampled_from(sorted(WRAPPERS)), max_size=6))
def test_nested_wrappers_give_the_same_text(text: str, names: list[str]) -> None:
    assert structural.text_of(_wrapped(text, names)) == text
    # the question of a value is its text too, whatever wraps it
    assert structural.query_of(_wrapped(text, names)) == text


@settings(max_examples=200, deadline=None)
@given(text=_texts, names=st.lists(st.sampled_from(sorted(WRAPPERS)), max_size=4))
def test_a_wrapped_value_as_a_json_string_reads_the_same(text: str, names: list[str]) -> None:
    value = _wrapped(text, names)
    assert structural.text_of(json.dumps(value)) == structural.text_of(value) == text


@settings(max_examples=300, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=30,
    )
)
def test_any_value_reads_without_raising(value: Any) -> None:
    for v in (value, json.dumps(value)):
        text = structural.text_of(v)
        assert text is None or (isinstance(text, str) and text.strip())
        structural.message_list(v)
        doclists.documents_in(v, "candidate", ())
        doclists.is_document_list(v, ())
        normalize_span({"payload": v, "acme.request": v, "acme.response": v})


def test_deep_nesting_stops_without_raising() -> None:
    value: Any = "the text"
    for _ in range(200):
        value = {"args": [value], "kwargs": {}}
    assert structural.text_of(value) is None  # deeper than MAX_DEPTH: no guess
    value = "the text"
    for _ in range(12):  # each layer doubles the escapes: 12 layers are ~40 kB
        value = json.dumps(value)
    assert structural.text_of(value) == "the text"


def test_a_value_of_several_texts_holds_no_single_text() -> None:
    assert structural.text_of({"title": "A title", "summary": "A summary"}) is None
    assert structural.text_of(["one", {"id": 1, "name": "two"}]) is None
    assert structural.text_of({"type": "tool_call", "name": "lookup", "arguments": {"sku": "HW-1"}}) is None
    assert structural.text_of(42) is None


def test_the_question_is_the_last_user_message() -> None:
    history = {
        "input": {
            "history": [
                {"role": "user", "content": "First question?"},
                {"role": "assistant", "content": "First answer."},
                {"role": "user", "content": [{"type": "text", "text": "Second question?"}]},
            ]
        }
    }
    assert structural.query_of(json.dumps(history)) == "Second question?"
    messages = structural.message_list(history)
    assert messages is not None and [m.role for m in messages] == ["user", "assistant", "user"]


DOCS = [
    {"id": "d1", "text": "Refunds within 30 days.", "score": 0.9, "metadata": {"doc_id": "refund"}},
    {"id": "d2", "text": "Shipping takes a week.", "score": 0.4},
]


@pytest.mark.parametrize(
    "value",
    [
        DOCS,
        json.dumps(DOCS),
        json.dumps(json.dumps({"result": {"hits": DOCS}})),  # a wrapped tool result
        {"args": [], "kwargs": {}, "output": [json.dumps(d) for d in DOCS]},
        [
            {
                "node": {"id_": d["id"], "text": d["text"], "metadata": d.get("metadata", {})},
                "score": d["score"],
            }
            for d in DOCS
        ],
        [{"document": {"id": d["id"], "page_content": d["text"]}, "score": d["score"]} for d in DOCS],
    ],
    ids=["list", "json", "wrapped-tool-result", "json-items", "llamaindex-nodes", "document-score"],
)
def test_documents_are_found_by_shape(value: Any) -> None:
    docs = doclists.documents_in(value, "candidate", ("doc_id",))
    assert docs is not None
    assert [(d.chunk_id, d.content, d.score) for d in docs] == [
        ("d1", "Refunds within 30 days.", 0.9),
        ("d2", "Shipping takes a week.", 0.4),
    ]


def test_content_blocks_and_messages_are_no_documents() -> None:
    assert doclists.documents_in([{"type": "text", "text": "a"}, {"text": "b"}], "candidate", ()) is None
    assert doclists.documents_in([{"role": "user", "content": "hi", "id": "m1"}], "candidate", ()) is None
    assert doclists.documents_in(["Paris", "Rome"], "candidate", ()) is None
    # a response that carries its source documents beside the answer is no document list itself
    response = {"response": "An answer.", "source_nodes": DOCS}
    assert doclists.is_document_list(response, ()) is None
    assert doclists.is_document_list({"documents": DOCS, "count": 2}, ()) is not None


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("ai.prompt.messages", "in"),
        ("ai.response.text", "out"),
        ("gen_ai.output.messages", "out"),
        ("llm.input_messages", "in"),
        ("acme.request.body", "in"),
        ("acme.completion", "out"),
        ("service.name", None),
    ],
)
def test_the_side_of_a_key_is_read_from_its_words(key: str, expected: str | None) -> None:
    assert side(key) == expected


# --------------------------------------------------------------------------------------------------
# spans: what the layer fills beneath the readers


def test_a_span_of_no_convention_is_read_by_shape() -> None:
    prompt = {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "How long?"}]
    }
    step = normalize_span(
        {
            "acme.request": json.dumps(prompt),
            "acme.response.text": "Thirty seconds, then retry.",
            "acme.model": "m",
        }
    )
    assert (step.step_type, step.convention) == ("llm", "structural")
    assert (step.input_text, step.query_text) == ("Be brief.\nHow long?", "How long?")
    assert step.output_text == "Thirty seconds, then retry."
    assert step.provenance == {
        "input_text": "shape:messages@acme.request",
        "query_text": "shape:last_user_message@acme.request",
        "output_text": "shape:text@acme.response.text",
        "step_type": "shape:messages_in_text_out",
    }


def test_a_span_whose_output_lists_documents_is_a_retrieval() -> None:
    step = normalize_span({"search.query": "refund window", "search.output": json.dumps({"hits": DOCS})})
    assert (step.step_type, step.convention) == ("retrieval", "structural")
    assert [d.doc_id for d in step.docs] == ["refund", "d2"]  # the source id of the metadata first
    assert step.provenance is not None and step.provenance["docs"] == "shape:documents@search.output"


def test_spans_without_content_stay_unknown() -> None:
    for attrs in (
        {"http.method": "GET", "http.request.method": "GET", "http.route": "/chat"},
        # an HTTP server span with captured request headers and a query string: no question in it
        {
            "http.request.header.user_agent": ["Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"],
            "url.query": "q=how long is the warranty",
            "http.response.status_code": 200,
        },
        {"db.system": "postgresql", "db.query.text": "SELECT content FROM docs WHERE id = $1"},
        {"db.system": "postgresql", "db.response.status_code": "OK"},
        {},
    ):
        step = normalize_span(attrs)
        assert (step.step_type, step.convention, step.provenance) == ("other", "unknown", None), attrs


def test_a_reader_s_fields_are_kept_and_its_gaps_filled() -> None:
    # a Traceloop task returning documents nested in a wrapped result: the reader found none
    wrapped = json.dumps({"outputs": json.dumps({"data": {"retriever": {"documents": DOCS}}})})
    step = normalize_span(
        {
            "traceloop.span.kind": "task",
            "traceloop.entity.name": "search",
            "traceloop.entity.input": json.dumps({"args": ["refund window"], "kwargs": {}}),
            "traceloop.entity.output": wrapped,
        }
    )
    assert (step.step_type, step.convention) == ("retrieval", "traceloop")
    assert [d.doc_id for d in step.docs] == ["refund", "d2"]
    assert step.query_text == "refund window"  # the reader's, kept
    # the reader's fields by its name; the documents by whichever found them (the reader, or the
    # structural layer by rule and key)
    assert step.provenance is not None
    assert {k: step.provenance[k] for k in ("query_text", "input_text", "output_text")} == dict.fromkeys(
        ("query_text", "input_text", "output_text"), "traceloop"
    )
    assert (step.provenance["step_type"], step.provenance["docs"]) in (
        ("traceloop", "traceloop"),
        ("shape:document_list@output_text", "shape:documents@output_text"),
    )
    # a model call whose prompt sits under a key no reader knows
    llm = normalize_span(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "vendor.llm.request": json.dumps(
                {"messages": [{"role": "user", "content": "What is the window?"}]}
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "30 days."}]}]
            ),
        }
    )
    assert (llm.step_type, llm.convention, llm.output_text) == ("llm", "genai", "30 days.")
    assert (llm.input_text, llm.query_text) == ("What is the window?", "What is the window?")
    assert llm.provenance == {
        "step_type": "genai",
        "model": "genai",
        "output_text": "genai",
        "input_text": "shape:messages@vendor.llm.request",
        "query_text": "shape:last_user_message@vendor.llm.request",
    }


def test_a_model_call_that_only_called_a_tool_has_no_output() -> None:
    step = normalize_span(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Look up HW-1"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "tool_call", "name": "lookup", "arguments": {"sku": "HW-1"}}],
                    }
                ]
            ),
        }
    )
    assert step.output_text is None
    assert step.provenance == {"step_type": "genai", "query_text": "genai", "input_text": "genai"}
