"""A CrewAI crew of one agent and one task, traced by ``openinference-instrumentation-crewai``; the
model is the local chat server through CrewAI's native OpenAI provider (``LLM("openai/...")``), its
calls traced by ``openinference-instrumentation-openai``. The agent's ``search_kb`` tool calls a
``retrieve`` tool of its own (the instrumentor traces every ``BaseTool.run``, nested ones too) that
returns the ``TOP_K`` best documents as objects, and gives the model the first ``BUDGET`` of them as
text, a line each. The task's description is the question (``kickoff(inputs=...)`` fills it in).

The one argument picks how the instrumentor traces: ``wrappers`` (its default: spans from wrapped
methods, the model calls from the openai instrumentor) or ``events`` (``use_event_listener=True``:
spans built from CrewAI's own event bus, model calls included, no openai instrumentor) or
``openllmetry`` (OpenLLMetry's ``opentelemetry-instrumentation-crewai`` instead, with its openai
instrumentor as ``Traceloop.init`` sets them up; it records no tool call and no kickoff input, so the
question is only inside CrewAI's task prompt and the harness names each question's gold case on a
span around the run, ``ragfault.case_id``)."""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import BaseTool  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "wrappers"
provider = scenario.http_tracer_provider("crewai")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
if mode == "events":
    CrewAIInstrumentor().instrument(tracer_provider=provider, use_event_listener=True)
elif mode == "openllmetry":
    from opentelemetry.instrumentation.crewai import CrewAIInstrumentor as OpenLLMetryCrewAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryOpenAI

    OpenLLMetryCrewAI().instrument(tracer_provider=provider)
    OpenLLMetryOpenAI().instrument(tracer_provider=provider)
else:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    CrewAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
_, chat_url = scenario.settings()


class Query(BaseModel):
    query: str = Field(description="what to look for")


class Retrieve(BaseTool):
    name: str = "retrieve"
    description: str = "Rank the knowledge base's documents by the words they share with the query."
    args_schema: type[BaseModel] = Query

    def _run(self, query: str) -> list[dict[str, Any]]:
        return scenario.keyword_search(query)


retrieve = Retrieve()


class SearchKB(BaseTool):
    name: str = "search_kb"
    description: str = "Search the knowledge base."
    args_schema: type[BaseModel] = Query

    def _run(self, query: str) -> str:
        found = retrieve.run(query=query)
        return "\n".join(f"- {d['content']}" for d in found[: scenario.BUDGET])


agent = Agent(
    role="Support agent",
    goal="Reply with the sentence the search gives",
    backstory="You work at a help desk.",
    tools=[SearchKB()],
    llm=LLM(model="openai/local-model", base_url=chat_url, api_key="local"),
    max_iter=2,
    verbose=False,
)
task = Task(
    description="{question}", expected_output="One sentence quoted from the search results.", agent=agent
)
crew = Crew(agents=[agent], tasks=[task], verbose=False)

tracer = provider.get_tracer("eval-harness")
for key, question in scenario.QUESTIONS.items():
    ids.current = key
    if mode == "openllmetry":  # the question is only inside CrewAI's task prompt: the harness names the case
        with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
            crew.kickoff(inputs={"question": question})
    else:
        crew.kickoff(inputs={"question": question})
    ids.current = None
# the event listener ends the crew's span from an event handler: wait for it before exporting
if not ids.wait_ended(30):
    print("spans still open after 30 s", file=sys.stderr)
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
