"""An openai-agents agent with a search tool, traced by ``openinference-instrumentation-openai-agents``;
the model is the local chat server (Chat Completions API). The tool runs a keyword retrieval, reports
it as an OpenInference RETRIEVER span inside the tool, and returns the documents that fit the budget."""

from __future__ import annotations

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from agents import (  # noqa: E402
    Agent,
    Runner,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    set_trace_processors,
)
from openai import AsyncOpenAI  # noqa: E402
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

provider = scenario.http_tracer_provider("openai-agents")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
set_trace_processors([])  # no export to the vendor's tracing backend; OpenInference adds its own
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
tracer = provider.get_tracer("kb-search")

_, chat_url = scenario.settings()
set_default_openai_client(AsyncOpenAI(base_url=chat_url, api_key="local"), use_for_tracing=False)
set_default_openai_api("chat_completions")


def keyword_rank(query: str) -> list[dict[str, object]]:
    return scenario.keyword_search(query)


@function_tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    with tracer.start_as_current_span("kb.retrieve") as span:
        found = keyword_rank(query)
        span.set_attribute("openinference.span.kind", "RETRIEVER")
        span.set_attribute("input.value", query)
        for i, d in enumerate(found):
            span.set_attribute(f"retrieval.documents.{i}.document.id", str(d["id"]))
            span.set_attribute(f"retrieval.documents.{i}.document.content", str(d["content"]))
            span.set_attribute(f"retrieval.documents.{i}.document.score", float(d["score"]))  # type: ignore[arg-type]
    return json.dumps(found[: scenario.BUDGET])


agent = Agent(
    name="support",
    instructions="Answer from the search results only.",
    tools=[search_kb],
    model="local-model",
)


async def main() -> None:
    for key, question in scenario.QUESTIONS.items():
        ids.current = key
        await Runner.run(agent, question)
        ids.current = None


asyncio.run(main())
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
