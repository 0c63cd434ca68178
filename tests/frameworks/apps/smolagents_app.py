"""A smolagents ``ToolCallingAgent`` traced by ``openinference-instrumentation-smolagents``; the model
is the local chat server (``OpenAIModel``). Its ``search_kb`` tool calls a ``retrieve`` tool of its own
(smolagents traces every tool call, nested ones too) that returns the ``TOP_K`` best documents as
objects, and gives the model the first ``BUDGET`` of them as text, a line each. The agent has one
step: after the search it is asked for its final answer (smolagents' ``provide_final_answer``)."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402
from smolagents import OpenAIModel, Tool, ToolCallingAgent  # noqa: E402

provider = scenario.http_tracer_provider("smolagents")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
SmolagentsInstrumentor().instrument(tracer_provider=provider)
_, chat_url = scenario.settings()


class Retrieve(Tool):
    name = "retrieve"
    description = "Rank the knowledge base's documents by the words they share with the query."
    inputs = {"query": {"type": "string", "description": "what to look for"}}
    output_type = "array"

    def forward(self, query: str) -> list[dict[str, Any]]:
        return scenario.keyword_search(query)


retrieve = Retrieve()


class SearchKB(Tool):
    name = "search_kb"
    description = "Search the knowledge base."
    inputs = {"query": {"type": "string", "description": "the question"}}
    output_type = "string"

    def forward(self, query: str) -> str:
        found = retrieve(query=query)
        return "\n".join(f"- {d['content']}" for d in found[: scenario.BUDGET])


agent = ToolCallingAgent(
    tools=[SearchKB()],
    model=OpenAIModel(model_id="local-model", api_base=chat_url, api_key="local"),
    max_steps=1,
    verbosity_level=0,
)

for key, question in scenario.QUESTIONS.items():
    ids.current = key
    agent.run(question)
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
