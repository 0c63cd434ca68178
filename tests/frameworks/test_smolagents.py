"""smolagents with ``openinference-instrumentation-smolagents``, offline (its own environment): a
``ToolCallingAgent`` whose ``search_kb`` tool calls a ``retrieve`` tool of its own and gives the
model the first ``BUDGET`` documents as text (see ``apps/smolagents_app.py``).

No reader knows smolagents: its spans are OpenInference's (agent, step chains, tools, model calls).
The candidates are the inner tool's result (a list of objects with an id, a text and a score); the
outer tool's text result lists no documents; the context is derived from the answering prompt,
which is the final-answer call smolagents makes after its last step. ``search_kb`` is no second
retrieval: it wraps ``retrieve`` and hands on its documents (``retrieval_calls`` is 1).
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors


def test_smolagents_openinference(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "smolagents_app", group="smolagents")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert {s["convention"] for s in steps} == {"openinference"}, info
        tools = {s["tool_name"]: s for s in steps if s["step_type"] == "tool"}
        assert set(tools) == {"search_kb", "retrieve"}, info
        assert tools["retrieve"]["parent_span_id"] == tools["search_kb"]["span_id"], info
        holders = run.rows(
            "SELECT DISTINCT span_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=trace_id,
        )
        assert [r["span_id"] for r in holders] == [tools["retrieve"]["span_id"]], info
        # ``search_kb`` (a name that says search) calls ``retrieve`` and hands on its documents: one
        # retrieval call, not two
        calls = run.rows(
            "SELECT value, details->>'retrieval_tool_calls' AS tools FROM evaluations "
            "WHERE trace_id = $t AND metric IN ('retrieval_calls', 'retrieval_decision') AND span_id IS NULL "
            "ORDER BY metric",
            t=trace_id,
        )
        assert [c["value"] for c in calls] == [1.0, 1.0], info
        assert calls[1]["tools"] == '["retrieve"]', info
        # the call choosing the tool, and the final answer smolagents asks for after its last step
        assert [s["step_type"] for s in steps].count("llm") == 2, info
    check_all(run, candidates=KEYWORD_CANDIDATES)
