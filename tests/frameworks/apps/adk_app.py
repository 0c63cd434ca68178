"""A Google ADK ``LlmAgent`` with ADK's own OpenTelemetry spans (no instrumentor package), the model the
local chat server through ``LiteLlm`` (OpenAI-compatible). Its ``search_kb`` tool is one of ADK's
retrieval tools (a ``BaseRetrievalTool``) ranking the knowledge base and returning the ``TOP_K`` best
documents as objects; a ``before_model_callback`` is the prompt budget: it keeps the first ``BUDGET``
of them, as text, in the tool result the model is sent (ADK records the tool's own result on its
``execute_tool`` span, the trimmed request on the model call).

The one argument picks ADK's telemetry: ``v2-content`` (its default schema, GenAI-aligned, with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``), ``v2`` (ADK's defaults: that
schema records no content at all), ``v1`` (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``: the legacy
``call_llm`` spans with ``gcp.vertex.agent.*`` payloads) and ``v1-nocontent`` (the same with
``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false``). Where no content is recorded (``v2``,
``v1-nocontent``) the harness names each question's gold case on a span around the run
(``ragfault.case_id``): the trace cannot tell what went wrong. ``v1-case`` is ``v1`` with the gold
case named so, whether or not the question can be read."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

mode = sys.argv[1] if len(sys.argv) > 1 else "v2-content"
BLIND = ("v2", "v1-nocontent", "v1-case")  # the modes whose gold case the harness names
if mode.startswith("v1"):
    os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
if mode == "v2-content":
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
if mode.endswith("nocontent"):
    os.environ["ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS"] = "false"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of the model price list

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from opentelemetry import trace  # noqa: E402

provider = scenario.http_tracer_provider("google-adk")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
trace.set_tracer_provider(provider)  # ADK traces through the global provider

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.callback_context import CallbackContext  # noqa: E402
from google.adk.models.lite_llm import LiteLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools.retrieval.base_retrieval_tool import BaseRetrievalTool  # noqa: E402
from google.adk.tools.tool_context import ToolContext  # noqa: E402
from google.genai import types  # noqa: E402

_, chat_url = scenario.settings()


class SearchKB(BaseRetrievalTool):
    """Keyword ranking of the knowledge base: the ``TOP_K`` best documents, each an object."""

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"documents": scenario.keyword_search(args["query"])}


def budget(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
    """The prompt budget: the model is sent the first ``BUDGET`` documents of a search, as text.

    ADK sends a tool's result as a JSON object, so the kept text follows a sentence of its own: the
    local model answers with a sentence of its prompt, and the document's sentence stays whole."""
    for content in llm_request.contents:
        for part in content.parts or []:
            response = part.function_response
            if response is not None and response.name == "search_kb" and response.response:
                docs = response.response.get("documents") or []
                kept = [d["content"] for d in docs[: scenario.BUDGET]]
                response.response = {"kept": f"{len(kept)} of {len(docs)} kept. " + " ".join(kept)}
    return None


agent = LlmAgent(
    name="support",
    model=LiteLlm(model="openai/local-model", api_base=chat_url, api_key="local"),
    instruction="Answer from the search results only.",
    tools=[SearchKB(name="search_kb", description="Search the knowledge base.")],
    before_model_callback=budget,
)
runner = InMemoryRunner(agent=agent, app_name="kb")
tracer = provider.get_tracer("eval-harness")


async def ask(question: str) -> str:
    session = await runner.session_service.create_session(app_name="kb", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=question)])
    answer = ""
    async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts)
    return answer


async def main() -> None:
    for key, question in scenario.QUESTIONS.items():
        ids.current = key
        if mode in BLIND:  # the harness names the gold case: the trace shows nothing else of it
            with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
                await ask(question)
        else:
            await ask(question)
        ids.current = None


asyncio.run(main())
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
