"""The Vercel AI SDK (TypeScript, ``ai`` 5.x) with its own telemetry (``experimental_telemetry``), run
for real in Node against the local chat server, exporting with the real OTLP/HTTP exporter.

The packages are pinned in ``node/package.json`` and ``node/package-lock.json`` and installed here with
``npm ci`` (once per lock file). ``node/vercel_app.mjs`` answers the scenario's three questions:

- ``generate`` / ``stream``: ``generateText`` / ``streamText`` with a search tool over two steps; the
  tool's result lists the candidates, its ``toModelOutput`` gives the model the first ``BUDGET`` of
  them (the prompt budget), the second model call answers. The ``ai.*`` attributes are read by their
  own convention (``vercel_ai``): the SDK call is the chain with the query, the model calls are LLM
  steps, the tool call's result the candidates, the context derived from the answering call's prompt.
- ``manual``: the app's own root span (a plain ``input`` / ``output``, read by the structural layer)
  and a hand-written GenAI retrieval span, then one ``generateText`` without tools.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import Run, dump
from tests.frameworks.expect import check_question
from tests.frameworks.node_apps import node, run_node  # noqa: F401  (the npm ci fixture)

pytestmark = pytest.mark.instrumentors


def _candidates(run: Run, key: str) -> tuple[str, list[str]]:
    """(span, candidate ids in rank order) of the one step that retrieved."""
    rows = run.rows(
        "SELECT span_id, list(doc_id ORDER BY position) AS ids FROM step_documents "
        "WHERE trace_id = $t AND stage = 'candidate' GROUP BY span_id",
        t=run.trace_ids[key],
    )
    assert len(rows) == 1, (rows, dump(run, key))
    return rows[0]["span_id"], rows[0]["ids"]


@pytest.mark.parametrize("mode", ["generate", "stream"])
def test_vercel_ai_with_a_search_tool(rf: Server, chat: ChatServer, node: str, mode: str) -> None:  # noqa: F811
    run = run_node(rf, chat, node, "vercel_app", mode)
    call = f"ai.{mode}Text"
    for key, question in scenario.QUESTIONS.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert {s["convention"] for s in steps} == {"vercel_ai"}, info
        by_name = {s["name"]: s for s in steps}
        root = by_name[call]
        assert (root["step_type"], root["query_text"], root["parent_span_id"]) == ("chain", question, None), (
            info
        )
        llms = [s for s in steps if s["step_type"] == "llm"]
        assert len(llms) == 2, info  # the tool call, then the answer
        usage = [(s["model"], s["input_tokens"] > 0, s["output_tokens"]) for s in llms]
        assert usage == [("local-model", True, 0), ("local-model", True, llms[1]["output_tokens"])], usage
        assert llms[1]["output_tokens"] > 0, usage
        assert llms[0]["output_text"] is None and llms[1]["output_text"] == root["output_text"], info
        (tool,) = [s for s in steps if s["step_type"] == "tool"]
        assert tool["tool_name"] == "search" and json.loads(tool["output_text"]), info
        span, ids = _candidates(run, key)
        assert span == tool["span_id"] and all(ids), (ids, info)
        assert len(ids) == len(json.loads(tool["output_text"])), info
        # the answering call read only the budgeted documents (toModelOutput): the rest were dropped
        check_question(run, key, candidates=ids)


def test_vercel_ai_with_a_hand_written_retrieval_span(rf: Server, chat: ChatServer, node: str) -> None:  # noqa: F811
    run = run_node(rf, chat, node, "vercel_app", "manual")
    for key, question in scenario.QUESTIONS.items():
        info = dump(run, key)
        steps = run.steps(key)
        root = next(s for s in steps if s["parent_span_id"] is None)
        assert (root["name"], root["convention"], root["input_text"]) == ("answer", "structural", question), (
            info
        )
        (retrieval,) = [s for s in steps if s["step_type"] == "retrieval"]
        assert (retrieval["convention"], retrieval["query_text"]) == ("genai", question), info
        assert {s["convention"] for s in steps if s["name"].startswith("ai.")} == {"vercel_ai"}, info
        span, ids = _candidates(run, key)
        assert span == retrieval["span_id"], info
        check_question(run, key, candidates=ids)
