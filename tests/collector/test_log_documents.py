"""A retrieval whose results are sent as a log record joined to its span, not on the span: the
settle reads the record's documents into the step (as derived rows, under the content trust rule),
and the three planted questions get their root causes from them. A record from another service
gives nothing, and the retrieval whose output is then unknown is said to be, never called empty.
Real SDK exporters (spans and logs over OTLP HTTP), a real server, a real DuckDB file."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry import trace as otel_trace
from opentelemetry._logs import LogRecord
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from tests.attribution.conftest import wait_evaluated
from tests.collector.test_content_events import send_logs
from tests.collector.test_provenance_events import CASES, EXPECTED, budgeted, retrieve
from tests.conftest import Server, make_settings
from tests.otel_helpers import http_provider

SERVICE = "log-docs-app"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(make_settings(tmp_path_factory.mktemp("log-documents")))
    gold = "\n".join(
        json.dumps({
            "case_id": case_id, "query": q, "answerable": True, "expected_behavior": "answer", "must_retrieve": True,
            "evidence": [{"doc_id": doc, "quote": quote}],
        })
        for case_id, (q, doc, quote) in CASES.items()
    )  # fmt: skip
    try:
        assert s.http.post("/api/v1/gold", content=gold).json()["loaded"] == len(CASES)
        yield s
    finally:
        s.stop()


def messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def send(srv: Server, case_id: str, log_service: str = SERVICE) -> tuple[str, str]:
    """A GenAI retrieval span with its query and no documents, the documents in a log record joined
    to it (sent by ``log_service``), and a model call given the first ``PROMPT_BUDGET`` of them.
    Returns the trace id and the retrieval's span id."""
    question, found, prompt, answer = budgeted(case_id)
    provider = http_provider(srv.url, service=SERVICE)
    tracer = provider.get_tracer("helpdesk")
    with tracer.start_as_current_span("rag.request") as root:
        root.set_attribute("ragfault.case_id", case_id)
        root.set_attribute("input", question)
        attrs = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": question}
        with tracer.start_as_current_span("retrieval kb", attributes=attrs) as search:
            hits = [{"id": d["id"], "text": d["text"], "score": d["score"]} for d in found]
            record = LogRecord(event_name="kb.results", body=json.dumps({"results": hits}))
            send_logs(srv, search.get_span_context(), [record], log_service)
            search_id = format(search.get_span_context().span_id, "016x")
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "helpdesk-model",
            "gen_ai.input.messages": messages("user", prompt),
            "gen_ai.output.messages": messages("assistant", answer),
        }
        with tracer.start_as_current_span("chat helpdesk-model", attributes=attrs):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id, search_id


def test_documents_in_a_log_record_are_the_retrieval_s_candidates(srv: Server) -> None:
    traces = {case_id: send(srv, case_id) for case_id in CASES}
    wait_evaluated(srv, [t for t, _ in traces.values()])
    for case_id, (trace_id, search_id) in traces.items():
        found = retrieve(CASES[case_id][0])
        candidates = srv.sql(
            "SELECT span_id, doc_id, content, score, source FROM step_documents "
            "WHERE trace_id = $t AND stage = 'candidate' ORDER BY position",
            t=trace_id,
        )
        assert candidates == [[search_id, d["id"], d["text"], d["score"], "derived"] for d in found], case_id
        step = srv.sql(
            "SELECT step_type, convention, provenance->>'docs' FROM steps WHERE trace_id = $t AND span_id = $s",
            t=trace_id,
            s=search_id,
        )
        assert step == [["retrieval", "genai", "shape:documents@log[kb.results].body"]]
        context = srv.sql(
            "SELECT doc_id FROM step_documents WHERE trace_id = $t AND stage = 'context' ORDER BY position",
            t=trace_id,
        )
        assert context == [[found[0]["id"]]], case_id
        cause = srv.scalar("SELECT root_cause FROM attribution WHERE trace_id = $t", t=trace_id)
        assert cause == EXPECTED[case_id], (case_id, cause)

    # settled again (a late span), the documents are written once more, not twice
    trace_id, search_id = traces["cut"]
    before = srv.sql("SELECT count(*) FROM step_documents WHERE trace_id = $t", t=trace_id)
    spans = "SELECT assembled_spans FROM traces WHERE trace_id = $t"
    assembled = srv.scalar(spans, t=trace_id)
    parent = SpanContext(int(trace_id, 16), int(search_id, 16), is_remote=True, trace_flags=TraceFlags(1))
    provider = http_provider(srv.url, service=SERVICE)
    with provider.get_tracer("helpdesk").start_as_current_span(
        "late.note", context=otel_trace.set_span_in_context(NonRecordingSpan(parent))
    ):
        pass
    provider.shutdown()
    srv.settle()
    assert srv.scalar(spans, t=trace_id) == assembled + 1  # assembled again, with the late span
    after = srv.sql("SELECT count(*) FROM step_documents WHERE trace_id = $t", t=trace_id)
    assert after == before


def test_documents_from_another_service_are_not_read(srv: Server) -> None:
    trace_id, search_id = send(srv, "in-prompt", log_service="someone-else")
    wait_evaluated(srv, [trace_id])
    assert (
        srv.scalar(
            "SELECT count(*) FROM log_records WHERE trace_id = $t AND span_id = $s", t=trace_id, s=search_id
        )
        == 1
    )
    docs = srv.sql(
        "SELECT stage FROM step_documents WHERE trace_id = $t AND span_id = $s", t=trace_id, s=search_id
    )
    assert docs == []
    row = srv.sql("SELECT root_cause, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id)
    assert row == [["insufficient_trace", ["retrieval_output"]]]  # an unrecorded retrieval is no empty one
