"""Where each field of a step came from (``steps.provenance``), and content that sits beside a span:
in span events of any name and in log records joined to the span, read by the structural layer.
Real SDK exporters (spans and logs over OTLP HTTP), a real server, a real DuckDB file."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from opentelemetry._logs import LogRecord

from collector.api.coverage import render
from tests.attribution.conftest import wait_evaluated
from tests.collector.test_content_events import send_logs
from tests.conftest import Server, StartServer, make_settings
from tests.otel_helpers import http_provider

KB = [
    {"id": "refund-policy", "text": "Annual members can request a refund within 30 days of purchase."},
    {"id": "warranty-policy", "text": "Headphones come with a two year warranty."},
    {
        "id": "headphones-faq",
        "text": "Warranty claims for headphones need the order number of the headphones.",
    },
    {"id": "shipping-policy", "text": "Standard orders ship within 2 business days."},
    {"id": "delivery-partners", "text": "Our delivery partners are DHL and UPS."},
]
CASES = {
    "in-prompt": ("Can annual members request a refund?", "refund-policy", "within 30 days"),
    "cut": ("What warranty do headphones have?", "warranty-policy", "two year warranty"),
    "never-retrieved": ("How long does delivery take?", "shipping-policy", "ship within 2 business days"),
}
EXPECTED = {"in-prompt": "ok", "cut": "dropped_before_context", "never-retrieved": "candidate_miss"}
STOP = {"what", "do", "does", "how", "can", "a", "the", "to", "have", "is", "of", "for", "are", "our"}
TOP_K, PROMPT_BUDGET = 3, 1
SERVICE = "events-app"


def terms(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOP]


def retrieve(query: str) -> list[dict[str, Any]]:
    """Term-frequency retrieval over the knowledge base, best first, score > 0."""
    q = set(terms(query))
    scored: list[dict[str, Any]] = [
        {**d, "score": float(sum(1 for t in terms(d["text"]) if t in q))} for d in KB
    ]
    return sorted((d for d in scored if d["score"] > 0), key=lambda d: (-d["score"], d["id"]))[:TOP_K]


def budgeted(case_id: str) -> tuple[str, list[dict[str, Any]], str, str]:
    """A case's question, what retrieval found, the prompt given the first ``PROMPT_BUDGET`` of
    those documents, and the answer from the first of them, citing it."""
    question = CASES[case_id][0]
    found = retrieve(question)
    kept = found[:PROMPT_BUDGET]
    prompt = "Context:\n" + "\n".join(f"[{d['id']}] {d['text']}" for d in kept) + f"\n\nQuestion: {question}"
    return question, found, prompt, f"{kept[0]['text'].rstrip('.')} [{kept[0]['id']}]."


@pytest.fixture(scope="module")
def srv(start_module_server: StartServer) -> Server:
    s = start_module_server()
    gold = "\n".join(
        json.dumps({
            "case_id": case_id, "query": q, "answerable": True, "expected_behavior": "answer", "must_retrieve": True,
            "evidence": [{"doc_id": doc, "quote": quote}],
        })
        for case_id, (q, doc, quote) in CASES.items()
    )  # fmt: skip
    assert s.http.post("/api/v1/gold", content=gold).json()["loaded"] == len(CASES)
    return s


def answer_beside_the_spans(srv: Server, case_id: str, log_service: str = SERVICE) -> tuple[str, str, str]:
    """A RAG request whose spans hold nearly nothing: the question as a plain ``input`` attribute of
    the root, the documents in an event of the search span, the prompt in an event of the chat span,
    the answer in a log record joined to the chat span (sent by ``log_service``). Returns the trace
    id, the chat span id and the answer."""
    question, found, prompt, answer = budgeted(case_id)
    provider = http_provider(srv.url, service=SERVICE)
    tracer = provider.get_tracer("helpdesk")
    with tracer.start_as_current_span("rag.request") as root:
        root.set_attribute("ragfault.case_id", case_id)
        root.set_attribute("input", question)
        with tracer.start_as_current_span("kb.search") as search:
            search.add_event("search.done", {"query": question, "hits": json.dumps(found)})
        with tracer.start_as_current_span("chat helpdesk-model") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "helpdesk-model")
            chat.add_event("llm.prompt", {"content": json.dumps([{"text": prompt}])})
            # the answer goes out as a log record, committed before the spans: the trace settles
            # once, with it
            send_logs(
                srv,
                chat.get_span_context(),
                [LogRecord(event_name="llm.completion", body=answer)],
                log_service,
            )
            chat_id = format(chat.get_span_context().span_id, "016x")
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id, chat_id, answer


def provenance(srv: Server, trace_id: str) -> dict[str, dict[str, str] | None]:
    rows = srv.sql("SELECT name, provenance FROM steps WHERE trace_id = $t", t=trace_id)
    return {name: json.loads(p) if p is not None else None for name, p in rows}


def test_content_in_span_events_and_log_records_is_read_and_attributed(srv: Server) -> None:
    traces = {case_id: answer_beside_the_spans(srv, case_id) for case_id in CASES}
    wait_evaluated(srv, [t for t, _, _ in traces.values()])
    for case_id, (trace_id, chat_id, answer) in traces.items():
        question = CASES[case_id][0]
        found = retrieve(question)
        steps = srv.sql(
            "SELECT name, step_type, convention, query_text, input_text, output_text FROM steps "
            "WHERE trace_id = $t ORDER BY start_time",
            t=trace_id,
        )
        by_name = {s[0]: s[1:] for s in steps}
        assert by_name["kb.search"][:2] == ["retrieval", "structural"], case_id
        assert by_name["chat helpdesk-model"][:2] == ["llm", "genai"]
        assert by_name["chat helpdesk-model"][4] == answer  # from the log record
        candidates = srv.sql(
            "SELECT doc_id, score FROM step_documents WHERE trace_id = $t AND stage = 'candidate' ORDER BY position",
            t=trace_id,
        )
        assert candidates == [[d["id"], d["score"]] for d in found]
        context = srv.sql(
            "SELECT doc_id, span_id, source FROM step_documents WHERE trace_id = $t AND stage = 'context'",
            t=trace_id,
        )
        assert context == [[found[0]["id"], chat_id, "derived"]]  # from the prompt in the event
        row = srv.sql(
            "SELECT query_text, answer_text, root_cause FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert row == [[question, answer, EXPECTED[case_id]]], (case_id, row)

        assert provenance(srv, trace_id) == {
            "rag.request": {"input_text": "shape:text@input", "case_id": "ragfault"},
            "kb.search": {
                "docs": "shape:documents@event[search.done].hits",
                "input_text": "shape:text@event[search.done].query",
                "step_type": "shape:documents@event[search.done].hits",
            },
            "chat helpdesk-model": {
                "step_type": "genai",
                "model": "genai",
                "input_text": "shape:text@event[llm.prompt].content",
                "output_text": "shape:text@log[llm.completion].body",
            },
        }

    # ragfault doctor names, per span name, the fields no reader read and the rule and key that did
    rep = srv.http.get("/api/v1/coverage", params={"service": SERVICE}).json()
    inferred = {(r["span_name"], r["field"], r["source"]): r["steps"] for r in rep["inferred"]}
    assert inferred[("chat helpdesk-model", "output_text", "shape:text@log[llm.completion].body")] >= len(
        CASES
    )
    assert inferred[("kb.search", "docs", "shape:documents@event[search.done].hits")] >= len(CASES)
    assert ("chat helpdesk-model", "model", "genai") not in inferred  # a reader's field is no inference
    text = render(rep)
    assert "kb.search:" in text and "docs           <- shape:documents@event[search.done].hits" in text


def test_a_log_record_from_another_service_fills_nothing(srv: Server) -> None:
    trace_id, chat_id, answer = answer_beside_the_spans(srv, "in-prompt", log_service="someone-else")
    wait_evaluated(srv, [trace_id])
    # the record is stored, as sent, and read into nothing
    assert (
        srv.scalar(
            "SELECT count(*) FROM log_records WHERE trace_id = $t AND span_id = $s", t=trace_id, s=chat_id
        )
        == 1
    )
    chat = srv.sql(
        "SELECT output_text, provenance FROM steps WHERE trace_id = $t AND span_id = $s",
        t=trace_id,
        s=chat_id,
    )
    assert chat[0][0] is None and "output_text" not in json.loads(chat[0][1])
    # no answer: what the trace cannot show is said, never a layer guessed
    row = srv.sql(
        "SELECT answer_text, root_cause, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
    )
    assert row == [[None, "insufficient_trace", ["answer"]]]


def test_a_log_record_from_a_trusted_service_fills_the_answer(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A log shipper that forwards every app's records under its own name, named in
    ``trusted_content_sources``, fills the span as the span's own service would."""
    settings = make_settings(tmp_path_factory.mktemp("trusted"), trusted_content_sources=("log-shipper",))
    trusted = Server(settings)
    try:
        trace_id, chat_id, answer = answer_beside_the_spans(trusted, "in-prompt", log_service="log-shipper")
        trusted.settle()
        chat = trusted.sql(
            "SELECT output_text, provenance->>'output_text' FROM steps WHERE trace_id = $t AND span_id = $s",
            t=trace_id,
            s=chat_id,
        )
        assert chat == [[answer, "shape:text@log[llm.completion].body"]]
        assert trusted.scalar("SELECT answer_text FROM traces WHERE trace_id = $t", t=trace_id) == answer
    finally:
        trusted.stop()


def test_the_trace_view_shows_each_field_s_reader_or_rule(srv: Server) -> None:
    """Readers and the structural layer in one trace: each field is named by what read it, in
    ``steps`` and in the trace's JSON."""
    docs = [{"id": "refund-policy", "content": KB[0]["text"], "score": 0.9}]
    provider = http_provider(srv.url, service="mixed-readers")
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("answer") as root:
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute("gen_ai.operation.name", "retrieval")
            r.set_attribute("gen_ai.retrieval.query.text", "refund window?")
            r.set_attribute("gen_ai.retrieval.documents", json.dumps(docs))
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute(
                "gen_ai.input.messages",
                json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Context: ... refund window?"}]}]
                ),
            )
            chat.set_attribute("acme.llm.response", json.dumps({"output": {"text": "Within 30 days."}}))
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    srv.settle()
    expected = {
        "answer": None,
        "retrieve": {"step_type": "genai", "query_text": "genai", "docs": "genai"},
        "chat": {
            "step_type": "genai",
            "query_text": "genai",
            "input_text": "genai",
            "output_text": "shape:text@acme.llm.response",
        },
    }
    assert provenance(srv, trace_id) == expected
    view = srv.http.get(f"/api/v1/traces/{trace_id}").json()["steps"]
    at = view["columns"].index("provenance")
    name = view["columns"].index("name")
    assert {row[name]: row[at] for row in view["rows"]} == expected  # objects, not JSON text
