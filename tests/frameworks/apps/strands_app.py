"""A Strands Agents ``Agent`` with Strands' own OpenTelemetry spans (no instrumentor package), the model
the local chat server through Strands' OpenAI-compatible provider (``OpenAIModel``). Its ``search_kb``
tool ranks the knowledge base and returns the ``TOP_K`` best documents as a JSON content block (a
``ToolResult``, Strands' documented structured return); a ``BeforeModelCallEvent`` hook is the prompt
budget: before the answering call it replaces the documents in the conversation with the first
``BUDGET`` of them, as text (Strands records the tool's own result on its ``execute_tool`` span, the
trimmed conversation on the model call).

The one argument picks Strands' telemetry (its ``OTEL_SEMCONV_STABILITY_OPT_IN`` tokens): ``legacy``
(its default: one span event per message, ``gen_ai.user.message`` / ``gen_ai.tool.message`` /
``gen_ai.choice``, each a JSON list of Strands' content blocks), ``latest``
(``gen_ai_latest_experimental``: GenAI's ``gen_ai.input.messages`` / ``gen_ai.output.messages`` in
one event per span, the tool's call as ``gen_ai.tool.call.arguments`` / ``result`` attributes),
``attributes`` (the latest conventions with ``gen_ai_span_attributes_only``: the messages as span
attributes, no events) and ``redacted`` (the latest conventions with
``gen_ai_unredacted_attributes=``, an empty allow-list: every message, argument and result is
recorded as ``[REDACTED]``; the harness names each question's gold case on a span around the run,
``ragfault.case_id``: the trace cannot tell what went wrong). ``nested`` is ``latest`` with Strands'
agents-as-tools pattern: a coordinating agent whose one tool, ``ask_kb_agent``, runs the searching
agent above and returns its answer (an ``invoke_agent`` span inside an ``execute_tool`` span)."""

from __future__ import annotations

import copy
import os
import sys
from typing import Any

mode = sys.argv[1] if len(sys.argv) > 1 else "legacy"
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = {
    "legacy": "",
    "latest": "gen_ai_latest_experimental",
    "nested": "gen_ai_latest_experimental",
    "attributes": "gen_ai_latest_experimental,gen_ai_span_attributes_only",
    "redacted": "gen_ai_latest_experimental,gen_ai_unredacted_attributes=",
}[mode]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from opentelemetry import trace  # noqa: E402

provider = scenario.http_tracer_provider("strands")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
trace.set_tracer_provider(provider)  # Strands traces through the global provider

from strands import Agent, tool  # noqa: E402
from strands.hooks import BeforeModelCallEvent, HookProvider, HookRegistry  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

_, chat_url = scenario.settings()


@tool
def search_kb(query: str) -> dict[str, Any]:
    """Search the knowledge base.

    Args:
        query: what to look for
    """
    found = scenario.keyword_search(query)
    return {"status": "success", "content": [{"json": {"documents": found}}]}


class Budget(HookProvider):
    """The prompt budget: the model is sent the first ``BUDGET`` documents of a search, as text."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self.trim)

    def trim(self, event: BeforeModelCallEvent) -> None:
        for message in event.agent.messages:
            for block in message["content"]:
                result = block.get("toolResult")
                if result is None:
                    continue
                kept: list[dict[str, Any]] = []
                for part in result["content"]:
                    docs = (part.get("json") or {}).get("documents")
                    if docs is None:
                        kept.append(part)
                        continue
                    lines = "\n".join(f"- {d['content']}" for d in docs[: scenario.BUDGET])
                    kept.append({"text": f"Search results:\n{lines}"})
                # a copy: the tool's own result, recorded on its span, stays as the tool returned it
                block["toolResult"] = {**copy.deepcopy(result), "content": kept}


def kb_agent() -> Agent:
    return Agent(
        model=OpenAIModel(client_args={"base_url": chat_url, "api_key": "local"}, model_id="local-model"),
        tools=[search_kb],
        hooks=[Budget()],
        system_prompt="Answer from the search results only.",
        callback_handler=None,
    )


@tool
def ask_kb_agent(question: str) -> str:
    """Ask the knowledge base agent.

    Args:
        question: the user's question
    """
    return str(kb_agent()(question)).strip()


tracer = trace.get_tracer("eval-harness")
for key, question in scenario.QUESTIONS.items():
    if mode == "nested":
        agent = Agent(
            model=OpenAIModel(client_args={"base_url": chat_url, "api_key": "local"}, model_id="local-model"),
            tools=[ask_kb_agent],
            system_prompt="Answer with what the knowledge base agent says.",
            callback_handler=None,
        )
    else:
        agent = kb_agent()
    ids.current = key
    if mode == "redacted":  # the harness names the gold case: the trace shows nothing else of it
        with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
            agent(question)
    else:
        agent(question)
    ids.current = None
ids.wait_ended(10)
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
