"""Strands Agents with its own OpenTelemetry spans, offline (its own environment): an ``Agent`` whose
``search_kb`` tool returns the ``TOP_K`` documents as a JSON content block, and a hook that keeps the
first ``BUDGET`` of them, as text, in what the model is sent (see ``apps/strands_app.py``).

No reader names Strands. Its spans are GenAI's (``invoke_agent``, ``execute_event_loop_cycle`` around
each ``chat`` model call and ``execute_tool``), ``gen_ai.system`` ``strands-agents``. Where the content
sits depends on Strands' ``OTEL_SEMCONV_STABILITY_OPT_IN`` tokens:

- ``gen_ai_latest_experimental``: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (GenAI's
  parts) in a ``gen_ai.client.inference.operation.details`` event per span, or as span attributes
  with ``gen_ai_span_attributes_only``; the tool's call as ``gen_ai.tool.call.arguments`` /
  ``gen_ai.tool.call.result`` attributes. Read: the candidates are the tool's documents, the context
  is derived from the answering call's tool result.
- Strands' default: one span event per message (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` under ``content``; ``gen_ai.choice`` under
  ``message``), each a JSON list of Strands' content blocks (``[{"text": ...}]``, ``[{"toolUse":
  ...}]``, ``[{"toolResult": {"content": [{"json": {...}}]}}]``).
- ``gen_ai_unredacted_attributes=`` (an empty allow-list): every content value is ``[REDACTED]``.

Strands' agents-as-tools pattern nests a whole agent (``invoke_agent``) inside a tool call of a
coordinating agent; the tool's result is the inner agent's answer as a content-block list.
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
    """Every mode shows the run's shape: an agent, two model calls (the one choosing the tool, the one
    answering from its result), one tool call."""
    for key in run.trace_ids:
        info = dump(run, key)
        steps = run.steps(key)
        types = [s["step_type"] for s in steps]
        assert (types.count("agent"), types.count("llm"), types.count("tool")) == (1, 2, 1), info
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert tool["tool_name"] == "search_kb", info


@pytest.mark.parametrize("mode", ["latest", "attributes"])
def test_strands_latest_conventions(rf: Server, chat: ChatServer, mode: str) -> None:
    run = run_app(rf, chat, "strands_app", mode, group="strands")
    check_shape(run)
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert scenario.QUESTIONS[key] in (tool["input_text"] or ""), info
        holders = run.rows(
            "SELECT DISTINCT span_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=trace_id,
        )
        assert [r["span_id"] for r in holders] == [tool["span_id"]], info
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert all(s["query_text"] == scenario.QUESTIONS[key] for s in llms), info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_strands_agent_as_tool(rf: Server, chat: ChatServer) -> None:
    """A coordinating agent whose tool runs the searching agent: the inner agent's tool holds the
    candidates, the outer answering call's prompt holds the inner agent's answer (the kept
    document's sentence). The outer tool's result, ``[{"text": "<the inner answer>"}]``, is a
    message's content blocks, not a retrieval."""
    run = run_app(rf, chat, "strands_app", "nested", group="strands")
    for key in run.trace_ids:
        info = dump(run, key)
        steps = run.steps(key)
        types = [s["step_type"] for s in steps]
        assert (types.count("agent"), types.count("llm"), types.count("tool")) == (2, 4, 2), info
        assert run.trace(key)["query_text"] == scenario.QUESTIONS[key], info
        root, case = run.root_cause(key)
        assert (root, case) == (ROOT_CAUSE[key], scenario.CASE_OF[key]), info
    for key in run.trace_ids:
        # the outer tool's result ``[{"text": "<the inner agent's answer>"}]`` is a content block, no document
        assert None not in run.doc_ids(key, "candidate"), dump(run, key)
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_strands_default_message_events(rf: Server, chat: ChatServer) -> None:
    """Strands' default telemetry: the content only in per-message span events, each a JSON list of
    content blocks (``[{"text"}]``, ``[{"json": {...}}]``, ``{"toolResult": {"content": [...]}}``).
    The ``gen_ai.choice`` event's ``message`` is the model's reply (on a tool's span, its result), the
    ``gen_ai.tool.message`` event's ``content`` the tool's arguments (on the model's span, what the
    tool returned, which is what the model read)."""
    run = run_app(rf, chat, "strands_app", "legacy", group="strands")
    check_shape(run)
    for key in run.trace_ids:
        info = dump(run, key)
        assert run.trace(key)["query_text"] == scenario.QUESTIONS[key], info
        root, _ = run.root_cause(key)
        assert root in ("insufficient_trace", ROOT_CAUSE[key]), info  # never a wrong layer
    for key in run.trace_ids:
        steps = run.steps(key)
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        # the tool span's message events are its arguments and its result
        assert tool["input_text"] and tool["output_text"], dump(run, key)
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_strands_redacted_cannot_tell(rf: Server, chat: ChatServer) -> None:
    """An empty allow-list of unredacted attributes: every message, tool argument and result is
    ``[REDACTED]``; the harness names the gold case. Each question is ``insufficient_trace`` naming
    what is missing, never a layer, and ``[REDACTED]`` is read as no text at all."""
    run = run_app(rf, chat, "strands_app", "redacted", group="strands")
    check_shape(run)
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        trace = run.trace(key)
        assert (trace["query_text"], trace["answer_text"]) == (None, None), info
        steps = run.steps(key)
        assert all(s["query_text"] is None and s["input_text"] is None for s in steps), info
        assert run.doc_ids(key, "candidate") == [] and run.doc_ids(key, "context") == [], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert (row["root_cause"], row["case_id"]) == ("insufficient_trace", scenario.CASE_OF[key]), info
        assert {"answer", "answer_llm_input"} <= set(row["missing_fields"]), info
