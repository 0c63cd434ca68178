"""pydantic-ai with its own OpenTelemetry instrumentation (``Agent.instrument_all``), offline (its own
environment), in two of its data format versions: an agent whose ``search_kb`` tool gives the model
the first ``BUDGET`` documents as text and keeps the ``TOP_K`` it retrieved as the call's metadata
(``ToolReturn``; see ``apps/pydantic_ai_app.py``).

The spans are GenAI's (``invoke_agent``, ``chat``, ``execute_tool``). Version 2 records a tool's call
under keys of its own (``tool_arguments``, ``tool_response``): the structural layer reads them by
the side their words name, so the tool's documents are found there as under the GenAI keys of later
versions. pydantic-ai sends a tool's result back as a ``user`` message of ``tool_call_response``
parts: that is no question, so the second model call's query stays the user's.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors


@pytest.mark.parametrize("version", ["2", "6"])
def test_pydantic_ai_own_instrumentation(rf: Server, chat: ChatServer, version: str) -> None:
    run = run_app(rf, chat, "pydantic_ai_app", version, group="pydantic_ai")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        types = sorted(s["step_type"] for s in steps)
        assert types == ["agent", "llm", "llm", "tool"], info
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert tool["tool_name"] == "search_kb" and scenario.QUESTIONS[key] in (tool["input_text"] or ""), (
            info
        )
        # the candidates: every document the tool retrieved (its metadata), the model saw the first
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
        for llm in (s for s in steps if s["step_type"] == "llm"):
            assert llm["query_text"] == scenario.QUESTIONS[key], info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_pydantic_ai_without_content_cannot_tell(rf: Server, chat: ChatServer) -> None:
    """``include_content=False``: no question, prompt, answer or tool result is recorded, only the
    shape of the run; the harness names the gold case. Every question is ``insufficient_trace``
    naming what is missing, never a layer, and no text is made up (a part recorded as ``{"type":
    "text"}`` without its content holds no text, not the text "text")."""
    run = run_app(rf, chat, "pydantic_ai_app", "6-nocontent", group="pydantic_ai")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        trace = run.trace(key)
        assert (trace["query_text"], trace["answer_text"]) == (None, None), info
        assert all(s["query_text"] is None and s["input_text"] is None for s in run.steps(key)), info
        (row,) = run.rows(
            "SELECT root_cause, case_id, missing_fields FROM attribution WHERE trace_id = $t", t=trace_id
        )
        assert (row["root_cause"], row["case_id"]) == ("insufficient_trace", scenario.CASE_OF[key]), info
        assert {"answer", "answer_llm_input"} <= set(row["missing_fields"]), info
