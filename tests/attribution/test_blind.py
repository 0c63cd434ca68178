"""Unknown is not empty (docs/architecture.md, Conventions and readers): a retrieval whose output was
not recorded, and an answering call whose input was not, through a real server and real OTLP exports.

- A retrieval step that recorded neither documents nor an output value is no empty retrieval: no
  ``candidate_miss`` and no recall of 0 from it, but ``insufficient_trace`` naming
  ``retrieval_output``. A recorded empty retrieval (``output.value`` ``[]``, GenAI
  ``gen_ai.retrieval.documents`` ``[]``) still misses the evidence.
- A refusal whose answering call's input is unknown is not ``over_refusal``: nothing shows what
  the model saw.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import CONTENT, EN_OK, GOLD, KB, QUERY, jsonl
from tests.attribution.test_insufficient import reasons, row
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import prompt_for

CASE = "en-retry"  # evidence retry-v2 ("Wait 30 seconds before retrying")
REFUSAL = "I don't know. Please contact the support team."


def _oi_retrieval(docs: list[str] | None, output: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": QUERY[CASE]}
    for i, doc_id in enumerate(docs or []):
        attrs[f"retrieval.documents.{i}.document.id"] = doc_id
        attrs[f"retrieval.documents.{i}.document.content"] = CONTENT[doc_id]
    if output is not None:
        attrs["output.value"] = output
    return attrs


def _genai_retrieval(documents: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": QUERY[CASE]}
    if documents is not None:
        attrs["gen_ai.retrieval.documents"] = documents
    return attrs


def emit(
    tracer: Tracer,
    retrievals: list[dict[str, Any]],
    *,
    prompt_docs: tuple[str, ...] = ("retry-v2",),
    prompt: bool = True,
    answer: str = EN_OK,
) -> str:
    """A RAG trace: the given retrieval spans, then the answering LLM call (its prompt holding
    ``prompt_docs``, or no input at all), the root carrying the query and the answer."""
    root = {"openinference.span.kind": "CHAIN", "input.value": QUERY[CASE], "ragfault.case_id": CASE}
    with tracer.start_as_current_span("rag.request", attributes={**root, "output.value": answer}) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        for i, attrs in enumerate(retrievals):
            with tracer.start_as_current_span(f"retrieve.{i}", attributes=attrs):
                pass
        llm: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "mock-model"}
        if prompt:
            llm["llm.input_messages.0.message.role"] = "user"
            llm["llm.input_messages.0.message.content"] = prompt_for(
                QUERY[CASE], [{"content": CONTENT[d]} for d in prompt_docs]
            )
        llm["llm.output_messages.0.message.role"] = "assistant"
        llm["llm.output_messages.0.message.content"] = answer
        with tracer.start_as_current_span("llm", attributes=llm):
            pass
    return trace_id


SCENARIOS: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    # content tracing off: the retriever ran, its documents were not recorded
    "oi-unrecorded": ([_oi_retrieval(None, None)], {}),
    "genai-unrecorded": ([_genai_retrieval(None)], {}),
    # recorded, and empty: the evidence was never retrieved
    "oi-empty": ([_oi_retrieval(None, "[]")], {"prompt_docs": ()}),
    "genai-empty": ([_genai_retrieval("[]")], {"prompt_docs": ()}),
    # one retrieval recorded the evidence, another recorded nothing: nothing is unknown that matters
    "found-elsewhere": ([_oi_retrieval(["retry-v2"], None), _oi_retrieval(None, None)], {}),
    # the recorded retrieval missed the evidence the prompt holds; the other's output is unknown
    "missed-by-recorded": (
        [_oi_retrieval(["export-v2"], None), _oi_retrieval(None, None)],
        {"prompt_docs": ("export-v2", "retry-v2")},
    ),
    # a refusal with the evidence retrieved, and the answering call's input unknown
    "refusal-prompt-unknown": ([_oi_retrieval(["retry-v2"], None)], {"prompt": False, "answer": REFUSAL}),
    # the same refusal with the prompt recorded: a real over-refusal
    "refusal-prompt-known": ([_oi_retrieval(["retry-v2"], None)], {"answer": REFUSAL}),
}


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    for srv in serve(tmp_path_factory.mktemp("blind")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("blind")
        ids = {name: emit(tracer, spans, **kw) for name, (spans, kw) in SCENARIOS.items()}
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, ids


def _step_rows(server: Server, trace_id: str) -> dict[str, list[tuple[str, str, float | None, str | None]]]:
    """Per retrieval span name, its retrieval evaluator's rows (metric, status, value, reason)."""
    rows = server.sql(
        "SELECT s.name, e.metric, e.status, e.value, e.reason FROM evaluations e JOIN steps s "
        "ON s.trace_id = e.trace_id AND s.span_id = e.span_id WHERE e.trace_id = $t AND e.evaluator = 'retrieval'",
        t=trace_id,
    )
    out: dict[str, list[tuple[str, str, float | None, str | None]]] = {}
    for name, metric, status, value, why in rows:
        out.setdefault(name, []).append((metric, status, value, why))
    return out


@pytest.mark.parametrize("name", ["oi-unrecorded", "genai-unrecorded"])
def test_an_unrecorded_retrieval_is_not_a_miss(traced: tuple[Server, dict[str, str]], name: str) -> None:
    server, ids = traced
    r = row(server, ids[name])
    assert r["root_cause"] == "insufficient_trace", r
    assert r["failing_layers"] == ["insufficient_trace"], r
    assert r["missing_fields"] == ["retrieval_output"], r
    why = r["evidence"]["insufficient_trace"]
    assert why["unchecked_layers"] == {
        "retrieval_output": ["candidate_miss", "dropped_before_context", "invalid_citation"]
    }
    assert "retrieve.0" in why["why"]["retrieval_output"], why
    got = reasons(server, ids[name])
    assert got["candidate_recall"].startswith("missing retrieval_output"), got
    assert got["recall@5"].startswith("missing retrieval_output"), got
    # the step's own rows: every one not applicable, none a 0
    (step,) = _step_rows(server, ids[name]).values()
    assert {s for _, s, _, _ in step} == {"not_applicable"}, step
    assert all(v is None and (w or "").startswith("missing retrieval_output") for _, _, v, w in step), step


@pytest.mark.parametrize("name", ["oi-empty", "genai-empty"])
def test_a_recorded_empty_retrieval_misses(traced: tuple[Server, dict[str, str]], name: str) -> None:
    server, ids = traced
    r = row(server, ids[name])
    assert r["root_cause"] == "candidate_miss", r
    assert "retrieval_output" not in r["missing_fields"], r
    (step,) = _step_rows(server, ids[name]).values()
    recall = [(s, v) for m, s, v, _ in step if m == "recall@5"]
    assert recall == [("ok", 0.0)], step


def test_evidence_found_by_a_recorded_retrieval_is_enough(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    r = row(server, ids["found-elsewhere"])
    assert r["root_cause"] == "ok" and r["missing_fields"] == [], r
    steps = _step_rows(server, ids["found-elsewhere"])
    assert [(s, v) for m, s, v, _ in steps["retrieve.0"] if m == "recall@5"] == [("ok", 1.0)], steps
    assert {s for _, s, _, _ in steps["retrieve.1"]} == {"not_applicable"}, steps
    # the mean over steps counts the recorded step only
    (mrr,) = server.sql(
        "SELECT status, value, denominator FROM evaluations WHERE trace_id = $t AND metric = 'mrr' "
        "AND span_id IS NULL",
        t=ids["found-elsewhere"],
    )
    assert list(mrr) == ["ok", 1.0, 1.0], mrr


def test_a_miss_beside_an_unrecorded_retrieval_is_unknown(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    r = row(server, ids["missed-by-recorded"])
    assert r["root_cause"] == "insufficient_trace", r
    assert r["missing_fields"] == ["retrieval_output"], r
    assert "candidate_miss" not in r["failing_layers"], r


def test_a_refusal_with_an_unknown_prompt_is_not_over_refusal(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    blind = row(server, ids["refusal-prompt-unknown"])
    assert "over_refusal" not in blind["failing_layers"], blind
    assert blind["root_cause"] == "insufficient_trace", blind
    assert blind["missing_fields"] == ["answer_llm_input"], blind
    seen = row(server, ids["refusal-prompt-known"])
    assert seen["root_cause"] == "over_refusal", seen
