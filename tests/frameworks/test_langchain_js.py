"""LangChain.js (``@langchain/core`` 1.4, ``@langchain/openai`` 1.5) traced by OpenInference's
LangChain.js instrumentation (``@arizeai/openinference-instrumentation-langchain`` 4.1), run for real
in Node against the local chat server, exporting with the real OTLP/HTTP exporter.

No reader names LangChain.js: its spans are OpenInference's (CHAIN, RETRIEVER, LLM, TOOL). The packages
are pinned in ``node/package.json`` and ``node/package-lock.json`` and installed by the ``node``
fixture of the Vercel AI SDK test (``npm ci``). ``node/langchain_app.mjs`` answers the scenario:

- ``chain``: an LCEL chain whose retriever (a ``BaseRetriever``) returns the candidates and whose
  prompt holds the first ``BUDGET`` of them;
- ``agent``: a runnable of the app's own binding a search tool to the model; the tool runs the
  retriever and hands the model the first ``BUDGET`` documents as JSON, a second call answers;
- ``chain-ids``: the chain with the documents' ids in LangChain's ``Document.id`` only;
- the chain with OpenInference's ``OPENINFERENCE_HIDE_OUTPUTS`` / ``OPENINFERENCE_HIDE_INPUTS``, whose
  spans carry the placeholder ``__REDACTED__`` where the content was: what is hidden is unknown.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, dump
from tests.frameworks.expect import CONTENT, KEYWORD_CANDIDATES, ROOT_CAUSE, check_question
from tests.frameworks.node_apps import node, run_node  # noqa: F401  (the npm ci fixture)

pytestmark = pytest.mark.instrumentors

REDACTED = "__REDACTED__"  # OpenInference's placeholder for hidden content


def _attribution(run: Run, key: str) -> dict[str, object]:
    (row,) = run.rows(
        "SELECT root_cause, case_id, failing_layers, missing_fields FROM attribution WHERE trace_id = $t",
        t=run.trace_ids[key],
    )
    return row


def test_langchain_js_lcel_chain(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    run = run_node(rf, chat, node, "langchain_app", "chain")
    for key, question in scenario.QUESTIONS.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert {s["convention"] for s in steps} == {"openinference"}, info
        root = next(s for s in steps if s["parent_span_id"] is None)
        assert (root["name"], root["input_text"]) == ("support-answer", question), info
        (retrieval,) = [s for s in steps if s["step_type"] == "retrieval"]
        assert (retrieval["name"], retrieval["query_text"]) == ("KeywordRetriever", question), info
        (llm,) = [s for s in steps if s["step_type"] == "llm"]
        assert llm["model"] == "local-model" and llm["output_text"] == root["output_text"], info
        assert llm["input_tokens"] > 0 and llm["output_tokens"] > 0, info
        holders = run.rows(
            "SELECT DISTINCT span_id FROM step_documents WHERE trace_id = $t AND stage = 'candidate'",
            t=run.trace_ids[key],
        )
        assert [h["span_id"] for h in holders] == [retrieval["span_id"]], info
        check_question(run, key, KEYWORD_CANDIDATES[key])


def test_langchain_js_agent_with_a_search_tool(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    run = run_node(rf, chat, node, "langchain_app", "agent")
    for key, question in scenario.QUESTIONS.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert {s["convention"] for s in steps} == {"openinference"}, info
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        (retrieval,) = [s for s in steps if s["step_type"] == "retrieval"]
        assert tool["tool_name"] == "search" and retrieval["parent_span_id"] == tool["span_id"], info
        assert retrieval["query_text"] == question, info
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert len(llms) == 2, info  # the tool call, then the answer
        # the tool hands on the first BUDGET of the retriever's documents: one retrieval, not two
        (calls,) = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' "
            "AND span_id IS NULL",
            t=run.trace_ids[key],
        )
        assert calls["value"] == 1.0, info
        check_question(run, key, KEYWORD_CANDIDATES[key])


def test_langchain_js_document_ids_only_on_the_document(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    """LangChain's ``Document.id`` is not among OpenInference's ``retrieval.documents.*`` attributes
    (only ``document.content`` and ``document.metadata``); it is in the span's ``output.value``
    (``{"documents": [{"pageContent", "metadata", "id"}]}``) beside the same texts."""
    run = run_node(rf, chat, node, "langchain_app", "chain-ids")
    for key in scenario.QUESTIONS:
        info = dump(run, key)
        # the documents are matched to the gold evidence by their text: the root causes hold
        assert run.root_cause(key) == (ROOT_CAUSE[key], scenario.CASE_OF[key]), info
    for key in scenario.QUESTIONS:
        check_question(run, key, KEYWORD_CANDIDATES[key])


def test_langchain_js_hidden_outputs_are_unknown(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    """``OPENINFERENCE_HIDE_OUTPUTS=true``: every ``output.value`` is ``__REDACTED__`` and the LLM's
    output messages are gone; the retriever's documents stay. The answer is unknown: ``dropped`` and
    ``miss`` still show their layer, ``ok`` cannot be told (``insufficient_trace`` naming ``answer``)."""
    run = run_node(rf, chat, node, "langchain_app", "chain", {"OPENINFERENCE_HIDE_OUTPUTS": "true"})
    for key in scenario.QUESTIONS:
        info = dump(run, key)
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
        steps = run.steps(key)
        assert all(s["output_text"] is None for s in steps if s["step_type"] != "retrieval"), info
    for key in ("dropped", "miss"):
        assert run.root_cause(key) == (ROOT_CAUSE[key], scenario.CASE_OF[key]), dump(run, key)
    for key in scenario.QUESTIONS:
        row = _attribution(run, key)
        assert run.trace(key)["answer_text"] is None, dump(run, key)
        assert "unsupported_claims" not in row["failing_layers"], row  # type: ignore[operator]
    row = _attribution(run, "ok")
    assert row["root_cause"] == "insufficient_trace" and "answer" in row["missing_fields"], row  # type: ignore[operator]


def test_langchain_js_hidden_inputs_are_unknown(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    """``OPENINFERENCE_HIDE_INPUTS=true``: every ``input.value`` and input message is ``__REDACTED__``;
    the retriever's documents and the answer stay. The question is unknown, never the placeholder."""
    run = run_node(rf, chat, node, "langchain_app", "chain", {"OPENINFERENCE_HIDE_INPUTS": "true"})
    for key in scenario.QUESTIONS:
        info = dump(run, key)
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
        root = next(s for s in run.steps(key) if s["parent_span_id"] is None)
        assert run.trace(key)["answer_text"] == root["output_text"] == CONTENT[KEYWORD_CANDIDATES[key][0]], (
            info
        )
        # nothing says what the model saw: no context is derived, and no layer is claimed
        assert run.doc_ids(key, "context") == [], info
        assert run.root_cause(key)[0] in (None, "insufficient_trace"), info
    queries = {key: run.trace(key)["query_text"] for key in scenario.QUESTIONS}
    assert all(q is None for q in queries.values()), queries
