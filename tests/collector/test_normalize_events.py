"""Span events and log records read by the structural layer (``collector.normalize.events``): the same
unwrapping rules as attributes, under the reader and the span's own attributes, each field named in
the step's provenance; and every field of a step named by the pass that set it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from collector.normalize import events, normalize_span
from tests.collector.test_normalize_structural import WRAPPERS, _texts, _wrapped

_prompts = st.tuples(_texts, _texts).map(" ".join)  # more than one word: a prompt, not a name
_CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
DOCS = [
    {"id": "refund", "text": "Refunds within 30 days.", "score": 0.9},
    {"id": "ship", "text": "Orders ship in 2 days.", "score": 0.2},
]
DOC_WRAPPERS: dict[str, Any] = {
    "json_string": json.dumps,
    "hits": lambda x: {"hits": x, "took_ms": 3},
    "result": lambda x: {"result": {"documents": x}},
    "call_result": lambda x: {"outputs": json.dumps({"data": {"retriever": {"documents": x}}})},
}


@settings(max_examples=300, deadline=None)
@given(text=_prompts, names=st.lists(st.sampled_from(sorted(WRAPPERS)), max_size=5))
def test_a_prompt_in_an_event_or_a_log_record_reads_as_in_an_attribute(text: str, names: list[str]) -> None:
    value = _wrapped(text, names)
    as_attribute = normalize_span({**_CHAT, "acme.prompt": value})
    as_event = normalize_span(
        _CHAT, extra=events.attributes([("event", "llm.prompt", {"content": value}, None)])
    )
    as_log = normalize_span(_CHAT, extra=events.attributes([("log", "llm.prompt", {}, value)]))
    assert as_attribute.input_text is not None
    assert as_event.input_text == as_log.input_text == as_attribute.input_text
    assert as_event.query_text == as_attribute.query_text
    assert as_event.provenance is not None and as_log.provenance is not None
    assert as_event.provenance["input_text"].endswith("@event[llm.prompt].content")
    assert as_log.provenance["input_text"].endswith("@log[llm.prompt].body")


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.sampled_from(sorted(DOC_WRAPPERS)), max_size=3, unique=True))
def test_documents_in_an_event_make_the_span_a_retrieval(names: list[str]) -> None:
    value: Any = DOCS
    for name in names:
        value = DOC_WRAPPERS[name](value)
    extra = events.attributes([("event", "search.done", {"hits": value}, None)])
    unclaimed = normalize_span({}, extra=extra)
    assert (unclaimed.step_type, unclaimed.convention) == ("retrieval", "structural")
    assert [(d.doc_id, d.content, d.score) for d in unclaimed.docs] == [
        (d["id"], d["text"], d["score"]) for d in DOCS
    ]
    # a retrieval a reader claimed but recorded no documents of takes them too
    claimed = normalize_span({"gen_ai.operation.name": "retrieval"}, extra=extra)
    assert (claimed.step_type, claimed.convention) == ("retrieval", "genai")
    assert [d.doc_id for d in claimed.docs] == ["refund", "ship"]
    assert claimed.provenance == {"step_type": "genai", "docs": "shape:documents@event[search.done].hits"}


def test_the_span_s_own_attributes_and_its_reader_win_over_its_events() -> None:
    extra = events.attributes([
        ("event", "llm.prompt", {"content": "Words from the event."}, None),
        ("log", "llm.response", {}, "An answer from a log record."),
    ])  # fmt: skip
    own = normalize_span({**_CHAT, "acme.prompt": "Words from the span itself."}, extra=extra)
    assert own.input_text == "Words from the span itself."
    assert own.output_text == "An answer from a log record."  # nothing else said it
    read = normalize_span(
        {**_CHAT, "gen_ai.input.messages": json.dumps([{"role": "user", "content": "The reader's prompt."}])},
        extra=extra,
    )
    assert read.input_text == "The reader's prompt." and read.provenance is not None
    assert read.provenance["input_text"] == "genai"


def test_events_that_hold_no_content_are_not_read() -> None:
    payloads = [
        ("event", "exception", {"exception.message": "Timed out after many seconds"}, None),
        ("event", "gen_ai.user.message", {"content": "read by the reader, as messages"}, None),
        (
            "event",
            "retry",
            {"http.request.body": "a body of several words", "db.statement": "SELECT 1 FROM t"},
            None,
        ),
        ("log", "", {"code.function": "answer"}, "Retrieved 3 documents in 20 ms"),  # a log line: no side
    ]
    extra = events.attributes(payloads)
    assert extra == {"log[].body": "Retrieved 3 documents in 20 ms"}
    step = normalize_span(_CHAT, extra=extra)
    assert (step.input_text, step.output_text) == (None, None)
    assert step.provenance == {"step_type": "genai", "model": "genai"}


def test_a_log_record_s_object_body_is_read_by_its_keys() -> None:
    extra = events.attributes(
        [("log", "llm", {}, {"prompt": "Context: refunds within 30 days.", "response": "Within 30 days."})]
    )
    step = normalize_span(_CHAT, extra=extra)
    assert (step.input_text, step.output_text) == ("Context: refunds within 30 days.", "Within 30 days.")
    assert step.provenance is not None and step.provenance["output_text"] == "shape:text@log[llm].response"


@settings(max_examples=200, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=30,
    ),
    name=st.text(max_size=12),
)
def test_any_event_reads_without_raising(value: Any, name: str) -> None:
    attrs = value if isinstance(value, dict) else {"payload": value}
    extra = events.attributes([("event", name, attrs, None), ("log", name, {}, value)])
    for span in ({}, _CHAT, {"gen_ai.operation.name": "retrieval"}):
        step = normalize_span(span, extra=extra)
        for field, source in (step.provenance or {}).items():
            assert isinstance(field, str) and isinstance(source, str)


def test_every_field_set_is_named_by_the_pass_that_set_it() -> None:
    step = normalize_span(
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": "refund window",
            "retrieval.documents.0.document.id": "refund",
            "retrieval.documents.0.document.content": "Refunds within 30 days.",
            "ragfault.case_id": "c1",
            "ragfault.context.documents": json.dumps(
                [{"id": "refund", "content": "Refunds within 30 days."}]
            ),
        }
    )
    assert step.provenance == {
        "step_type": "openinference",
        "query_text": "openinference",
        "input_text": "openinference",
        "docs": "openinference",
        "case_id": "ragfault",
        "docs.context": "ragfault",
    }
    tool = normalize_span(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "search",
            "output.value": json.dumps(
                [{"id": "refund", "content": "Refunds within 30 days.", "score": 1.0}]
            ),
        }
    )
    assert tool.provenance is not None and tool.provenance["docs"] == "shape:tool_documents@tool_result"
