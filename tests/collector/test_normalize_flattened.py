"""Attributes flattened one field per key (``structural.unflatten``), hidden-content placeholders
(``collector.normalize.redacted``), documents whose ids sit only in the step's output, and lists
``str()``-ed by Python: each read by its shape, whatever the keys are called."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from collector.normalize import doclists, flat, normalize_span, redacted

_keys = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8)
_leaves = st.one_of(st.text(max_size=20), st.integers(), st.booleans())
_objects = st.recursive(
    st.dictionaries(_keys, _leaves, min_size=1, max_size=4),
    lambda inner: st.dictionaries(
        _keys, st.one_of(_leaves, inner, st.lists(inner, min_size=1, max_size=3)), min_size=1, max_size=4
    ),
    max_leaves=12,
)


def flatten(prefix: str, value: Any) -> dict[str, Any]:
    """How an instrumentation writes a nested value as attributes: one key per leaf, list
    positions as key segments."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(f"{prefix}.{k}", v))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(f"{prefix}.{i}", v))
        return out
    return {prefix: value}


@given(items=st.lists(_objects, min_size=1, max_size=4))
def test_a_flattened_list_is_rebuilt_as_it_was(items: list[dict[str, Any]]) -> None:
    attrs = {"acme.kind": "search", **flatten("acme.results", items)}
    assert flat.unflatten(attrs) == {"acme.kind": "search", "acme.results": items}


def test_keys_a_reader_owns_and_plain_keys_stay() -> None:
    attrs = {"llm.input_messages.0.message.content": "hi", "acme.hits.0.text": "x y", "acme.v2": "z"}
    out = flat.unflatten(attrs, keep=("llm.",))
    assert out == {
        "llm.input_messages.0.message.content": "hi",
        "acme.v2": "z",
        "acme.hits": [{"text": "x y"}],
    }
    assert flat.unflatten({"a": 1}) == {"a": 1}


def test_flattened_messages_and_documents_of_an_unknown_span() -> None:
    """A vendor's flattened prompt reads as messages (a model call), its flattened hits as documents."""
    llm = normalize_span({
        "acme.llm.input_messages.0.message.role": "system",
        "acme.llm.input_messages.0.message.content": "Answer from the context.",
        "acme.llm.input_messages.1.message.role": "user",
        "acme.llm.input_messages.1.message.contents.0.message_content.type": "text",
        "acme.llm.input_messages.1.message.contents.0.message_content.text": "How long do refunds take?",
        "acme.llm.output_messages.0.message.role": "assistant",
        "acme.llm.output_messages.0.message.content": "Thirty days from delivery.",
    })  # fmt: skip
    assert (llm.step_type, llm.query_text, llm.output_text) == (
        "llm", "How long do refunds take?", "Thirty days from delivery.",
    )  # fmt: skip
    search = normalize_span(
        flatten("acme.search.results", [
            {"document": {"id": "refund", "content": "Refunds are accepted within 30 days.", "score": 0.9}},
            {"document": {"id": "ship", "content": "Shipping takes five working days.", "score": 0.4}},
        ])
    )  # fmt: skip
    assert search.step_type == "retrieval"
    assert [(d.doc_id, d.score) for d in search.docs] == [("refund", 0.9), ("ship", 0.4)]


def test_placeholders_are_no_content() -> None:
    for hidden in ("__REDACTED__", "[REDACTED]", "<hidden>", "***OMITTED***", "REMOVED", '"__REDACTED__"'):
        assert redacted.placeholder(hidden), hidden
    for text in ("Removed.", "redacted", "The answer is hidden.", "Hidden fees apply to late returns"):
        assert not redacted.placeholder(text), text
    step = normalize_span({
        "openinference.span.kind": "CHAIN", "input.value": "How long do refunds take?", "output.value": "__REDACTED__",
    })  # fmt: skip
    assert (step.input_text, step.output_text) == ("How long do refunds take?", None)
    assert step.provenance is not None and step.provenance["output_text"] == redacted.NOTE


def test_ids_of_the_same_texts_in_the_step_s_output() -> None:
    texts = ["Refunds are accepted within 30 days of delivery.", "Hardware carries a two year warranty."]
    attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": "refunds?"}
    for i, t in enumerate(texts):
        attrs[f"retrieval.documents.{i}.document.content"] = t
    attrs["output.value"] = json.dumps(
        {"documents": [{"pageContent": t, "id": f"d{i}"} for i, t in enumerate(texts)]}
    )
    step = normalize_span(attrs)
    assert [(d.doc_id, d.content) for d in step.docs] == [("d0", texts[0]), ("d1", texts[1])]
    assert step.provenance is not None and step.provenance["doc_ids"] == "shape:ids_by_text@output_text"


def test_a_python_list_of_json_strings_wrapping_each_document() -> None:
    hits = [
        {"record": {"doc_id": "refund", "content": "Refunds are accepted within 30 days.", "vector": "[0.1]"}, "score": 0.41},
        {"record": {"doc_id": "ship", "content": "Shipping takes five working days.", "vector": "[0.2]"}, "score": 0.77},
    ]  # fmt: skip
    step = normalize_span({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "retrieve",
        "gen_ai.tool.call.result": str([json.dumps(h) for h in hits]),
    })  # fmt: skip
    assert [(d.doc_id, d.score) for d in step.docs] == [("refund", 0.41), ("ship", 0.77)]
    # a document's metadata is no wrapper of it
    meta = [
        {
            "uid": "a",
            "snippet": "Refunds are accepted within thirty days of delivery.",
            "metadata": {"lang": "en"},
        }
    ]
    (doc,) = doclists.documents_in(meta, "candidate", ()) or []
    assert (doc.doc_id, doc.metadata) == ("a", {"lang": "en"})


def test_content_blocks_of_message_events() -> None:
    """Per-message span events whose content is a JSON list of content blocks (``{"text"}``,
    ``{"json"}``, ``{"toolResult"}``): the model's messages on a model call's span; on a tool's span
    the message it was given is its arguments and the choice its result."""
    from collector.normalize.genai_events import ContentEvent, with_content

    docs = {"documents": [{"id": "refund", "content": "Refunds are accepted within 30 days.", "score": 0.9}]}
    chat = with_content({"gen_ai.operation.name": "chat"}, [
        ContentEvent("gen_ai.user.message", {"content": '[{"text": "How long do refunds take?"}]'}, None, 1),
        ContentEvent("gen_ai.tool.message", {"content": json.dumps([{"toolResult": {"toolUseId": "t1",
                     "content": [{"json": docs}]}}]), "id": "t1"}, None, 2),
        ContentEvent("gen_ai.choice", {"message": '[{"text": "Thirty days."}]'}, None, 3),
    ])  # fmt: skip
    llm = normalize_span(chat)
    assert (llm.query_text, llm.output_text) == ("How long do refunds take?", "Thirty days.")
    assert llm.input_text is not None and "Refunds are accepted within 30 days." in llm.input_text
    tool = normalize_span(with_content({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}, [
        ContentEvent("gen_ai.tool.message", {"content": '[{"text": "{\\"query\\": \\"refunds\\"}"}]'}, None, 1),
        ContentEvent("gen_ai.choice", {"message": json.dumps([{"json": docs}])}, None, 2),
    ]))  # fmt: skip
    assert tool.tool_arguments == '{"query": "refunds"}'
    assert [(d.doc_id, d.score) for d in tool.docs] == [("refund", 0.9)]
