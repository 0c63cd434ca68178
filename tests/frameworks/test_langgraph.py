"""LangGraph, offline (its own environment), with each of LangChain's instrumentations: OpenLLMetry's
``opentelemetry-instrumentation-langchain`` and OpenInference's ``openinference-instrumentation-
langchain``; two apps each (see ``apps/langgraph_app.py``):

- ``graph``: nodes ``retrieve`` -> ``fit_budget`` -> ``generate`` over a state holding LangChain
  ``Document`` objects. A node whose output *is* a document list retrieved it; one given documents
  and returning documents cut them (a rerank), so the budget's cut is named; the graph's own span,
  whose final state holds the documents beside the question and the answer, retrieved nothing, and
  its answer is the state's ``answer``, not its ``question``.
- ``agent``: the prebuilt ReAct agent with a tool whose response is content (the first ``BUDGET``
  documents as text, for the model) and artifact (the ``TOP_K`` documents). The messages LangChain
  serializes (``{"lc", "type": "constructor", "kwargs"}``, ``{"type": "human", "data"}``, a
  ``("user", text)`` pair) are messages, never documents; the artifact is the candidates.

A LangChain ``Document`` has no score of its own: the app keeps each one's in its ``metadata``
(``score``), as vector stores do, and that is the candidate's score.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors


def keyword_scores(key: str) -> list[float]:
    """The scores the app's keyword ranking gives the question's candidates (in their metadata)."""
    q = set(scenario.words(scenario.QUESTIONS[key]))
    content = {d["doc_id"]: d["content"] for d in scenario.KB}
    return [float(sum(w in q for w in scenario.words(content[d]))) for d in KEYWORD_CANDIDATES[key]]


@pytest.mark.parametrize("mode", ["graph", "agent"])
@pytest.mark.parametrize("instrumentation", ["openllmetry", "openinference"])
def test_langgraph(rf: Server, chat: ChatServer, instrumentation: str, mode: str) -> None:
    run = run_app(rf, chat, "langgraph_app", instrumentation, mode, group="langgraph")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        holders = run.rows(
            "SELECT span_id, list(doc_id ORDER BY position) AS ids FROM step_documents "
            "WHERE trace_id = $t AND stage = 'candidate' GROUP BY span_id",
            t=trace_id,
        )
        # one step holds the candidates, in rank order: the retrieve node, or the agent's tool
        assert [r["ids"] for r in holders] == [KEYWORD_CANDIDATES[key]], info
        scores = run.rows(
            "SELECT list(score ORDER BY position) AS s FROM step_documents WHERE trace_id = $t AND span_id = $s "
            "AND stage = 'candidate'",
            t=trace_id,
            s=holders[0]["span_id"],
        )
        assert scores == [{"s": keyword_scores(key)}], info  # from each Document's metadata
        (holder,) = [s for s in steps if s["span_id"] == holders[0]["span_id"]]
        if mode == "graph":
            assert (holder["step_type"], holder["name"].split()[-1]) == ("retrieval", "retrieve"), info
            (cut,) = [s for s in steps if s["step_type"] == "rerank"]
            assert cut["name"].split()[-1] == "fit_budget", info
            assert run.doc_ids(key, "rerank_input") == KEYWORD_CANDIDATES[key], info
            assert run.doc_ids(key, "reranked") == KEYWORD_CANDIDATES[key][:1], info
        else:
            assert (holder["step_type"], holder["tool_name"]) == ("tool", "search_kb"), info
            # no message list was read as documents anywhere
            assert run.doc_ids(key, "rerank_input") == [] and run.doc_ids(key, "reranked") == [], info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)
