"""Rules of the structural layer found by running frameworks no reader names (smolagents, pydantic-ai,
LangGraph with either LangChain instrumentation, DSPy; ``tests/frameworks``), each tried here on the
shapes that taught it and on shapes nobody wrote down.

- LangChain's serializations of a message (``{"lc", "type": "constructor", "kwargs"}``, ``{"type":
  "human", "data": {...}}``, a ``("user", text)`` pair) are messages: read for their text, never
  taken for documents (each has an id and a content, as a document has).
- A ``user`` message whose parts are all tool results is the tool speaking, not the user.
- An output's text is never under a key naming what was asked.
- A step given documents and returning documents cut or reordered them: a rerank.
- A tool call's arguments and result under keys no reader knows are read by the side their words name.
- A payload recorded as a Python object's repr (OpenLIT writes ``str()`` of LangChain's messages) is
  read for the structure it shows, parsed and never run.
"""

from __future__ import annotations

import ast
import json
import keyword
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.normalize import doclists, normalize_span, pyrepr, structural
from collector.normalize.messages import json_messages_text
from collector.settling.assemble import plain_text
from tests.collector.test_normalize_structural import WRAPPERS, Wrap, _texts

DOCS = [
    {"id": "refund", "content": "Refunds are accepted within 30 days.", "score": 0.9},
    {"id": "ship", "content": "Shipping takes a week.", "score": 0.4},
    {"id": "hours", "content": "The shop opens at nine.", "score": 0.1},
]


def _lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


def _lc_doc(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "document", "Document"],
        "kwargs": {"page_content": d["content"], "metadata": {"doc_id": d["id"]}, "type": "Document"},
    }


# the wrappers of LangChain's messages, beside those every framework uses
MESSAGE_WRAPPERS: dict[str, Wrap] = {
    **WRAPPERS,
    "lc_message": lambda x: {"messages": [_lc("HumanMessage", content=x, type="human", id="m-1")]},
    "typed_data": lambda x: [{"type": "human", "data": {"content": x, "type": "human", "id": "m-2"}}],
    "pair": lambda x: {"messages": [["user", x]]},
}


@settings(max_examples=300, deadline=None)
@given(text=_texts, names=st.lists(st.sampled_from(sorted(MESSAGE_WRAPPERS)), max_size=5))
def test_langchain_message_wrappers_give_the_same_text(text: str, names: list[str]) -> None:
    value: Any = text
    for name in names:
        value = MESSAGE_WRAPPERS[name](value)
    assert structural.text_of(value) == text
    assert structural.query_of(value) == text
    assert structural.text_of(json.dumps(value)) == text


def test_serialized_messages_are_messages_not_documents() -> None:
    state = {
        "messages": [
            _lc("SystemMessage", content="Answer from the search results only.", type="system"),
            _lc("HumanMessage", content="How long is the warranty?", type="human", id="m-1"),
            _lc("AIMessage", content="Two years.", type="ai", id="m-2", tool_calls=[]),
        ]
    }
    for value in (state, json.dumps(state), {"outputs": state, "kwargs": {"tags": []}}):
        assert doclists.documents_in(value, "candidate", ()) is None
        assert doclists.is_document_list(value, ()) is None
        assert structural.query_of(value) == "How long is the warranty?"
        assert structural.answer_of(value) == "Two years."
    # a tool message carrying its artifact: the documents are the artifact, the message is none
    tool = _lc(
        "ToolMessage",
        content="- Refunds ...",
        type="tool",
        tool_call_id="c1",
        artifact=[_lc_doc(d) for d in DOCS],
    )
    found = doclists.documents_in({"output": tool}, "candidate", ("doc_id",))
    assert found is not None and [d.doc_id for d in found] == ["refund", "ship", "hours"]


def test_a_user_message_of_tool_results_is_no_question() -> None:
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "Answer from the results."}]},
        {"role": "user", "parts": [{"type": "text", "content": "How long is the warranty?"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "search", "arguments": {}}],
        },
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "response": "- Two years."}]},
    ]
    text, last_user = json_messages_text(json.dumps(messages))
    assert last_user == "How long is the warranty?"
    assert text is not None and "- Two years." in text  # what the tool returned is still what the model read
    assert structural.query_of(messages) == "How long is the warranty?"
    step = normalize_span(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(messages),
        }
    )
    assert step.query_text == "How long is the warranty?"


def test_an_output_s_text_is_not_what_was_asked() -> None:
    state = {
        "question": "How long is the warranty?",
        "documents": [_lc_doc(d) for d in DOCS],
        "answer": "Two years.",
    }
    assert structural.answer_of(state) == "Two years."
    assert plain_text(json.dumps(state), answer=True) == "Two years."
    assert plain_text(json.dumps({"outputs": state, "kwargs": {}}), answer=True) == "Two years."
    # the same value read as an input asks the question
    assert plain_text(json.dumps(state)) == "How long is the warranty?"
    # an output holding only the question answered nothing
    assert structural.answer_of({"question": "How long is the warranty?", "documents": []}) is None


def test_a_step_given_documents_and_returning_documents_is_a_rerank() -> None:
    # a framework's module as an OpenInference CHAIN span: no reader knows what it does
    step = normalize_span(
        {
            "openinference.span.kind": "CHAIN",
            "input.value": json.dumps({"passages": DOCS}),
            "input.mime_type": "application/json",
            "output.value": json.dumps({"passages": DOCS[:1]}),
            "output.mime_type": "application/json",
        }
    )
    assert step.step_type == "rerank"
    assert [(d.stage, d.doc_id) for d in step.docs] == [
        ("rerank_input", "refund"),
        ("rerank_input", "ship"),
        ("rerank_input", "hours"),
        ("reranked", "refund"),
    ]
    assert step.provenance is not None and step.provenance["step_type"].startswith("shape:")
    assert step.provenance["docs.rerank_input"] == "shape:documents@input_text"
    assert step.provenance["docs.reranked"] == "shape:documents@output_text"
    # the same, as an OpenLLMetry LangChain task: its envelope taken off
    node = normalize_span(
        {
            "traceloop.span.kind": "task",
            "traceloop.entity.input": json.dumps(
                {
                    "inputs": {"question": "q?", "documents": [_lc_doc(d) for d in DOCS]},
                    "tags": [],
                    "metadata": {},
                }
            ),
            "traceloop.entity.output": json.dumps(
                {"outputs": {"documents": [_lc_doc(DOCS[0])]}, "kwargs": {}}
            ),
        }
    )
    assert node.step_type == "rerank"
    assert [d.doc_id for d in node.docs if d.stage == "reranked"] == ["refund"]
    # a node that was given only the question and returned documents retrieved them
    retrieve = normalize_span(
        {
            "traceloop.span.kind": "task",
            "traceloop.entity.input": json.dumps({"inputs": {"question": "How long?"}, "tags": []}),
            "traceloop.entity.output": json.dumps(
                {"outputs": {"documents": [_lc_doc(d) for d in DOCS]}, "kwargs": {}}
            ),
        }
    )
    assert (retrieve.step_type, retrieve.query_text) == ("retrieval", "How long?")
    assert [d.doc_id for d in retrieve.docs] == ["refund", "ship", "hours"]


def test_a_state_holding_documents_beside_an_answer_retrieved_nothing() -> None:
    state = {"question": "How long?", "documents": [_lc_doc(d) for d in DOCS], "answer": "Two years."}
    for attrs in (
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.input": json.dumps({"inputs": {"question": "How long?"}, "tags": []}),
            "traceloop.entity.output": json.dumps({"outputs": state, "kwargs": {}}),
        },
        {"openinference.span.kind": "CHAIN", "input.value": "How long?", "output.value": json.dumps(state)},
    ):
        step = normalize_span(attrs)
        assert (step.step_type, step.docs) == ("chain", []), attrs


def test_a_tool_call_under_keys_no_reader_knows() -> None:
    result = {"return_value": "- Refunds are accepted within 30 days.", "metadata": {"retrieved": DOCS}}
    step = normalize_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_kb",
            "tool_arguments": json.dumps({"query": "refunds?"}),
            "tool_response": json.dumps(result),
            "logfire.msg": "running tool: search_kb",
        }
    )
    assert (step.step_type, step.tool_name) == ("tool", "search_kb")
    assert step.tool_arguments == json.dumps({"query": "refunds?"})
    assert step.tool_result == json.dumps(result)
    assert [d.doc_id for d in step.docs] == ["refund", "ship", "hours"]
    assert step.provenance is not None
    assert step.provenance["tool_result"] == "shape:tool_output@tool_response"
    assert step.provenance["tool_arguments"] == "shape:tool_input@tool_arguments"
    # the GenAI keys, where present, are the reader's and stay so
    known = normalize_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_kb",
            "gen_ai.tool.call.result": "[]",
            "tool_response": json.dumps(result),
        }
    )
    assert known.tool_result == "[]" and known.docs == []


_literals = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: not keyword.iskeyword(k))
_fields = st.dictionaries(_names, _literals, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(fields=_fields, name=st.sampled_from(["Document", "Passage", "pkg.Node"]))
def test_a_repr_reads_as_the_object_it_shows(fields: dict[str, Any], name: str) -> None:
    # a dataclass's repr, and pydantic's bare ``k=v k2=v2``, read back as the fields they show
    shown = f"{name}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"
    assert pyrepr.value(shown) == json.loads(json.dumps(fields))  # (tuples as lists, as JSON has them)
    bare = " ".join(f"{k}={v!r}" for k, v in fields.items())
    assert pyrepr.value(bare) == json.loads(json.dumps(fields))
    # the same nested in a list under a field
    assert pyrepr.value(f"items=[{shown}, {shown}]") == {"items": [json.loads(json.dumps(fields))] * 2}


def test_a_repr_is_parsed_never_run() -> None:
    for text in (
        "__import__('os').system('true')",
        "Document(page_content=open('/etc/passwd').read())",
        "x=1 + 2",
        "Passage('positional', text='t')",
        "How long is the warranty?",
        "",
        "a" * (pyrepr.MAX_CHARS + 1) + "=1",
    ):
        assert pyrepr.value(text) is None, text


def test_a_repr_past_its_bounds_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a crafted value of a few hundred bytes of gzip could make the parser chew on: too many
    brackets and items is refused before parsing, too many tokens stops the tokenizer."""
    parsed: list[str] = []
    real = ast.parse

    def parse(source: str, mode: str) -> ast.AST:
        parsed.append(source)
        return real(source, mode=mode)

    monkeypatch.setattr(ast, "parse", parse)
    nested = "X(a=" + "(" * pyrepr.MAX_ITEMS + "1" + ")" * pyrepr.MAX_ITEMS + ")"
    items = "X(a=[" + "1," * pyrepr.MAX_ITEMS + "1])"
    for text in (nested, items):
        assert pyrepr.value(text) is None
    assert parsed == []
    fine = "X(a=[" + "1," * 100 + "1])"
    assert pyrepr.value(fine) == {"a": [1] * 101} and parsed == [fine]
    many_tokens = "a=1 b=" + "x " * (pyrepr.MAX_TOKENS + 10)
    assert pyrepr._bare_fields(many_tokens) is None


def test_a_tool_result_recorded_as_a_repr_lists_its_documents() -> None:
    result = (
        "content='- Refunds are accepted within 30 days.' name='search_kb' tool_call_id='c1' "
        "artifact=[Document(metadata={'doc_id': 'refund', 'score': 4.0}, page_content='Refunds are accepted within 30 days.'), "
        "Document(metadata={'doc_id': 'ship', 'score': 2.0}, page_content='Shipping takes a week.')]"
    )
    step = normalize_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_kb",
            "gen_ai.tool.call.result": result,
        }
    )
    assert step.tool_result == result  # kept as recorded
    assert [(d.doc_id, d.content) for d in step.docs] == [
        ("refund", "Refunds are accepted within 30 days."),
        ("ship", "Shipping takes a week."),
    ]
    assert step.provenance is not None and step.provenance["docs"] == "shape:documents@tool_result:repr"
