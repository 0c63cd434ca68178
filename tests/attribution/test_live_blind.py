"""A production trace that records only the shape of its run (content capture off: no question,
prompt, answer or documents) and names no gold case still gets a ``live_attribution`` row: the
trace cannot tell, so ``insufficient_trace`` naming what is missing, never a layer and never
silence."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace as otel

from tests.attribution.conftest import serve, wait_evaluated
from tests.conftest import Server
from tests.otel_helpers import http_provider


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(tmp_path_factory.mktemp("blind"))


def _blind_trace(tracer: otel.Tracer) -> str:
    """An agent run as a framework records it with content off: names, models, token counts."""
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "support")
        with tracer.start_as_current_span("chat model-x") as llm:
            llm.set_attribute("gen_ai.operation.name", "chat")
            llm.set_attribute("gen_ai.request.model", "model-x")
            llm.set_attribute("gen_ai.usage.input_tokens", 120)
        with tracer.start_as_current_span("execute_tool search_kb") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "search_kb")
        with tracer.start_as_current_span("chat model-x") as llm:
            llm.set_attribute("gen_ai.operation.name", "chat")
            llm.set_attribute("gen_ai.request.model", "model-x")
        return format(root.get_span_context().trace_id, "032x")


def test_a_blind_live_trace_is_insufficient_not_silent(server: Server) -> None:
    provider = http_provider(server.url, service="blind-app")
    trace_id = _blind_trace(provider.get_tracer("app"))
    provider.force_flush()
    wait_evaluated(server, [trace_id])
    rows = server.sql(
        "SELECT root_cause, failing_layers, missing_fields FROM live_attribution WHERE trace_id = $t",
        t=trace_id,
    )
    assert len(rows) == 1, rows
    ((root_cause, failing_layers, missing),) = rows
    assert root_cause == "insufficient_trace", rows
    assert failing_layers == ["insufficient_trace"], rows
    assert "answer" in missing, rows
