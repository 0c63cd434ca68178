"""LlamaIndex with OpenLLMetry's ``opentelemetry-instrumentation-llamaindex``, offline: a vector index
over a bag-of-words embedding, a node postprocessor keeping what fits the prompt, and a chat LLM
calling the local chat server.

Every LlamaIndex call is a Traceloop ``task``: the retriever's output is a list of ``NodeWithScore``
JSON strings (read as a retrieval with candidates; the ``_retrieve`` span inside ``retrieve`` reports
the same nodes and is read without them, so they count once), the postprocessor's nodes in and out
are a rerank, and the model call carries GenAI messages without ``llm.request.type`` (an LLM step).
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import run_app
from tests.frameworks.expect import CANDIDATES, check_question

pytestmark = pytest.mark.instrumentors


def test_llamaindex_openllmetry(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "llamaindex_app")
    for key in run.trace_ids:
        steps = run.steps(key)
        types = [s["step_type"] for s in steps]
        assert {s["convention"] for s in steps} == {"traceloop"}
        assert "retrieval" in types and "rerank" in types and "llm" in types, steps
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert any(s["model"] == "local-model" and s["input_text"] for s in llms), llms
        # the retrieval's candidates carry the node UUID as chunk id, the source id from metadata
        chunks = run.rows(
            "SELECT DISTINCT doc_id, chunk_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=run.trace_ids[key],
        )
        assert all(r["chunk_id"] and r["chunk_id"] != r["doc_id"] for r in chunks), chunks
        # LlamaIndex's retriever span nests a second one (retrieve -> _retrieve) with the same nodes:
        # the outer one holds the candidates, the inner one none, so they are counted once
        retrievals = [s for s in steps if s["step_type"] == "retrieval"]
        assert len(retrievals) == 2 and retrievals[1]["parent_span_id"] == retrievals[0]["span_id"], steps
        per_span = run.rows(
            "SELECT span_id, list(doc_id ORDER BY position) AS ids FROM step_documents "
            "WHERE trace_id = $t AND stage = 'candidate' GROUP BY span_id",
            t=run.trace_ids[key],
        )
        assert [r["span_id"] for r in per_span] == [retrievals[0]["span_id"]], per_span
        assert len(per_span[0]["ids"]) == scenario.TOP_K, per_span
        counted = run.rows(
            "SELECT metric, value FROM evaluations WHERE trace_id = $t AND span_id IS NULL "
            "AND metric IN ('retrieval_calls', 'duplicate_candidates') ORDER BY metric",
            t=run.trace_ids[key],
        )
        assert counted == [
            {"metric": "duplicate_candidates", "value": 0.0},
            {"metric": "retrieval_calls", "value": 1.0},
        ], counted
        # the vector ranking puts the evidence where the keyword one does (first; a candidate; absent)
        assert sorted(per_span[0]["ids"]) == sorted(CANDIDATES[key]) or key == "ok", per_span
        # the postprocessor received every candidate and kept the first
        assert run.doc_ids(key, "rerank_input") == per_span[0]["ids"]
        assert run.doc_ids(key, "reranked") == per_span[0]["ids"][:1]
        check_question(run, key, candidates=per_span[0]["ids"])
