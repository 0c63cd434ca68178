"""CrewAI with ``openinference-instrumentation-crewai`` (in its two ways of tracing) and with
OpenLLMetry's ``opentelemetry-instrumentation-crewai``, offline (its own environment): a crew of one
agent whose ``search_kb`` tool calls a ``retrieve`` tool of its own and gives the model the first
``BUDGET`` documents as text (see ``apps/crewai_app.py``).

No reader names CrewAI. With its wrappers (the default) the spans are OpenInference's: the crew's
``kickoff`` (CHAIN, its input the kickoff's inputs, its output the ``CrewOutput``), the task's
``_execute_core`` (AGENT), ``BaseTool.run`` for every tool call, nested ones too (TOOL), and the model
calls from the openai instrumentor (LLM). The candidates are the inner tool's result (a list of
objects with an id, a text and a score); the outer tool's text result lists no documents; the
context is derived from the prompt of the call that answered. The crew span also carries the
crew's configuration as JSON attributes (``crew_agents``, ``crew_tasks``: lists of objects with an
``id`` and texts such as ``role``, ``goal``, ``backstory``): those are no documents.

With ``use_event_listener=True`` the spans are built from CrewAI's event bus, model calls included;
a tool called inside a tool emits no event, so ``retrieve`` is not traced and nothing shows what
was retrieved: the trace cannot tell a dropped document from a missed one. OpenLLMetry's
instrumentor traces no tool call at all: the same.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors

KB_IDS = {d["doc_id"] for d in scenario.KB}


def check_no_configuration_documents(run: Run, key: str) -> None:
    """The crew span's ``crew_agents`` / ``crew_tasks`` (objects with an ``id`` and the agent's ``role``,
    ``goal``, ``backstory``, ``tools_names``, ...) describe the crew: they are no documents, and the
    crew span is no retrieval."""
    rows = run.rows(
        "SELECT d.span_id, s.name, s.step_type, d.stage, d.doc_id, d.content FROM step_documents d "
        "JOIN steps s USING (trace_id, span_id) WHERE d.trace_id = $t ORDER BY d.span_id, d.stage, d.position",
        t=run.trace_ids[key],
    )
    assert [r for r in rows if r["doc_id"] not in KB_IDS] == [], dump(run, key)
    (root,) = [s for s in run.steps(key) if s["parent_span_id"] is None]
    assert root["step_type"] != "retrieval", dump(run, key)


def test_crewai_openinference(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "crewai_app", "wrappers", group="crewai")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert {s["convention"] for s in steps} == {"openinference"}, info
        tools = {s["tool_name"]: s for s in steps if s["step_type"] == "tool"}
        assert set(tools) == {"search_kb", "retrieve"}, info
        assert tools["retrieve"]["parent_span_id"] == tools["search_kb"]["span_id"], info
        # the call choosing the tool, and the one answering from its result
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert len(llms) == 2, info
        assert run.trace(key)["query_text"] == scenario.QUESTIONS[key], info
        assert KEYWORD_CANDIDATES[key][0] in run.doc_ids(key, "candidate"), info
        check_no_configuration_documents(run, key)
        holders = run.rows(
            "SELECT DISTINCT span_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=trace_id,
        )
        assert [r["span_id"] for r in holders] == [tools["retrieve"]["span_id"]], info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_crewai_event_listener_cannot_see_the_retrieval(rf: Server, chat: ChatServer) -> None:
    """The event listener traces the agent's tool call, not the tool it calls: the question, the
    prompts and the answer are there, what was retrieved is not. The evidence is in the answering
    prompt of ``ok`` (``ok`` may be said of it); the others are ``insufficient_trace``, never
    ``candidate_miss`` or ``dropped_before_context``, which the trace cannot show."""
    run = run_app(rf, chat, "crewai_app", "events", group="crewai")
    for key in run.trace_ids:
        info = dump(run, key)
        steps = run.steps(key)
        assert [s["tool_name"] for s in steps if s["step_type"] == "tool"] == ["search_kb"], info
        assert [s["step_type"] for s in steps].count("llm") == 2, info
        trace = run.trace(key)
        assert trace["query_text"] == scenario.QUESTIONS[key], info
        kept = KEYWORD_CANDIDATES[key][0]
        assert trace["answer_text"] == next(d["content"] for d in scenario.KB if d["doc_id"] == kept), info
        check_no_configuration_documents(run, key)
        assert run.doc_ids(key, "candidate") == [], info
        root, case = run.root_cause(key)
        assert case == scenario.CASE_OF[key], info
        assert root in ({"ok", "insufficient_trace"} if key == "ok" else {"insufficient_trace"}), info


def test_crewai_openllmetry_cannot_see_the_retrieval(rf: Server, chat: ChatServer) -> None:
    """OpenLLMetry's CrewAI instrumentor traces the crew, its task and agent (their configuration as
    ``crewai.*`` attributes, no input) and, with its openai instrumentor, the model calls; it traces no
    tool call. The tool's text result is seen only in the answering prompt, so nothing shows what was
    retrieved: ``insufficient_trace`` naming ``retrieval_step``, never a layer. The first user message
    is CrewAI's task prompt around the question (the harness names the gold case)."""
    run = run_app(rf, chat, "crewai_app", "openllmetry", group="crewai")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert [s["step_type"] for s in steps].count("llm") == 2, info
        assert not [s for s in steps if s["step_type"] in ("tool", "retrieval")], info
        trace = run.trace(key)
        assert scenario.QUESTIONS[key] in (trace["query_text"] or ""), info
        kept = KEYWORD_CANDIDATES[key][0]
        assert trace["answer_text"] == next(d["content"] for d in scenario.KB if d["doc_id"] == kept), info
        check_no_configuration_documents(run, key)
        assert run.doc_ids(key, "candidate") == [], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert (row["root_cause"], row["case_id"]) == ("insufficient_trace", scenario.CASE_OF[key]), info
        assert "retrieval_step" in row["missing_fields"], info
