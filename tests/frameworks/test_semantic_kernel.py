"""Semantic Kernel 1.45 with its own OpenTelemetry instrumentation, offline (its own environment): a
``ChatCompletionAgent`` whose ``search_kb`` plugin function runs the knowledge base's search function
and gives the model the first ``BUDGET`` documents as text (see ``apps/semantic_kernel_app.py``).

No reader names Semantic Kernel. Its spans follow the GenAI conventions: ``invoke_agent support``,
``chat local-model`` (usage on the span; with
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true`` the messages as log
records, ``gen_ai.system.message`` / ``gen_ai.user.message`` / ``gen_ai.choice``, joined to the span)
and ``execute_tool <function>`` with ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``.
The search function's result is recorded as ``str()`` of the list it returns: a Python list of JSON
strings, each ``{"record": {"doc_id", "content", ...}, "score": <distance>}``, read as a Python literal
(``collector.normalize.pyrepr``) with the one object each item wraps as the document.

With ``..._ENABLE_OTEL_DIAGNOSTICS=true`` alone nothing of the content is recorded (no question, no
answer, no tool result): each question, named by the app's ``ragfault.case_id``, is
``insufficient_trace``, never a layer.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import CONTENT, KEYWORD_CANDIDATES, check_question

pytestmark = pytest.mark.instrumentors

SENSITIVE = {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"}
WITHOUT_CONTENT = {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true"}


def test_semantic_kernel_agent_with_a_search_plugin(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "semantic_kernel_app", group="semantic_kernel", env=SENSITIVE)
    for key, question in scenario.QUESTIONS.items():
        info = dump(run, key)
        steps = run.steps(key)
        root = next(s for s in steps if s["parent_span_id"] is None)
        assert (root["name"], root["step_type"]) == ("invoke_agent support", "agent"), info
        trace = run.trace(key)
        assert trace["query_text"] == question, info
        # the answer quotes the first candidate, the one document the budget kept
        assert trace["answer_text"] == root["output_text"] == CONTENT[KEYWORD_CANDIDATES[key][0]], info
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert [s["model"] for s in llms] == ["local-model", "local-model"], info  # tool call, answer
        assert all(s["input_tokens"] > 0 for s in llms), info
        # the messages come from the log records joined to the model calls' spans
        assert question in llms[0]["input_text"], info
        assert CONTENT[KEYWORD_CANDIDATES[key][0]] in llms[1]["input_text"], info
        assert llms[1]["output_text"] == trace["answer_text"], info
        tools = {s["tool_name"]: s for s in steps if s["step_type"] == "tool"}
        assert set(tools) == {"KnowledgeBase-search_kb", "retrieve"}, info
        assert tools["retrieve"]["parent_span_id"] == tools["KnowledgeBase-search_kb"]["span_id"], info
        assert question in tools["retrieve"]["input_text"], info
    for key, trace_id in run.trace_ids.items():
        (calls,) = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' "
            "AND span_id IS NULL",
            t=trace_id,
        )
        assert calls["value"] == 1.0, dump(run, key)  # search_kb hands on what retrieve found
        check_question(run, key, KEYWORD_CANDIDATES[key])


def test_semantic_kernel_without_content_is_unknown(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "semantic_kernel_app", "named", group="semantic_kernel", env=WITHOUT_CONTENT)
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert all(s["input_text"] is None and s["output_text"] is None for s in steps), info
        assert {s["step_type"] for s in steps} >= {"agent", "llm", "tool"}, info
        assert [s["input_tokens"] > 0 for s in steps if s["step_type"] == "llm"] == [True, True], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, failing_layers, missing_fields FROM attribution WHERE trace_id = $t",
            t=trace_id,
        )
        assert row["case_id"] == scenario.CASE_OF[key], (row, info)
        assert (row["root_cause"], row["failing_layers"]) == ("insufficient_trace", ["insufficient_trace"]), (
            row,
            info,
        )
        assert {"answer", "answer_llm_input"} <= set(row["missing_fields"]), row
