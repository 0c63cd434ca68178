"""A pydantic-ai agent with its own OpenTelemetry instrumentation (``Agent.instrument_all``, no
instrumentor package), the model the local chat server (``OpenAIChatModel``). Its ``search_kb`` tool
ranks the knowledge base, gives the model the first ``BUDGET`` documents as text, a line each, and
keeps the ``TOP_K`` it retrieved as the call's metadata (``ToolReturn``: the application's record,
not sent to the model), which pydantic-ai records with the tool's result.

The one argument is the instrumentation's data format version (pydantic-ai's ``version``, 2 to 6;
unrelated to the package's version): 2 records a tool's call under ``tool_arguments`` and
``tool_response``, later ones under ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``. ``6-nocontent``
records no content at all (``include_content=False``), and the harness names each question's gold case
on a span around the run (``ragfault.case_id``): the trace cannot tell what went wrong."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from pydantic_ai import Agent, InstrumentationSettings, ToolReturn  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

provider = scenario.http_tracer_provider("pydantic-ai")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
version, _, content = sys.argv[1].partition("-")  # "6", or "6-nocontent": no inputs or outputs recorded
Agent.instrument_all(
    InstrumentationSettings(
        tracer_provider=provider,
        version=int(version),  # type: ignore[arg-type]
        include_content=content != "nocontent",
    )
)
_, chat_url = scenario.settings()

agent = Agent(
    OpenAIChatModel("local-model", provider=OpenAIProvider(base_url=chat_url, api_key="local")),
    instructions="Answer from the search results only.",
)


def keyword_rank(query: str) -> list[dict[str, Any]]:
    return scenario.keyword_search(query)


@agent.tool_plain
def search_kb(query: str) -> ToolReturn:
    """Search the knowledge base."""
    found = keyword_rank(query)
    kept = "\n".join(f"- {d['content']}" for d in found[: scenario.BUDGET])
    return ToolReturn(return_value=kept, metadata={"retrieved": found})


tracer = provider.get_tracer("eval-harness")
for key, question in scenario.QUESTIONS.items():
    ids.current = key
    if content == "nocontent":  # the harness names the gold case: the trace shows nothing else of it
        with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
            agent.run_sync(question)
    else:
        agent.run_sync(question)
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
