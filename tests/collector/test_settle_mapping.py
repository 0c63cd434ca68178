"""A span read again when its trace settles (its log records joined, ``collector.settling.content_events``) is
read with the server's own ``[[conventions.mapping]]`` entries and source keys, as ingest read it:
what a mapping filled at ingest is not read differently by the structural layer at settle. Real
server started from a config file, real SDK exporters for spans and logs, a real DuckDB file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry._logs import LogRecord

from tests.collector.test_content_events import send_logs
from tests.conftest import Server, make_settings
from tests.otel_helpers import http_provider

SERVICE = "acme-app"
CONFIG = """
[[conventions.mapping]]
name = "acme llm"
span_name = 'acme\\.generate'
step_type = "llm"
query = "acme.q"
answer = "acme.final"

[[conventions.mapping]]
name = "acme search"
span_name = 'acme\\.search'
step_type = "retrieval"
documents = "acme.hits$.items"
document_id = "ref"
document_text = "body"
"""
QUESTION = "Can annual members request a refund?"
ANSWER = "Annual members can request a refund within 30 days [refund-policy]."
GUESS = "A draft the key's name makes look like the answer."  # what the structural layer would read
PROMPT = (
    "Context:\n[refund-policy] Annual members can request a refund within 30 days.\n\nQuestion: " + QUESTION
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("settle-mapping")
    (tmp / "ragfault.toml").write_text(CONFIG, encoding="utf-8")
    s = Server(make_settings(tmp, config_file=str(tmp / "ragfault.toml")))
    try:
        assert len(s.runtime.settler.options.mappings) == 2  # the settler holds the server's mappings
        yield s
    finally:
        s.stop()


def send(srv: Server, with_prompt_record: bool) -> tuple[str, str]:
    """A mapped model call whose prompt is (or is not) sent as a log record joined to its span;
    returns the trace id and the model call's span id."""
    provider = http_provider(srv.url, service=SERVICE)
    tracer = provider.get_tracer("acme-sdk")
    hits = {
        "items": [{"ref": "refund-policy", "body": "Annual members can request a refund within 30 days."}]
    }
    with tracer.start_as_current_span("acme.request") as root:
        with tracer.start_as_current_span("acme.search", attributes={"acme.hits": json.dumps(hits)}):
            pass
        attrs = {"acme.q": QUESTION, "acme.final": ANSWER, "acme.output": GUESS}
        with tracer.start_as_current_span("acme.generate", attributes=attrs) as llm:
            if with_prompt_record:
                send_logs(
                    srv, llm.get_span_context(), [LogRecord(event_name="llm.prompt", body=PROMPT)], SERVICE
                )
            span_id = format(llm.get_span_context().span_id, "016x")
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    srv.settle()
    return trace_id, span_id


def test_a_mapped_field_reads_the_same_after_a_log_record_fills_the_span(srv: Server) -> None:
    plain_trace, plain_span = send(srv, with_prompt_record=False)
    filled_trace, filled_span = send(srv, with_prompt_record=True)
    query = (
        "SELECT step_type, convention, query_text, input_text, output_text, provenance FROM steps "
        "WHERE trace_id = $t AND span_id = $s"
    )
    plain = srv.sql(query, t=plain_trace, s=plain_span)[0]
    filled = srv.sql(query, t=filled_trace, s=filled_span)[0]
    assert plain[:5] == ["llm", "mapping", QUESTION, None, ANSWER]
    # the record filled the prompt the span lacked; the mapped fields stayed what the mapping read
    assert filled[:5] == ["llm", "mapping", QUESTION, PROMPT, ANSWER]
    provenance = json.loads(filled[5])
    assert provenance["output_text"] == "mapping:acme llm@acme.final"
    assert provenance["query_text"] == "mapping:acme llm@acme.q"
    assert provenance["input_text"] == "shape:text@log[llm.prompt].body"
    for trace_id in (plain_trace, filled_trace):
        row = srv.sql("SELECT query_text, answer_text FROM traces WHERE trace_id = $t", t=trace_id)
        assert row == [[QUESTION, ANSWER]]
    # the derived context comes from the prompt only the record held
    context = srv.sql(
        "SELECT doc_id FROM step_documents WHERE trace_id = $t AND stage = 'context' AND source = 'derived'",
        t=filled_trace,
    )
    assert context == [["refund-policy"]]
