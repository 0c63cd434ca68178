"""Convention-blind (issue 40): every planted root cause, sent in a vendor's own namespace that no
convention reader knows (``acme.*``), through a real server and real OTLP exports.

The structural layer reads them by shape alone: the root's plain ``input`` / ``output``, a document
list under any key (the search and the reranker), or flattened one field per key
(``acme.search.results.0.text``), a message list in and text out (the model call). Where the payloads
allow it, every root cause comes out as with a known convention. Where they do not (the search
results written as one formatted text, so no document list exists), the trace is
``insufficient_trace`` naming what it lacks: never ``ok`` and never a layer it cannot show.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import GOLD, KB, PLANTS, QUERY, Plant, docs, jsonl
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import prompt_for

LANGS = ("en", "zh")


def emit(tracer: Tracer, plant: Plant, *, layout: str = "list") -> str:
    """One RAG trace of ``plant`` in the ``acme`` namespace. ``layout``: the search results as a JSON
    list (``list``), as one attribute per field (``flattened``: ``acme.search.results.0.text``), or as
    one formatted text (``text``: ``[1] policy: ...``), which holds no document list."""
    case_id, cands, reranked, answer, citations, retrieve = plant
    query = QUERY[case_id]
    candidates, kept = docs(cands), docs(reranked) if reranked is not None else None
    context = (kept if kept is not None else candidates) if retrieve else []
    root = {"acme.input": query, "acme.output": answer, "ragfault.case_id": case_id}
    with tracer.start_as_current_span("acme.request", attributes=root) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        if retrieve:
            search: dict[str, Any] = {"acme.search.query": query}
            if layout == "flattened":
                for i, d in enumerate(candidates):
                    search[f"acme.search.results.{i}.id"] = d["id"]
                    search[f"acme.search.results.{i}.text"] = d["content"]
            elif layout == "text":
                search["acme.search.results"] = "\n".join(
                    f"[{i + 1}] {d['id']}: {d['content']}" for i, d in enumerate(candidates)
                )
            else:
                search["acme.search.results"] = json.dumps(
                    [{"id": d["id"], "text": d["content"], "score": d["score"]} for d in candidates],
                    ensure_ascii=False,
                )
            with tracer.start_as_current_span("acme.search", attributes=search):
                pass
            if kept is not None:
                rerank = {
                    "acme.rerank.candidates": json.dumps(candidates, ensure_ascii=False),
                    "acme.rerank.results": json.dumps(kept, ensure_ascii=False),
                }
                with tracer.start_as_current_span("acme.rerank", attributes=rerank):
                    pass
        llm: dict[str, Any] = {
            "acme.llm.request": json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": prompt_for(query, context)}]},
                ensure_ascii=False,
            ),
            "acme.llm.response": answer,
        }
        if citations:
            llm["ragfault.answer.citations"] = list(citations)
        with tracer.start_as_current_span("acme.generate", attributes=llm):
            pass
    return trace_id


FLATTENED = {
    "flattened-ok": "ok",
    "flattened-miss": "candidate_miss",
    "flattened-dropped": "dropped_before_context",
}
BLIND = {"text-ok": "ok", "text-miss": "candidate_miss"}


@pytest.fixture(scope="module")
def blind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    for srv in serve(tmp_path_factory.mktemp("convention-blind")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("convention-blind")
        ids = {
            f"{lang}/{cause}": emit(tracer, plant) for lang in LANGS for cause, plant in PLANTS[lang].items()
        }
        ids.update(
            {name: emit(tracer, PLANTS["en"][cause], layout="flattened") for name, cause in FLATTENED.items()}
        )
        ids.update({name: emit(tracer, PLANTS["en"][cause], layout="text") for name, cause in BLIND.items()})
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, ids


def _row(server: Server, trace_id: str) -> tuple[str, list[str], list[str]]:
    rows = server.sql(
        "SELECT root_cause, failing_layers, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
    )
    assert len(rows) == 1, f"no attribution row for {trace_id} (no query found?): {rows}"
    root, layers, missing = rows[0]
    return root, list(layers), list(missing)


@pytest.mark.parametrize("key", [f"{lang}/{cause}" for lang in LANGS for cause in PLANTS[lang]])
def test_every_root_cause_is_read_by_shape(blind: tuple[Server, dict[str, str]], key: str) -> None:
    server, ids = blind
    steps = server.sql(
        "SELECT name, step_type, convention FROM steps WHERE trace_id = $t ORDER BY start_time", t=ids[key]
    )
    assert {c for _, _, c in steps} == {"structural"}, steps  # no convention reader read any of it
    types = {n: t for n, t, _ in steps}
    assert types["acme.generate"] == "llm" and types.get("acme.search", "retrieval") == "retrieval", steps
    root, layers, _ = _row(server, ids[key])
    assert root == key.split("/", 1)[1], (root, layers)


@pytest.mark.parametrize("name", list(FLATTENED))
def test_flattened_results_are_read_as_the_list_they_flatten(
    blind: tuple[Server, dict[str, str]], name: str
) -> None:
    server, ids = blind
    root, layers, _ = _row(server, ids[name])
    assert root == FLATTENED[name], (root, layers)


@pytest.mark.parametrize("name", list(BLIND))
def test_what_the_payloads_do_not_show_is_insufficient_never_ok(
    blind: tuple[Server, dict[str, str]], name: str
) -> None:
    server, ids = blind
    root, layers, missing = _row(server, ids[name])
    assert root == "insufficient_trace", (root, layers, missing)
    assert "retrieval_step" in missing, missing
