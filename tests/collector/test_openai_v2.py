"""The openai SDK with ``opentelemetry-instrumentation-openai-v2`` (OTel GenAI semantic conventions),
offline against a local OpenAI-compatible server, exporting traces, logs and metrics through the real
OTLP exporters to a real ragfault server.

The app is a tiny RAG service: a hand-written retrieval span as the GenAI spec writes one (documents
``{id, score}`` only, their text lives in the knowledge base), a prompt budget of one document, then
a chat call whose prompt holds the kept document's text. Both content modes of the instrumentor:
messages as span attributes (``span_only``) and as ``gen_ai.client.inference.operation.details`` log
records (``event_only``). Three questions each: the evidence reaches the prompt (``ok``), it is
retrieved and then cut by the budget (``dropped_before_context``), it is never retrieved
(``candidate_miss``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
openai_v2 = pytest.importorskip("opentelemetry.instrumentation.openai_v2")

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

from tests.attribution.conftest import wait_evaluated  # noqa: E402
from tests.conftest import Server, make_settings  # noqa: E402
from tests.llm_server import LLMServer  # noqa: E402

pytestmark = pytest.mark.instrumentors

KB = [
    {"doc_id": "refund-policy", "content": "Annual members can request a refund within 30 days of purchase."},
    {"doc_id": "warranty-policy", "content": "Headphones come with a two year warranty."},
    {
        "doc_id": "headphones-faq",
        "content": "Warranty claims for headphones need the order number of the headphones.",
    },
    {"doc_id": "shipping-policy", "content": "Standard orders ship within 2 business days."},
    {"doc_id": "delivery-partners", "content": "Our delivery partners are DHL and UPS."},
]
CASES = {
    "in-prompt": ("Can annual members request a refund?", "refund-policy", "within 30 days"),
    "cut": ("What warranty do headphones have?", "warranty-policy", "two year warranty"),
    "never-retrieved": ("How long does delivery take?", "shipping-policy", "ship within 2 business days"),
}
EXPECTED = {"in-prompt": "ok", "cut": "dropped_before_context", "never-retrieved": "candidate_miss"}
STOP = {"what", "do", "does", "how", "can", "a", "the", "to", "have", "is", "of", "for", "are", "our"}
TOP_K, PROMPT_BUDGET = 3, 1
SYSTEM = "Answer from the context only and cite the document id in brackets."
MODES = {  # the content mode of opentelemetry-instrumentation-openai-v2 2.x (opentelemetry-util-genai)
    "span-attributes": "span_only",
    "log-events": "event_only",
}


def terms(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOP]


def retrieve(query: str) -> list[tuple[str, float]]:
    """Term-frequency retrieval over the knowledge base: (doc id, score), best first, score > 0."""
    q = set(terms(query))
    scored = [(d["doc_id"], float(sum(1 for t in terms(d["content"]) if t in q))) for d in KB]
    ranked = sorted((s for s in scored if s[1] > 0), key=lambda s: (-s[1], s[0]))
    return ranked[:TOP_K]


def model_reply(messages: list[dict[str, Any]]) -> str:
    """The model answers with the first context line, citing its document."""
    user = str(messages[-1]["content"])
    line = user.split("Context:\n", 1)[1].splitlines()[0]
    doc_id, text = re.match(r"\[([^\]]+)\] (.*)", line).groups()  # type: ignore[union-attr]
    return f"{text.rstrip('.')} [{doc_id}]."


class App:
    def __init__(self, tracer: Any, client: Any) -> None:
        self.tracer, self.client = tracer, client
        self.text = {d["doc_id"]: d["content"] for d in KB}

    def answer(self, case_id: str, question: str) -> tuple[str, str]:
        with self.tracer.start_as_current_span("rag.answer") as root:
            root.set_attribute("ragfault.case_id", case_id)
            with self.tracer.start_as_current_span("retrieval helpdesk-kb") as span:
                found = retrieve(question)
                span.set_attribute("gen_ai.operation.name", "retrieval")
                span.set_attribute("gen_ai.data_source.id", "helpdesk-kb")
                span.set_attribute("gen_ai.retrieval.query.text", question)
                span.set_attribute("gen_ai.retrieval.top_k", TOP_K)
                span.set_attribute(
                    "gen_ai.retrieval.documents", json.dumps([{"id": i, "score": s} for i, s in found])
                )
            kept = found[:PROMPT_BUDGET]
            context = "\n".join(f"[{i}] {self.text[i]}" for i, _ in kept)
            resp = self.client.chat.completions.create(
                model="helpdesk-model",
                messages=[
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"},
                ],
            )
            return format(root.get_span_context().trace_id, "032x"), str(resp.choices[0].message.content)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, App, MeterProvider]]:
    tmp: Path = tmp_path_factory.mktemp("openai_v2")
    srv = Server(make_settings(tmp))
    resource = Resource.create({"service.name": "openai-v2-rag"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{srv.url}/v1/traces")))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{srv.url}/v1/logs"))
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{srv.url}/v1/metrics"), export_interval_millis=10**9
    )
    meter_provider = MeterProvider(metric_readers=[reader], resource=resource)
    # content capture is decided when the instrumentor starts (where the content goes, at each call)
    env = pytest.MonkeyPatch()
    env.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    env.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    instrumentor = openai_v2.OpenAIInstrumentor()
    instrumentor.instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider, meter_provider=meter_provider
    )
    kb = "\n".join(json.dumps(d) for d in KB)
    gold = "\n".join(
        json.dumps({
            "case_id": case_id, "query": q, "answerable": True, "expected_behavior": "answer", "must_retrieve": True,
            "evidence": [{"doc_id": doc, "quote": quote}],
        })
        for case_id, (q, doc, quote) in CASES.items()
    )  # fmt: skip
    assert srv.http.post("/api/v1/kb", content=kb).json() == {"loaded": len(KB), "reevaluating": 0}
    assert srv.http.post("/api/v1/gold", content=gold).json()["loaded"] == len(CASES)
    try:
        with LLMServer(model_reply) as llm:
            client = openai.OpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)
            yield srv, App(tracer_provider.get_tracer("rag-app"), client), meter_provider
    finally:
        instrumentor.uninstrument()
        env.undo()
        meter_provider.shutdown()
        logger_provider.shutdown()
        tracer_provider.shutdown()
        srv.stop()


@pytest.mark.parametrize("mode", list(MODES))
def test_three_questions_are_attributed_right(
    stack: tuple[Server, App, MeterProvider], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv, app, _ = stack
    # where the message content goes (read at each call); with no content mode set when the
    # instrumentor started it captures no message at all
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", MODES[mode])
    traces = {case_id: app.answer(case_id, q) for case_id, (q, _, _) in CASES.items()}
    wait_evaluated(srv, [t for t, _ in traces.values()])

    for case_id, (trace_id, answer) in traces.items():
        question, evidence, _ = CASES[case_id]
        found = retrieve(question)
        steps = srv.sql(
            "SELECT step_type, convention, model, input_tokens, output_tokens, top_k, data_source_id, query_text "
            "FROM steps WHERE trace_id = $t ORDER BY start_time",
            t=trace_id,
        )
        assert [s[0] for s in steps] == ["other", "retrieval", "llm"], case_id
        retrieval, llm = steps[1], steps[2]
        assert retrieval[1] == "genai" and retrieval[5:] == [TOP_K, "helpdesk-kb", question]
        assert llm[1:3] == ["genai", "helpdesk-model"] and llm[3] > 0 and llm[4] > 0
        where = "trace_id = $t AND stage = $stage ORDER BY position"
        candidates = srv.sql(
            f"SELECT doc_id, score, content_source FROM step_documents WHERE {where}",
            t=trace_id,
            stage="candidate",
        )
        assert [c[:2] for c in candidates] == [[i, s] for i, s in found]
        assert all(c[2] == "registry" for c in candidates)  # text from the knowledge base, by id
        context = srv.sql(
            f"SELECT doc_id, source FROM step_documents WHERE {where}", t=trace_id, stage="context"
        )
        assert context == [[found[0][0], "derived"]]
        row = srv.sql(
            "SELECT query_text, answer_text, root_cause FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert row == [[question, answer, EXPECTED[case_id]]], (
            mode,
            case_id,
            srv.sql(
                "SELECT metric, status, passed, details FROM evaluations WHERE trace_id = $t AND passed = false",
                t=trace_id,
            ),
        )
        if case_id == "cut":
            assert evidence in [i for i, _ in found] and evidence != found[0][0]
        if case_id == "never-retrieved":
            assert evidence not in [i for i, _ in found]
        # the cited document is in the context derived from the prompt: a valid citation
        cv = srv.sql(
            "SELECT status, passed FROM evaluations WHERE trace_id = $t AND metric = 'citation_validity'",
            t=trace_id,
        )
        assert cv == [["ok", True]], (mode, case_id)

    if mode == "log-events":  # the messages came as log records joined to the chat span
        trace_ids = [t for t, _ in traces.values()]
        rows = srv.sql(
            "SELECT count(*), count(DISTINCT l.span_id) FROM log_records l JOIN steps s USING (trace_id, span_id) "
            "WHERE list_contains($ids, l.trace_id) AND s.step_type = 'llm' "
            "AND l.event_name = 'gen_ai.client.inference.operation.details'",
            ids=trace_ids,
        )
        assert rows == [[3, 3]]
        assert (
            srv.scalar(
                "SELECT count(*) FROM spans WHERE list_contains($ids, trace_id) AND attributes LIKE '%gen_ai.input.messages%'",
                ids=trace_ids,
            )
            == 0
        )


def test_token_usage_and_duration_metrics_are_queryable(stack: tuple[Server, App, MeterProvider]) -> None:
    srv, app, meter_provider = stack
    app.answer("in-prompt", CASES["in-prompt"][0])
    assert meter_provider.force_flush(10_000)
    rows = srv.sql(
        "SELECT attributes->>'$.\"gen_ai.token.type\"' AS t, sum(count) > 0, bool_and(unit = '{token}') "
        "FROM metric_points WHERE name = 'gen_ai.client.token.usage' AND service_name = 'openai-v2-rag' "
        "GROUP BY t ORDER BY t"
    )
    assert rows == [["input", True, True], ["output", True, True]]
    assert (
        srv.scalar(
            "SELECT max(count) FROM metric_points WHERE name = 'gen_ai.client.operation.duration' AND unit = 's'"
        )
        >= 1
    )
    # the tokens the metric counts are the ones the spans report, for the same model calls
    spans_input = srv.scalar(
        "SELECT sum(input_tokens) FROM steps WHERE step_type = 'llm' AND service_name = 'openai-v2-rag'"
    )
    metric_input = srv.scalar(
        "SELECT max(sum) FROM metric_points WHERE name = 'gen_ai.client.token.usage' "
        "AND (attributes->>'$.\"gen_ai.token.type\"') = 'input'"
    )
    assert metric_input == spans_input
