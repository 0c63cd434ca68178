"""The Traceloop SDK's decorators (``traceloop-sdk``), offline, in their own environment (the SDK's
declared requirements do not resolve beside the test extra; ``requirements/traceloop.txt`` says why):
``Traceloop.init`` pointed at ragfault as its API endpoint, the OpenAI instrumentation enabled, the
model called through the openai SDK.

- ``workflow``: a ``@workflow`` with association properties, a ``@task`` returning passages (a
  dataclass, which the SDK writes as objects) — a retrieval —, a ``@task`` given those passages and
  returning the ones that fit the prompt — a rerank —, then the chat completion;
- ``agent``: an ``@agent`` whose ``@tool`` returns the documents it found (the tool's candidates);
  the prompt's context is derived from the answering call's input; ``ragfault.case_id`` as an
  association property names the gold case.

Inputs arrive wrapped as ``{"args": [...], "kwargs": {...}}``: the query is read from inside.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, dump, run_app
from tests.frameworks.expect import CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors

# the apps' keyword ranking breaks ties by knowledge-base order (BM25 puts berlin-delivery first)
RANKED = {**CANDIDATES, "miss": ["berlin-pickup", "berlin-delivery", "warranty-claims"]}


def session_of(run: Run, trace_id: str) -> dict[str, str]:
    (row,) = run.rows("SELECT session_id, user_id FROM traces WHERE trace_id = $t", t=trace_id)
    return dict(row)


def test_traceloop_workflow_and_tasks(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "traceloop_app", "workflow", group="traceloop")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert [(s["name"], s["step_type"]) for s in steps] == [
            ("answer_question.workflow", "chain"),
            ("retrieve_documents.task", "retrieval"),
            ("fit_budget.task", "rerank"),
            ("openai.chat", "llm"),
        ], info
        assert {s["convention"] for s in steps} == {"traceloop"}
        root, retrieval, _, llm = steps
        # the wrapped inputs give the question itself, on the root and on the retrieval
        assert root["query_text"] == retrieval["query_text"] == scenario.QUESTIONS[key], info
        assert json.loads(root["input_text"]) == {"args": [scenario.QUESTIONS[key]], "kwargs": {}}
        assert llm["model"] == "local-model" and llm["input_tokens"] and llm["output_tokens"], llm
        # the passages' ids are chunk ids; the source document comes from their metadata
        chunks = run.rows(
            "SELECT doc_id, chunk_id, content FROM step_documents WHERE trace_id = $t AND stage = 'candidate' "
            "ORDER BY position",
            t=trace_id,
        )
        assert [(r["doc_id"], r["chunk_id"]) for r in chunks] == [(d, f"{d}#0") for d in RANKED[key]], info
        assert all(r["content"] for r in chunks), chunks
        # the budget task was given every candidate and kept the first
        assert run.doc_ids(key, "rerank_input") == RANKED[key], info
        assert run.doc_ids(key, "reranked") == RANKED[key][:1], info
        # association properties, set in the workflow: on every step, and so on the trace
        scope = run.rows("SELECT DISTINCT session_id, user_id FROM steps WHERE trace_id = $t", t=trace_id)
        assert scope == [{"session_id": f"session-{key}", "user_id": "user-7"}], scope
        assert session_of(run, trace_id) == scope[0]
        retrievals = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert retrievals == [{"value": 1.0}], info
    check_all(run, candidates=RANKED)
    # the SDK also exports its metrics (OTLP /v1/metrics): token usage of the OpenAI calls is queryable
    usage = run.rows(
        "SELECT count(*) AS n FROM metric_points WHERE name = 'gen_ai.client.token.usage' "
        "AND (resource_attributes->>'$.\"service.name\"') = 'traceloop-workflow'"
    )
    assert usage[0]["n"] >= 1, usage


def test_traceloop_agent_and_tool(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "traceloop_app", "agent", group="traceloop")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert [(s["name"], s["step_type"]) for s in steps] == [
            ("support_agent.agent", "agent"),
            ("search_kb.tool", "tool"),
            ("openai.chat", "llm"),
        ], info
        agent, tool, _ = steps
        assert agent["query_text"] == scenario.QUESTIONS[key], info
        assert tool["tool_name"] == "search_kb", info
        assert json.loads(tool["input_text"]) == {"args": [], "kwargs": {"query": scenario.QUESTIONS[key]}}
        # association properties set inside an agent reach the spans below it (the SDK sets them on
        # the current span only inside a workflow or task), and so the trace
        assert session_of(run, trace_id) == {"session_id": f"session-{key}", "user_id": "user-8"}
        assert {(s["session_id"], s["user_id"]) for s in steps[1:]} == {(f"session-{key}", "user-8")}, info
        # and ragfault.case_id among them names the gold case (the workflow run joins by query text)
        assert {s["case_id"] for s in steps[1:]} == {scenario.CASE_OF[key]}, info
        # the tool's documents are the candidates; the agent put the first one in the prompt
        assert run.doc_ids(key, "candidate") == RANKED[key], info
    check_all(run, candidates=RANKED)
