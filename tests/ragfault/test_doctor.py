"""``ragfault doctor`` and ``GET /api/v1/coverage`` on traces of the conventions the suite runs:
LlamaIndex with OpenInference, LangChain with OpenLLMetry (real instrumentors, offline) and
hand-built GenAI semconv spans. Each names a gap and its fix; the test applies the fix and the gap
closes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from tests.collector.test_instrumentors import KB, BagOfWordsEmbedding, Capture, _msgs
from tests.conftest import Server

pytestmark = pytest.mark.instrumentors

ROOT = Path(__file__).resolve().parents[2]


def coverage(server: Server, **params: Any) -> dict[str, Any]:
    r = server.http.get("/api/v1/coverage", params={k: v for k, v in params.items() if v is not None})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def group(rep: dict[str, Any], service: str) -> dict[str, Any]:
    found = [g for g in rep["groups"] if g["service_name"] == service]
    assert len(found) == 1, rep
    return found[0]


def field(g: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in g["fields"] if f["field"] == name)


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "doctor", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def now() -> str:
    return datetime.now(UTC).replace(tzinfo=None).isoformat()


class Sent(Capture):
    """A capture that waits for the traces sent since the last wait (one provider for both rounds:
    an instrumentor instruments once per process)."""

    def __init__(self, server: Server, service: str) -> None:
        super().__init__(server, service)
        self.seen: set[str] = set()

    def wait_new(self) -> None:
        self.provider.force_flush()
        spans = self.memory.get_finished_spans()
        new = self.trace_ids() - self.seen
        assert len(new) == 1, new
        for t in new:
            n = sum(1 for s in spans if format(s.context.trace_id, "032x") == t)
            self.server.wait_for("SELECT count(*) FROM spans WHERE trace_id = $t", n, t=t)
        self.seen |= new
        self.server.settle()


# --- the three apps ---------------------------------------------------------------------------


@pytest.fixture
def llama_index_app(server: Server) -> Iterator[tuple[Sent, Any]]:
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    docs = [
        Document(text=text, doc_id=doc_id, metadata={"file_name": f"{doc_id}.md"})
        for doc_id, text in KB.items()
    ]
    index = VectorStoreIndex.from_documents(docs, embed_model=BagOfWordsEmbedding())
    sent = Sent(server, "llamaindex-app")
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=sent.provider)
    try:
        yield sent, index.as_query_engine(llm=MockLLM(max_tokens=6), similarity_top_k=3)
    finally:
        instrumentor.uninstrument()
        sent.provider.shutdown()


def llama_index_query(app: tuple[Sent, Any], case_id: str | None) -> None:
    from openinference.instrumentation import using_attributes

    sent, engine = app
    metadata = {"ragfault.case_id": case_id} if case_id else {}
    with using_attributes(metadata=metadata):
        engine.query("Are gift cards eligible for refunds after delivery?")
    sent.wait_new()


def langchain_chain(server: Server, case_id: str | None) -> None:
    """The LangChain app (``doctor_apps``) in its own process; waits until its trace is stored."""
    args = [sys.executable, "-m", "tests.ragfault.doctor_apps", server.url, "langchain-app"]
    p = subprocess.run(
        [*args, case_id] if case_id else args, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    trace_id, spans = p.stdout.split()
    server.wait_for("SELECT count(*) FROM spans WHERE trace_id = $t", int(spans), t=trace_id)
    server.settle()


def genai_agent(tracer: Tracer, with_content: bool) -> None:
    """Hand-built GenAI spans as the spec's minimum writes them: documents ``{id, score}``, and, in
    the default content mode, no message content on the chat span."""
    question = "How long is the warranty on hardware?"
    with tracer.start_as_current_span("invoke_agent support") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "ragfault.case_id": "case-genai"})
        with tracer.start_as_current_span("retrieval kb") as ret:
            docs = [{"id": "warranty", "score": 0.9}, {"id": "shipping", "score": 0.3}]
            if with_content:
                for d in docs:
                    d["content"] = KB[str(d["id"])]
            ret.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": question,
                    "gen_ai.retrieval.documents": json.dumps(docs),
                }
            )
        with tracer.start_as_current_span("chat gpt-test") as chat:
            attrs: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-test",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 9,
            }
            if with_content:
                attrs["gen_ai.input.messages"] = _msgs(
                    ("user", [{"type": "text", "content": KB["warranty"] + "\n" + question}])
                )
                attrs["gen_ai.output.messages"] = _msgs(
                    ("assistant", [{"type": "text", "content": "Hardware has a two year warranty."}])
                )
            chat.set_attributes(attrs)


def test_doctor_names_gaps_and_the_fixes_close_them(
    server: Server, llama_index_app: tuple[Sent, Any]
) -> None:
    # round 1: as a new user sends them, without the case id, GenAI in its default content mode
    llama_index_query(llama_index_app, None)
    langchain_chain(server, None)
    genai = Sent(server, "genai-app")
    genai_agent(genai.provider.get_tracer("genai"), with_content=False)
    genai.wait_new()

    rep = coverage(server)
    li, lc, ga = (group(rep, s) for s in ("llamaindex-app", "langchain-app", "genai-app"))
    assert (li["convention"], lc["convention"], ga["convention"]) == ("openinference", "traceloop", "genai")
    assert li["traces"] == lc["traces"] == ga["traces"] == 1
    # the instrumented frameworks carry query, candidates with ids and text, the prompt, the answer
    for g in (li, lc):
        for name in (
            "query",
            "retrieval",
            "candidate_ids",
            "candidate_text",
            "answer_llm_input",
            "context",
            "answer",
        ):
            assert field(g, name)["status"] == "ok", (g["service_name"], field(g, name))
        assert "case_id" in g["gaps"]
        assert field(g, "rerank_input")["status"] == "not_applicable"  # no reranker: not asked for
        assert field(g, "rerank_input")["share"] is None and field(g, "rerank_input")["denominator"] == 0
    assert "using_attributes(metadata={'ragfault.case_id'" in field(li, "case_id")["fix"]
    assert "Traceloop.set_association_properties" in field(lc, "case_id")["fix"]
    # GenAI: the case id is there; no document text, no model input or output
    assert field(ga, "case_id")["status"] == "ok"
    assert set(ga["gaps"]) >= {"candidate_text", "answer_llm_input", "answer", "context"}
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in field(ga, "answer_llm_input")["fix"]
    assert "ragfault load kb" in field(ga, "candidate_text")["fix"]
    assert (field(ga, "candidate_text")["carried"], field(ga, "candidate_text")["denominator"]) == (0, 1)

    # the CLI through the server says the same
    p = doctor("--server", server.url)
    assert p.returncode == 0, p.stderr
    assert "== llamaindex-app · openinference · 1 traces ==" in p.stdout
    assert "GAP case_id" in p.stdout and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in p.stdout

    # fix 1: load the documents into the registry: the GenAI ids now resolve to text
    kb = "\n".join(json.dumps({"doc_id": k, "content": v}) for k, v in KB.items())
    assert server.http.post("/api/v1/kb", content=kb.encode()).json()["loaded"] == len(KB)
    assert field(group(coverage(server), "genai-app"), "candidate_text")["status"] == "ok"

    # round 2: each app with the fix its gap named
    since = now()
    llama_index_query(llama_index_app, "case-li")
    langchain_chain(server, "case-lc")
    genai_agent(genai.provider.get_tracer("genai"), with_content=True)
    genai.wait_new()
    genai.provider.shutdown()
    rep = coverage(server, since=since)
    for service in ("llamaindex-app", "langchain-app", "genai-app"):
        g = group(rep, service)
        assert g["traces"] == 1
        assert field(g, "case_id")["status"] == "ok", g
    ga = group(rep, "genai-app")
    for name in ("answer_llm_input", "answer", "context", "candidate_text"):
        assert field(ga, name)["status"] == "ok", field(ga, name)
    assert rep["params"]["since"] is not None
    # over every trace, both rounds count: the denominator is stated
    case = field(group(coverage(server), "llamaindex-app"), "case_id")
    assert (case["carried"], case["denominator"], case["share"]) == (1, 2, 0.5)

    # the CLI on the file, read-only, once no server owns it
    server.stop()
    p = doctor("--db", server.settings.db, "--server", "http://127.0.0.1:9", "--format", "json")
    assert p.returncode == 0, p.stderr
    local = json.loads(p.stdout)
    assert {g["service_name"] for g in local["groups"]} == {"llamaindex-app", "langchain-app", "genai-app"}
    assert field(group(local, "llamaindex-app"), "case_id")["carried"] == 1


def test_coverage_of_an_empty_store(server: Server) -> None:
    assert coverage(server) == {"params": {"service": None, "since": None}, "groups": [], "services": []}
    assert server.http.get("/api/v1/coverage", params={"since": "yesterday"}).status_code == 400
