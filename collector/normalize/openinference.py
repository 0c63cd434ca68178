"""OpenInference (Arize) attributes -> Step.

Spec: https://github.com/Arize-ai/openinference/tree/main/spec — flattened keys such as
``retrieval.documents.{i}.document.content`` and ``llm.input_messages.{i}.message.content``.
"""

from __future__ import annotations

import re
from typing import Any

from collector.normalize.docvalues import openinference_docs
from collector.normalize.messages import join_texts, message_text, unwrap_text
from collector.normalize.step import Reader, Step, StepType
from collector.normalize.values import as_int, as_str, indexed, parse_json

_TEMPLATE_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_QUERY_VARS = ("query_str", "query", "question", "input", "user_input")

KIND_TO_STEP: dict[str, StepType] = {
    "LLM": "llm",
    "RETRIEVER": "retrieval",
    "RERANKER": "rerank",
    "TOOL": "tool",
    "AGENT": "agent",
    "CHAIN": "chain",
    "EMBEDDING": "embedding",
    "GUARDRAIL": "other",
    "EVALUATOR": "other",
    "PROMPT": "other",
}


def _messages(attrs: dict[str, Any], prefix: str) -> tuple[str | None, str | None]:
    """(all text, last user text) of ``prefix.{i}.message.{role,content,contents}``."""
    texts: list[str | None] = []
    last_user = None
    for _, sub in sorted(indexed(attrs, prefix).items()):
        text = sub.get("message.content")
        if text is None:
            parts = [
                v
                for k, v in sorted(sub.items())
                if k.startswith("message.contents.") and k.endswith("message_content.text")
            ]
            text = "\n".join(str(p) for p in parts) if parts else None
        text = message_text(text)
        texts.append(text)
        if text and sub.get("message.role") in ("user", "human"):
            last_user = text
    return join_texts(texts), last_user


def _template_text(attrs: dict[str, Any]) -> tuple[str | None, str | None]:
    """(rendered prompt, query variable) from ``llm.prompt_template.{template,variables}``.

    LlamaIndex's ``LLM.predict`` span carries the template and its variables but no rendered
    prompt (its ``input.value`` is a repr of the template object); rendering gives what the model read.
    """
    variables = parse_json(attrs.get("llm.prompt_template.variables"))
    if not isinstance(variables, dict):
        return None, None
    query = next((str(variables[k]) for k in _QUERY_VARS if isinstance(variables.get(k), str)), None)
    template = attrs.get("llm.prompt_template.template")
    if not isinstance(template, str):
        return None, query

    def sub(m: re.Match[str]) -> str:
        v = variables.get(m.group(1))
        return m.group(0) if v is None else (v if isinstance(v, str) else as_str(v) or "")

    return _TEMPLATE_VAR.sub(sub, template), query


def detect(attrs: dict[str, Any]) -> bool:
    return "openinference.span.kind" in attrs


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...], keys: str | None = None) -> None:
    kind = str(attrs.get("openinference.span.kind", "")).upper()
    step.convention = "openinference"
    step.step_type = KIND_TO_STEP.get(kind, "other")
    input_value = as_str(attrs.get("input.value"))
    output_value = as_str(attrs.get("output.value"))
    step.session_id = as_str(attrs.get("session.id"))
    step.user_id = as_str(attrs.get("user.id"))

    if step.step_type == "retrieval":
        step.query_text = unwrap_text(input_value)
        step.docs = openinference_docs(attrs, "retrieval.documents.", "candidate", source_keys, keys)
        step.input_text, step.output_text = input_value, output_value
    elif step.step_type == "rerank":
        step.query_text = as_str(attrs.get("reranker.query")) or unwrap_text(input_value)
        step.top_k = as_int(attrs.get("reranker.top_k"))
        step.model = as_str(attrs.get("reranker.model_name"))
        step.docs = openinference_docs(attrs, "reranker.input_documents.", "rerank_input", source_keys, keys)
        step.docs += openinference_docs(attrs, "reranker.output_documents.", "reranked", source_keys, keys)
        step.input_text, step.output_text = input_value, output_value
    elif step.step_type == "llm":
        step.model = as_str(attrs.get("llm.model_name"))
        step.input_tokens = as_int(attrs.get("llm.token_count.prompt"))
        step.output_tokens = as_int(attrs.get("llm.token_count.completion"))
        step.total_tokens = as_int(attrs.get("llm.token_count.total"))
        in_text, last_user = _messages(attrs, "llm.input_messages.")
        if in_text is None:
            prompts = indexed(attrs, "llm.prompts.")
            if prompts:
                in_text = join_texts(
                    [as_str(s.get("prompt.text", s.get(""))) for _, s in sorted(prompts.items())]
                )
            elif isinstance(attrs.get("llm.prompts"), list):
                in_text = join_texts([as_str(p) for p in attrs["llm.prompts"]])
            elif isinstance(attrs.get("llm.prompts"), str):
                in_text = attrs["llm.prompts"]
        rendered, template_query = _template_text(attrs)
        step.input_text = in_text or rendered or input_value
        step.query_text = last_user or template_query
        out_text, _ = _messages(attrs, "llm.output_messages.")
        step.output_text = out_text or output_value
    elif step.step_type == "tool":
        step.tool_name = as_str(attrs.get("tool.name"))
        # input.value holds the call's arguments; tool.parameters is usually the parameter schema
        step.tool_arguments = input_value or as_str(attrs.get("tool.parameters"))
        step.tool_result = output_value
        step.input_text, step.output_text = input_value, output_value
    elif step.step_type == "embedding":
        step.model = as_str(attrs.get("embedding.model_name"))
        step.input_text = input_value
    else:
        step.input_text, step.output_text = input_value, output_value


READER = Reader(
    "openinference",
    detect,
    read,
    ("openinference.", "llm.", "input.", "output.", "retrieval.", "reranker.", "embedding.", "tool."),
)
