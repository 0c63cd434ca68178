"""Haystack (3.x in the test environment, 2.x in its own) with its real instrumentations, offline: an
in-memory BM25 pipeline whose prompt keeps one of three candidates, answered by the local chat server.

- ``openinference-instrumentation-haystack``: the root ``Pipeline.run`` wraps the query as
  ``{"data": {"<component>": {"query": ...}}}`` and its output is the repr of a ``ChatMessage``; the
  query comes from the retrieval and the answer from the generator.
- Haystack's own OpenTelemetry tracer (2.x: 3.x has none in its core) with content tracing on: the
  ``haystack.*`` attributes of the pipeline and component spans.
- OpenLLMetry's ``opentelemetry-instrumentation-haystack`` (2.x only: 0.62.4 imports a module Haystack
  3 removed) cannot tell the three questions apart: it traces the pipeline and the generator, never
  the retriever, and its generator span records the keys of the generator's result ("replies") as
  the answer. ragfault says so: every question is ``insufficient_trace``, never ``ok``, naming what
  is missing.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import CANDIDATES, CONTENT, check_all

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


@pytest.mark.parametrize("mode", ["openllmetry", "openllmetry-haystack"])
def test_haystack_openllmetry_cannot_tell(rf: Server, chat: ChatServer, mode: str) -> None:
    """``openllmetry``: with OpenLLMetry's OpenAI instrumentation too (as ``Traceloop.init`` sets a
    Haystack app up), the prompt and the answer are traced, the retrieval is not: every question is
    ``insufficient_trace`` for the missing ``retrieval_step``. ``openllmetry-haystack``: the Haystack
    instrumentation alone does not trace the prompt either (its generator span reads
    ``ChatMessage.content``, which Haystack 2.x no longer has): ``answer_llm_input`` is missing."""
    run = run_app(rf, chat, "haystack_app", mode, group="haystack2")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        assert "retrieval" not in {s["step_type"] for s in steps}, info
        assert not run.doc_ids(key, "candidate"), info
        # the generator span's "replies" (the keys of the generator's result) is no answer
        (wrapper,) = [s for s in steps if s["name"] == "haystack.openai.chat"]
        assert wrapper["output_text"] is None and wrapper["input_text"] is None, wrapper
        trace = run.trace(key)
        # the question is found in the pipeline's inputs by component, so the gold case joins; the
        # answer is the model's text (from the OpenAI call, else from the pipeline's result)
        assert trace["query_text"] == scenario.QUESTIONS[key], info
        assert trace["answer_text"] == CONTENT[CANDIDATES[key][0]], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, failing_layers, missing_fields FROM attribution WHERE trace_id = $t",
            t=trace_id,
        )
        assert row["case_id"] == scenario.CASE_OF[key] and row["root_cause"] != "ok", row
        assert "insufficient_trace" in row["failing_layers"], row
        if mode == "openllmetry":
            assert row["root_cause"] == "insufficient_trace", row
            assert row["missing_fields"] == ["retrieval_step"], row
        else:
            # without the prompt, an untraced retrieval cannot be seen: the decision layer ranks
            # first (no_retrieval) and insufficient_trace follows, naming the prompt
            assert row["missing_fields"] == ["answer_llm_input"], row
