"""Haystack (3.x in the test environment, 2.x in its own) with its real instrumentations, offline: an
in-memory BM25 pipeline whose prompt keeps one of three candidates, answered by the local chat server.

- ``openinference-instrumentation-haystack``: the root ``Pipeline.run`` wraps the query as
  ``{"data": {"<component>": {"query": ...}}}`` and its output is the repr of a ``ChatMessage``; the
  query comes from the retrieval and the answer from the generator.
- Haystack's own OpenTelemetry tracer (2.x: 3.x has none in its core) with content tracing on: the
  ``haystack.*`` attributes of the pipeline and component spans.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import run_app
from tests.frameworks.expect import check_all

pytestmark = pytest.mark.instrumentors


@pytest.mark.parametrize("group", ["main", "haystack2"])
def test_haystack_openinference(rf: Server, chat: ChatServer, group: str) -> None:
    run = run_app(rf, chat, "haystack_app", "openinference", group=group)
    for key in run.trace_ids:
        steps = run.steps(key)
        assert [s["step_type"] for s in steps] == ["chain", "retrieval", "chain", "llm"], steps
        assert {s["convention"] for s in steps} == {"openinference"}
        llm = steps[-1]
        assert llm["model"] == "local-model" and llm["input_tokens"] and llm["output_tokens"]
        # the root span still carries what Haystack sent, losslessly
        assert '"data"' in (steps[0]["input_text"] or "")
    check_all(run)


def test_haystack_native_tracer(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "haystack_app", "native", group="haystack2")
    for key in run.trace_ids:
        steps = run.steps(key)
        assert [s["step_type"] for s in steps] == ["chain", "retrieval", "chain", "llm"], steps
        assert {s["convention"] for s in steps} == {"haystack"}
        llm = steps[-1]
        assert llm["model"] == "local-model" and llm["input_tokens"] and llm["output_tokens"], llm
        assert steps[1]["query_text"] == scenario.QUESTIONS[key]
    check_all(run)
