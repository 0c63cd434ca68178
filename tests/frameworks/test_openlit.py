"""OpenLIT's instrumentation (``openlit.init``, its own GenAI attributes) of LangGraph, LangChain and the
openai SDK, offline (its own environment), on the two apps of ``apps/langgraph_app.py``; the harness
names each question's gold case on a span around the run (``ragfault.case_id``).

- ``agent``: the prebuilt ReAct agent. OpenLIT records the tool's result as the ``str()`` of
  LangChain's ``ToolMessage`` (``content='...' artifact=[Document(metadata={...},
  page_content='...')]``), not JSON: the structural layer reads that repr for the documents
  (``collector.normalize.pyrepr``), and the three questions come out right.
- ``graph``: OpenLIT records no node's input or output, so nothing shows what was retrieved: each
  question is ``insufficient_trace`` naming ``retrieval_step``, never a layer the trace cannot show.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors


def test_openlit_langgraph_agent(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "langgraph_app", "openlit", "agent", group="openlit")
    for key in run.trace_ids:
        info = dump(run, key)
        (tool,) = [s for s in run.steps(key) if s["step_type"] == "tool"]
        assert tool["tool_name"] == "search_kb" and "artifact=[Document(" in (tool["output_text"] or ""), info
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
    check_all(run, candidates=KEYWORD_CANDIDATES)


def test_openlit_langgraph_graph_cannot_tell(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "langgraph_app", "openlit", "graph", group="openlit")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        assert run.doc_ids(key, "candidate") == [], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, failing_layers, missing_fields FROM attribution WHERE trace_id = $t",
            t=trace_id,
        )
        assert (row["root_cause"], row["case_id"]) == ("insufficient_trace", scenario.CASE_OF[key]), info
        assert (
            row["failing_layers"] == ["insufficient_trace"] and "retrieval_step" in row["missing_fields"]
        ), info
