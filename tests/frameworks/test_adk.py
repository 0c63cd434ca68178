"""Google ADK with its own OpenTelemetry spans, offline (its own environment): an ``LlmAgent`` whose
``search_kb`` retrieval tool returns the ``TOP_K`` documents as objects, and a ``before_model_callback``
that keeps the first ``BUDGET`` of them, as text, in what the model is sent (see ``apps/adk_app.py``).

No reader names ADK. Its default telemetry schema (2) is GenAI's: ``invoke_workflow`` around
``invoke_agent``, ``generate_content`` model calls and ``execute_tool`` spans; with content capture on
(``SPAN_ONLY``) the messages are ``gen_ai.input.messages`` / ``gen_ai.output.messages`` and the tool's
call ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``: the candidates are the tool's
documents, the context is derived from the answering call's tool result. ADK's defaults record no
content at all; its legacy schema (1) records each model call's request and response as one JSON
document each (``gcp.vertex.agent.llm_request`` / ``llm_response``, in Gemini's ``contents`` /
``parts`` shape) on a ``call_llm`` span around the GenAI ``generate_content`` span.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, ROOT_CAUSE, check_all

pytestmark = pytest.mark.instrumentors


def check_shape(run: Run) -> None:
    """What every schema with content shows: one tool call given the question, holding the candidates."""
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert tool["tool_name"] == "search_kb", info
        assert scenario.QUESTIONS[key] in (tool["input_text"] or ""), info
        assert [s["step_type"] for s in steps].count("agent") == 1, info
        holders = run.rows(
            "SELECT DISTINCT span_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=trace_id,
        )
        assert [r["span_id"] for r in holders] == [tool["span_id"]], info
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info


def test_adk_genai_schema_with_content(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "adk_app", "v2-content", group="adk")
    check_shape(run)
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        llms = [s for s in steps if s["step_type"] == "llm"]
        # the call choosing the tool, and the one answering from its (budgeted) result
        assert len(llms) == 2 and all(s["query_text"] == scenario.QUESTIONS[key] for s in llms), info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_adk_legacy_schema(rf: Server, chat: ChatServer) -> None:
    """Schema 1: the content is only in ``call_llm``'s ``gcp.vertex.agent.llm_request`` (``{"contents":
    [{"role": "user", "parts": [{"text": ...}]}, ...], "config": {"system_instruction": ...}}``) and
    ``llm_response`` (``{"content": {"role": "model", "parts": [{"text": ...}]}}``), the tool's under
    ``gcp.vertex.agent.tool_call_args`` / ``tool_response`` beside ``llm_request`` / ``llm_response``
    set to ``{}``. Read by shape: ``call_llm`` (``gen_ai.system`` without an operation) is a model
    call, messages in (Gemini's ``contents`` / ``parts``, role ``model``) and a reply out; the empty
    ``{}`` beside the tool's arguments and result is no value."""
    run = run_app(rf, chat, "adk_app", "v1", group="adk")
    for key in run.trace_ids:
        info = dump(run, key)
        steps = run.steps(key)
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert tool["input_text"] != "{}", info
        calls = [s for s in steps if s["name"] == "call_llm"]
        assert [s["step_type"] for s in calls] == ["llm", "llm"], info
        assert all(s["query_text"] == scenario.QUESTIONS[key] for s in calls), info
    check_shape(run)
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_adk_legacy_schema_named_case_never_a_wrong_layer(rf: Server, chat: ChatServer) -> None:
    """Schema 1 with the gold case named by the harness: whatever of it is read, each question's root
    cause is its own or ``insufficient_trace`` naming what is missing, never another layer."""
    run = run_app(rf, chat, "adk_app", "v1-case", group="adk")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        (row,) = run.rows(
            "SELECT root_cause, case_id, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert row["case_id"] == scenario.CASE_OF[key], info
        assert row["root_cause"] in (ROOT_CAUSE[key], "insufficient_trace"), info
        if row["root_cause"] == "insufficient_trace":
            assert row["missing_fields"], info


@pytest.mark.parametrize("mode", ["v2", "v1-nocontent"])
def test_adk_without_content_cannot_tell(rf: Server, chat: ChatServer, mode: str) -> None:
    """ADK's defaults (schema 2 without content capture) and schema 1 with
    ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false``: the spans show the run's shape (an agent, two model
    calls, a tool call) and no question, prompt, answer or tool result; the harness names the gold case.
    Every question is ``insufficient_trace`` naming what is missing, never a layer, and no text is
    made up (schema 1 records ``{}`` where the content would be)."""
    run = run_app(rf, chat, "adk_app", mode, group="adk")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        trace = run.trace(key)
        assert (trace["query_text"], trace["answer_text"]) == (None, None), info
        steps = run.steps(key)
        assert [s["step_type"] for s in steps].count("llm") == 2, info
        assert all(s["query_text"] is None for s in steps), info
        assert run.doc_ids(key, "candidate") == [] and run.doc_ids(key, "context") == [], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert (row["root_cause"], row["case_id"]) == ("insufficient_trace", scenario.CASE_OF[key]), info
        assert {"answer", "answer_llm_input"} <= set(row["missing_fields"]), info
