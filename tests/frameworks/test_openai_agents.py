"""openai-agents with ``openinference-instrumentation-openai-agents``, offline (its own environment:
it needs openai 3.x): an agent whose search tool runs a keyword retrieval, reports it as a RETRIEVER
span inside the tool, and returns the documents that fit the budget.

The tool's result lists documents, and so does the retrieval inside it: they are one retrieval,
counted once (``retrieval_calls`` is 1), and the candidates are the retriever's.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import run_app
from tests.frameworks.expect import check_all

pytestmark = pytest.mark.instrumentors


def test_openai_agents_openinference(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "agents_app", group="agents")
    for key, trace_id in run.trace_ids.items():
        steps = {s["span_id"]: s for s in run.steps(key)}
        types = sorted(s["step_type"] for s in steps.values())
        assert types.count("tool") == 1 and types.count("retrieval") == 1 and "agent" in types, types
        assert types.count("llm") == 2, types  # the call choosing the tool, the answer after its result
        (retrieval,) = [s for s in steps.values() if s["step_type"] == "retrieval"]
        (tool,) = [s for s in steps.values() if s["step_type"] == "tool"]
        assert retrieval["parent_span_id"] == tool["span_id"] and tool["tool_name"] == "search_kb"
        # the tool's result holds documents too, and the retrieval inside it is the one counted
        tool_docs = run.rows(
            "SELECT count(*) AS n FROM step_documents WHERE trace_id = $t AND span_id = $s AND stage = 'candidate'",
            t=trace_id,
            s=tool["span_id"],
        )
        assert tool_docs[0]["n"] >= 1
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], calls
    # the tool's budgeted documents come first (same ids as the retriever's first): rank order holds
    check_all(run, candidates={"miss": ["berlin-pickup", "berlin-delivery", "warranty-claims"]})
