"""A trace that cannot tell is never ``ok``: ``insufficient_trace`` and the missing fields it names,
through a real server and real OTLP exports (docs/architecture.md, Attribution order: insufficient_trace)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import CONTENT, EN_OK, GOLD, KB, QUERY, jsonl
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import prompt_for

CASE = "en-retry"  # must retrieve; evidence retry-v2 with a quote; the answer "Wait 30 seconds ..."


def _oi_docs(prefix: str, docs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, d in enumerate(docs):
        for key in ("id", "content"):
            if d.get(key) is not None:
                out[f"{prefix}.{i}.document.{key}"] = d[key]
    return out


def emit(
    tracer: Tracer,
    *,
    case_id: str = CASE,
    retrieve: bool = True,
    candidates: list[dict[str, Any]] | None = None,
    prompt: bool = True,
    answer: str | None = EN_OK,
) -> str:
    """An OpenInference RAG trace with parts left out: the retrieval step, the answering LLM's input,
    the answer (neither the root nor the LLM carries one)."""
    query = QUERY[case_id]
    if candidates is None:
        candidates = [{"id": "retry-v2", "content": CONTENT["retry-v2"]}]
    root: dict[str, Any] = {
        "openinference.span.kind": "CHAIN",
        "input.value": query,
        "ragfault.case_id": case_id,
    }
    if answer is not None:
        root["output.value"] = answer
    with tracer.start_as_current_span("rag.request", attributes=root) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        if retrieve:
            attrs = {"openinference.span.kind": "RETRIEVER", "input.value": query}
            attrs.update(_oi_docs("retrieval.documents", candidates))
            with tracer.start_as_current_span("retrieve", attributes=attrs):
                pass
        llm: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "mock-model"}
        if prompt:
            text = prompt_for(query, [{"content": CONTENT["retry-v2"]}])
            llm["llm.input_messages.0.message.role"] = "user"
            llm["llm.input_messages.0.message.content"] = text
        if answer is not None:
            llm["llm.output_messages.0.message.role"] = "assistant"
            llm["llm.output_messages.0.message.content"] = answer
        with tracer.start_as_current_span("llm", attributes=llm):
            pass
    return trace_id


def chunk(doc_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"chunk/{doc_id}/0"))


SCENARIOS: dict[str, dict[str, Any]] = {
    "complete": {},
    "no-answer": {"answer": None},
    "no-llm-input": {"prompt": False},
    "untraced-retrieval": {"retrieve": False},
    # GenAI-spec-like documents: chunk ids the registry does not know, no text
    "opaque-documents": {"candidates": [{"id": chunk("retry-v2")}, {"id": chunk("export-v2")}]},
    # a real failure comes first: a forbidden document among the candidates, and no answer
    "forbidden-no-answer": {
        "answer": None,
        "candidates": [
            {"id": "retry-v2", "content": CONTENT["retry-v2"]},
            {"id": "salary-bands", "content": CONTENT["salary-bands"]},
        ],
    },
}


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    for srv in serve(tmp_path_factory.mktemp("insufficient")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("insufficient")
        ids = {name: emit(tracer, **kwargs) for name, kwargs in SCENARIOS.items()}
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, ids


def row(server: Server, trace_id: str) -> dict[str, Any]:
    rows = server.sql(
        "SELECT root_cause, failing_layers, missing_fields, evidence FROM attribution WHERE trace_id = $t",
        t=trace_id,
    )
    assert len(rows) == 1, rows
    root, layers, missing, evidence = rows[0]
    return {
        "root_cause": root,
        "failing_layers": layers,
        "missing_fields": missing,
        "evidence": json.loads(evidence),
    }


def reasons(server: Server, trace_id: str) -> dict[str, str]:
    rows = server.sql(
        "SELECT metric, reason FROM evaluations WHERE trace_id = $t AND status = 'not_applicable' "
        "AND reason LIKE 'missing %'",
        t=trace_id,
    )
    return dict((m, r) for m, r in rows)


def test_a_complete_trace_is_ok(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    assert row(server, ids["complete"]) == {
        "root_cause": "ok",
        "failing_layers": [],
        "missing_fields": [],
        "evidence": {},
    }
    assert reasons(server, ids["complete"]) == {}


def test_no_answer_is_insufficient_not_ok(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    r = row(server, ids["no-answer"])
    assert (r["root_cause"], r["failing_layers"], r["missing_fields"]) == (
        "insufficient_trace",
        ["insufficient_trace"],
        ["answer"],
    )
    ev = r["evidence"]["insufficient_trace"]
    assert "unsupported_claims" in ev["unchecked_layers"]["answer"]
    # the rows the missing answer made not applicable say so
    got = reasons(server, ids["no-answer"])
    for metric in ("answer_support", "refusal", "answerability", "fact_coverage", "facts_missing_in_context"):
        assert got[metric].startswith("missing answer: "), (metric, got)


def test_no_llm_input_is_insufficient_not_ok(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    r = row(server, ids["no-llm-input"])
    assert (r["root_cause"], r["missing_fields"]) == ("insufficient_trace", ["answer_llm_input"])
    got = reasons(server, ids["no-llm-input"])
    assert got["context_recall"].startswith("missing answer_llm_input: no context stage")
    assert got["context_retention"].startswith("missing answer_llm_input: ")
    # nothing was derived: no context rows
    assert (
        server.scalar(
            "SELECT count(*) FROM step_documents WHERE trace_id = $t AND stage = 'context'",
            t=ids["no-llm-input"],
        )
        == 0
    )


def test_untraced_retrieval_is_not_no_retrieval(traced: tuple[Server, dict[str, str]]) -> None:
    """The case must retrieve and no retrieval step was traced, but the answering LLM's prompt holds
    the evidence: the app retrieved without tracing it. Neither no_retrieval nor candidate_miss."""
    server, ids = traced
    r = row(server, ids["untraced-retrieval"])
    assert (r["root_cause"], r["failing_layers"], r["missing_fields"]) == (
        "insufficient_trace",
        ["insufficient_trace"],
        ["retrieval_step"],
    )
    got = reasons(server, ids["untraced-retrieval"])
    assert got["candidate_recall"].startswith("missing retrieval_step: ")
    assert got["retrieval_decision"].startswith("missing retrieval_step: ")
    label = server.scalar(
        "SELECT label FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_decision'",
        t=ids["untraced-retrieval"],
    )
    assert label == "must_retrieve×untraced"


def test_documents_without_text_or_registry_entry(traced: tuple[Server, dict[str, str]]) -> None:
    """Chunk ids the registry does not know and no text: whether the evidence was among them cannot
    be told, so it is no candidate_miss."""
    server, ids = traced
    r = row(server, ids["opaque-documents"])
    assert (r["root_cause"], r["missing_fields"]) == ("insufficient_trace", ["document_text"])
    assert "2 of 2 candidates" in r["evidence"]["insufficient_trace"]["why"]["document_text"]
    assert reasons(server, ids["opaque-documents"])["candidate_recall"].startswith("missing document_text: ")


def test_a_real_failure_comes_first(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    r = row(server, ids["forbidden-no-answer"])
    assert r["root_cause"] == "permission_violation"
    assert r["failing_layers"] == ["permission_violation", "insufficient_trace"]
    assert r["missing_fields"] == ["answer"]
