"""An AutoGen (AgentChat) ``AssistantAgent`` with AutoGen's own OpenTelemetry spans, the model the local
chat server through autogen-ext's ``OpenAIChatCompletionClient``. Its ``search_kb`` tool ranks the
knowledge base and returns the ``TOP_K`` best documents (a pydantic model, which AutoGen hands the
model as JSON); the agent's model context is the prompt budget: it gives the model the first
``BUDGET`` of them, as text (AutoGen's ``ChatCompletionContext``, the documented place to shape
what the model is sent). The agent reflects on the tool's result: a second model call answers.

AutoGen's own spans (``create_agent``, ``invoke_agent``, ``execute_tool``, GenAI's operation names)
record names and ids only, never a message, an argument or a result. The one argument: ``own``
(AutoGen's spans alone; the harness names each question's gold case on a span around the run,
``ragfault.case_id``: the trace cannot tell what went wrong) or ``openai`` (with
``opentelemetry-instrumentation-openai``, as AutoGen's tracing guide sets it up, for the model
calls' messages), or ``openai-retrieval``: the same, and the tool records its retrieval itself as a
GenAI ``retrieval`` span (``gen_ai.retrieval.query.text``, ``gen_ai.retrieval.documents``), as
``ragfault doctor`` advises for a trace whose retrieval is not traced; ``openai-retrieval-team`` runs
that agent in a ``RoundRobinGroupChat`` of one turn (AutoGen's agent runtime then adds spans of its
own around the messages it delivers; the run is wrapped in a span of the app's, as AutoGen's
tracing guide does, so that they share one trace)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "openai"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from opentelemetry import trace  # noqa: E402

provider = scenario.http_tracer_provider("autogen")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
trace.set_tracer_provider(provider)  # AutoGen traces through the global provider
if mode.startswith("openai"):
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_core.model_context import UnboundedChatCompletionContext  # noqa: E402
from autogen_core.models import FunctionExecutionResultMessage, LLMMessage, ModelFamily  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from pydantic import BaseModel  # noqa: E402

_, chat_url = scenario.settings()


class Doc(BaseModel):
    id: str
    content: str
    score: float


class SearchResults(BaseModel):
    documents: list[Doc]


def rank(query: str) -> SearchResults:
    return SearchResults(documents=[Doc(**r) for r in scenario.keyword_search(query)])


async def search_kb(query: str) -> SearchResults:
    """Search the knowledge base."""
    if "retrieval" not in mode:
        return rank(query)
    # the app records what it retrieved: AutoGen's tool span does not
    attributes = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": query}
    with trace.get_tracer("kb").start_as_current_span("retrieval kb", attributes=attributes) as span:
        found = rank(query)
        span.set_attribute(
            "gen_ai.retrieval.documents", json.dumps([d.model_dump() for d in found.documents])
        )
    return found


class Budget(UnboundedChatCompletionContext):
    """The prompt budget: the model is sent the first ``BUDGET`` documents of a search, as text."""

    async def get_messages(self) -> list[LLMMessage]:
        out: list[LLMMessage] = []
        for message in await super().get_messages():
            if isinstance(message, FunctionExecutionResultMessage):
                results = []
                for r in message.content:
                    docs = json.loads(r.content).get("documents", [])
                    lines = "\n".join(f"- {d['content']}" for d in docs[: scenario.BUDGET])
                    results.append(r.model_copy(update={"content": f"Search results:\n{lines}"}))
                message = message.model_copy(update={"content": results})
            out.append(message)
        return out


def client() -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(
        model="local-model",
        base_url=chat_url,
        api_key="local",
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": False,
            "structured_output": False,
            "family": ModelFamily.UNKNOWN,
        },
    )


async def main() -> None:
    tracer = trace.get_tracer("eval-harness")
    for key, question in scenario.QUESTIONS.items():
        agent = AssistantAgent(
            "assistant",
            model_client=client(),
            tools=[search_kb],
            model_context=Budget(),
            reflect_on_tool_use=True,
            system_message="Answer from the search results only.",
        )
        ids.current = key
        if mode == "own":  # the harness names the gold case: the trace shows nothing else of it
            with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
                await agent.run(task=question)
        elif mode.endswith("team"):  # a span around the run, as AutoGen's tracing guide has it
            with tracer.start_as_current_span("runtime"):
                await RoundRobinGroupChat([agent], max_turns=1).run(task=question)
        else:
            await agent.run(task=question)
        ids.current = None


asyncio.run(main())
ids.wait_ended(10)
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
