"""OpenTelemetry GenAI semantic conventions -> Step.

Spec: https://opentelemetry.io/docs/specs/semconv/gen-ai/ — ``gen_ai.operation.name`` selects the step,
messages are JSON (``gen_ai.input.messages``), retrieval documents a JSON list
(``gen_ai.retrieval.documents``). Older releases used flattened ``gen_ai.prompt.{i}.content``.
"""

from __future__ import annotations

from typing import Any

from collector.normalize.docvalues import json_docs
from collector.normalize.messages import join_texts, json_messages_text
from collector.normalize.step import Reader, Step, StepType
from collector.normalize.values import as_int, as_str, indexed

OPERATION_TO_STEP: dict[str, StepType] = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "completion": "llm",
    "embeddings": "embedding",
    "retrieval": "retrieval",
    "vector_db_retrieve": "retrieval",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "execute_task": "chain",
    "workflow": "chain",
}


def _flat_prompts(attrs: dict[str, Any], prefix: str) -> tuple[str | None, str | None]:
    texts: list[str | None] = []
    last_user = None
    for _, sub in sorted(indexed(attrs, prefix).items()):
        text = as_str(sub.get("content"))
        texts.append(text)
        if text and sub.get("role") in ("user", "human"):
            last_user = text
    return join_texts(texts), last_user


def read_llm_io(attrs: dict[str, Any], step: Step) -> None:
    """Messages, model and token counts of a GenAI (or OpenLLMetry) model call."""
    step.model = as_str(attrs.get("gen_ai.response.model")) or as_str(attrs.get("gen_ai.request.model"))
    step.input_tokens = as_int(attrs.get("gen_ai.usage.input_tokens"))
    if step.input_tokens is None:
        step.input_tokens = as_int(attrs.get("gen_ai.usage.prompt_tokens"))
    step.output_tokens = as_int(attrs.get("gen_ai.usage.output_tokens"))
    if step.output_tokens is None:
        step.output_tokens = as_int(attrs.get("gen_ai.usage.completion_tokens"))
    step.total_tokens = as_int(attrs.get("gen_ai.usage.total_tokens"))
    if step.total_tokens is None:
        step.total_tokens = as_int(attrs.get("llm.usage.total_tokens"))
    if step.total_tokens is None and step.input_tokens is not None and step.output_tokens is not None:
        step.total_tokens = step.input_tokens + step.output_tokens

    system_text, _ = json_messages_text(attrs.get("gen_ai.system_instructions"))
    in_text, last_user = json_messages_text(attrs.get("gen_ai.input.messages"))
    if in_text is None:
        in_text, last_user = _flat_prompts(attrs, "gen_ai.prompt.")
    step.input_text = join_texts([system_text, in_text]) or step.input_text
    step.query_text = last_user or step.query_text
    out_text, _ = json_messages_text(attrs.get("gen_ai.output.messages"))
    if out_text is None:
        out_text, _ = _flat_prompts(attrs, "gen_ai.completion.")
    step.output_text = out_text or step.output_text


def detect(attrs: dict[str, Any]) -> bool:
    return "gen_ai.operation.name" in attrs or "gen_ai.system" in attrs or "gen_ai.provider.name" in attrs


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    op = str(attrs.get("gen_ai.operation.name", "")).lower()
    step.convention = "genai"
    step.step_type = OPERATION_TO_STEP.get(op, step.step_type)
    step.session_id = as_str(attrs.get("gen_ai.conversation.id")) or step.session_id
    step.user_id = as_str(attrs.get("enduser.id")) or as_str(attrs.get("user.id")) or step.user_id

    if step.step_type == "retrieval":
        step.query_text = as_str(attrs.get("gen_ai.retrieval.query.text")) or step.query_text
        step.top_k = as_int(attrs.get("gen_ai.retrieval.top_k"))
        if step.top_k is None:
            step.top_k = as_int(attrs.get("gen_ai.request.top_k"))
        step.data_source_id = as_str(attrs.get("gen_ai.data_source.id"))
        if "gen_ai.retrieval.documents" in attrs:
            # a JSON string, or structured (an array of kvlists) from SDKs that support it
            step.docs = json_docs(attrs["gen_ai.retrieval.documents"], "candidate", source_keys)
            if not step.docs:  # recorded and empty ("[]"): kept, so it is not taken for unrecorded
                step.output_text = as_str(attrs["gen_ai.retrieval.documents"])
    elif step.step_type == "llm":
        read_llm_io(attrs, step)
    elif step.step_type == "tool":
        step.tool_name = as_str(attrs.get("gen_ai.tool.name"))
        step.tool_arguments = as_str(attrs.get("gen_ai.tool.call.arguments"))
        step.tool_result = as_str(attrs.get("gen_ai.tool.call.result"))
        step.input_text = step.tool_arguments
        step.output_text = step.tool_result
    elif step.step_type == "agent":
        step.model = as_str(attrs.get("gen_ai.request.model"))
        in_text, last_user = json_messages_text(attrs.get("gen_ai.input.messages"))
        out_text, _ = json_messages_text(attrs.get("gen_ai.output.messages"))
        step.input_text, step.output_text = in_text, out_text
        step.query_text = last_user
        step.input_tokens = as_int(attrs.get("gen_ai.usage.input_tokens"))
        step.output_tokens = as_int(attrs.get("gen_ai.usage.output_tokens"))
    elif step.step_type == "embedding":
        step.model = as_str(attrs.get("gen_ai.request.model"))


READER = Reader("genai", detect, read, ("gen_ai.",))
