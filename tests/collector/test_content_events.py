"""GenAI content events fill their span's step: as OTLP log records (before or after the span, the
trace settles again) and as span events, in the newest form (operation.details) and the older one
(one event a message, gen_ai.choice). Real SDK exporters, a real server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import Span, SpanContext

from collector.normalize.genai_events import ContentEvent, content_attributes
from tests.conftest import Server, StartServer
from tests.otel_helpers import http_provider

DOCS = [
    {"id": "refund-2026", "content": "Annual members may request a refund within 30 days.", "score": 0.9},
    {"id": "shipping", "content": "Orders ship within 2 business days.", "score": 0.4},
]
QUESTION = "Can I get a refund on day 20?"
ANSWER = "Yes: within 30 days a refund is possible."
SYSTEM = "Answer from the context only."


@pytest.fixture(scope="module")
def srv(start_module_server: StartServer) -> Server:
    return start_module_server()


def prompt(docs: list[dict[str, Any]]) -> str:
    return "Context:\n" + "\n".join(d["content"] for d in docs) + f"\nQuestion: {QUESTION}"


def send_trace(
    srv: Server, span_events: Callable[[Span], None] | None = None, service: str = "content-events"
) -> SpanContext:
    """A RAG request whose chat span carries no message attributes; returns the chat span's context."""
    provider = http_provider(srv.url, service=service)
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("answer"):
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute("gen_ai.operation.name", "retrieval")
            r.set_attribute("gen_ai.retrieval.query.text", QUESTION)
            r.set_attribute("gen_ai.retrieval.documents", json.dumps(DOCS))
        with tracer.start_as_current_span("chat m1") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "m1")
            if span_events is not None:
                span_events(chat)
            ctx = chat.get_span_context()
    provider.shutdown()
    return ctx


def send_logs(
    srv: Server, ctx: SpanContext, records: list[LogRecord], service: str = "content-events"
) -> None:
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{srv.url}/v1/logs"))
    )
    logger = provider.get_logger("tests")
    for rec in records:
        rec.trace_id, rec.span_id, rec.trace_flags = ctx.trace_id, ctx.span_id, ctx.trace_flags
        logger.emit(rec)
    provider.shutdown()


def details_record(docs: list[dict[str, Any]]) -> LogRecord:
    """The newest form, as opentelemetry-util-genai emits it: structured message attributes."""
    return LogRecord(
        event_name="gen_ai.client.inference.operation.details",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt(docs)}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": ANSWER}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        },
    )


def legacy_records(docs: list[dict[str, Any]]) -> list[LogRecord]:
    return [
        LogRecord(
            event_name="gen_ai.system.message",
            body={"content": SYSTEM},
            attributes={"gen_ai.system": "openai"},
        ),
        LogRecord(event_name="gen_ai.user.message", body={"content": prompt(docs)}),
        LogRecord(
            event_name="gen_ai.choice",
            body={"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}},
        ),
    ]


def trace_row(srv: Server, ctx: SpanContext) -> dict[str, Any]:
    tid = format(ctx.trace_id, "032x")
    row = srv.sql(
        "SELECT t.query_text, t.answer_text, t.answer_span_id, s.input_text, s.output_text, s.query_text, "
        "t.content_events, t.assembled_spans FROM traces t JOIN steps s ON s.trace_id = t.trace_id "
        "AND s.span_id = $s WHERE t.trace_id = $t",
        t=tid,
        s=format(ctx.span_id, "016x"),
    )[0]
    context = srv.sql(
        "SELECT doc_id FROM step_documents WHERE trace_id = $t AND stage = 'context' ORDER BY position", t=tid
    )
    keys = ("query", "answer", "answer_span", "input", "output", "step_query", "events", "assembled")
    return {**dict(zip(keys, row, strict=True)), "context": [r[0] for r in context]}


def assert_filled(srv: Server, ctx: SpanContext, docs: list[dict[str, Any]]) -> dict[str, Any]:
    t = trace_row(srv, ctx)
    assert t["query"] == QUESTION
    assert t["answer"] == ANSWER
    assert t["answer_span"] == format(ctx.span_id, "016x")
    assert t["input"] == SYSTEM + "\n" + prompt(docs)
    assert t["output"] == ANSWER
    assert t["step_query"] == prompt(docs)  # an LLM step's query is its last user message
    assert t["context"] == [d["id"] for d in docs]  # derived from the filled prompt
    return t


@pytest.mark.parametrize("form", ["details", "legacy"])
def test_log_records_before_the_span_fill_the_step(srv: Server, form: str) -> None:
    docs = DOCS[:1]  # the prompt holds the first document only: it alone is in context
    records = [details_record(docs)] if form == "details" else legacy_records(docs)

    # the records are committed before the span exists: their ids come from a span sent afterwards
    ctx_holder: dict[str, SpanContext] = {}

    def chat_events(span: Span) -> None:
        ctx = ctx_holder["ctx"] = span.get_span_context()
        send_logs(srv, ctx, records)  # acknowledged, so committed, while the span is still open
        span_hex = format(ctx.span_id, "016x")
        assert srv.scalar("SELECT count(*) FROM spans WHERE span_id = $s", s=span_hex) == 0
        assert srv.scalar("SELECT count(*) FROM log_records WHERE span_id = $s", s=span_hex) == len(records)

    ctx = send_trace(srv, span_events=chat_events)
    assert ctx_holder["ctx"] == ctx
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=format(ctx.trace_id, "032x")) == 3
    srv.settle()
    assert_filled(srv, ctx, docs)


def test_log_records_after_the_trace_settled_make_it_settle_again(srv: Server) -> None:
    ctx = send_trace(srv)
    tid = format(ctx.trace_id, "032x")
    srv.settle()
    before = trace_row(srv, ctx)
    # without its content the chat step has no text: no answer, no context
    assert before["answer"] is None and before["input"] is None and before["context"] == []

    send_logs(srv, ctx, legacy_records(DOCS))
    assert srv.scalar("SELECT content_events FROM traces WHERE trace_id = $t", t=tid) == 3
    # the settle loop itself picks the trace up again (no forced round)
    srv.wait_for("SELECT answer_text FROM traces WHERE trace_id = $t", ANSWER, t=tid)
    t = assert_filled(srv, ctx, DOCS)
    assert (t["events"], t["assembled"]) == (3, 3 + 3)  # three spans, three content events
    # and it is evaluated again with the answer it now has
    srv.wait_for(
        "SELECT count(*) FROM evaluations WHERE trace_id = $t AND evaluator = 'answer_support' AND status <> 'not_applicable'",
        1,
        t=tid,
    )


@pytest.mark.parametrize("form", ["details", "legacy"])
def test_span_events_fill_the_step(srv: Server, form: str) -> None:
    docs = DOCS

    def add_events(span: Span) -> None:
        if form == "details":
            attrs = dict(details_record(docs).attributes or {})
            span.add_event("gen_ai.client.inference.operation.details", attrs)
        else:
            span.add_event("gen_ai.system.message", {"content": SYSTEM})
            span.add_event("gen_ai.user.message", {"content": prompt(docs)})
            span.add_event(
                "gen_ai.choice", {"index": 0, "message": json.dumps({"role": "assistant", "content": ANSWER})}
            )

    ctx = send_trace(srv, span_events=add_events)
    srv.settle()
    assert_filled(srv, ctx, docs)
    # the raw span attributes stay as sent: the messages were only read, not added
    attrs = srv.scalar("SELECT attributes FROM spans WHERE span_id = $s", s=format(ctx.span_id, "016x"))
    assert "gen_ai.input.messages" not in json.loads(attrs)


def test_span_attributes_win_over_events() -> None:
    events = [
        ContentEvent("gen_ai.user.message", {}, {"content": "from the event"}, 2),
        ContentEvent("gen_ai.tool.message", {}, {"content": "tool said", "id": "call_1"}, 3),
        ContentEvent(
            "gen_ai.assistant.message", {}, {"tool_calls": [{"id": "c", "function": {"name": "f"}}]}, 1
        ),
        ContentEvent("gen_ai.choice", {}, "plain choice text", 4),
        ContentEvent("unrelated", {}, {"content": "ignored"}, 0),
    ]
    found = content_attributes(events)
    assert found["gen_ai.input.messages"] == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "f", "arguments": None}]},
        {"role": "user", "parts": [{"type": "text", "content": "from the event"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "tool said"}]},
    ]
    assert found["gen_ai.output.messages"] == [
        {"role": "assistant", "parts": [{"type": "text", "content": "plain choice text"}]}
    ]
    assert "gen_ai.system_instructions" not in found


def test_documents_without_text_take_the_registry_text(srv: Server) -> None:
    """``{id, score}`` documents (the GenAI spec's shape): the text comes from ``kb_documents`` at
    settle time, the context is derived from it and a citation of the kept document is valid."""
    kb = [
        {"doc_id": "kb-refund", "content": "Refunds are possible within 30 days."},
        {"doc_id": "kb-shipping", "content": "Orders ship within 2 business days."},
    ]
    assert srv.http.post("/api/v1/kb", content="\n".join(json.dumps(d) for d in kb)).json()["loaded"] == 2
    provider = http_provider(srv.url, service="registry-text")
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("answer") as root:
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute("gen_ai.operation.name", "retrieval")
            r.set_attribute("gen_ai.retrieval.query.text", "refund?")
            r.set_attribute("gen_ai.request.top_k", 2)  # the older name, read when top_k is absent
            r.set_attribute("gen_ai.data_source.id", "kb-main")
            r.set_attribute("gen_ai.retrieval.documents", json.dumps([
                {"id": "kb-refund", "score": 0.8}, {"id": "kb-shipping", "score": 0.3}, {"id": "unknown", "score": 0.1},
            ]))  # fmt: skip
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute(
                "gen_ai.input.messages",
                json.dumps(
                    [{"role": "user", "content": "Context: Refunds are possible within 30 days.\nrefund?"}]
                ),
            )
            chat.set_attribute(
                "gen_ai.output.messages", json.dumps([{"role": "assistant", "content": "Yes [kb-refund]."}])
            )
        tid = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    srv.settle()
    assert srv.sql(
        "SELECT top_k, data_source_id FROM steps WHERE trace_id = $t AND step_type = 'retrieval'", t=tid
    ) == [[2, "kb-main"]]
    docs = srv.sql(
        "SELECT stage, doc_id, content, content_source, source FROM step_documents WHERE trace_id = $t "
        "ORDER BY stage, position",
        t=tid,
    )
    assert docs == [
        ["candidate", "kb-refund", kb[0]["content"], "registry", "span"],
        ["candidate", "kb-shipping", kb[1]["content"], "registry", "span"],
        ["candidate", "unknown", None, None, "span"],  # neither text nor a registry entry: left as sent
        ["context", "kb-refund", kb[0]["content"], None, "derived"],
    ]
    srv.wait_for(
        "SELECT bool_or(passed) FROM evaluations WHERE trace_id = $t AND metric = 'citation_validity'",
        True,
        t=tid,
    )
