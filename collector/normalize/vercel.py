"""The Vercel AI SDK's telemetry (``experimental_telemetry: { isEnabled: true }``) -> Step.

The SDK writes its own ``ai.*`` namespace (read from its source, ``ai`` 5.x): every span names its
operation in ``ai.operationId``:

- ``ai.generateText`` / ``ai.streamText`` / ``ai.generateObject`` / ``ai.streamObject``: one call of
  the SDK, however many steps it took. ``ai.prompt`` is the JSON of ``{system, prompt, messages}``,
  ``ai.response.text`` (``ai.response.object``) the final answer. Read as a ``chain`` whose query is
  the prompt, or the last user message.
- ``….doGenerate`` / ``….doStream``: one model call (``llm``). ``ai.prompt.messages`` is the JSON
  of the language-model prompt: ``[{role, content}]``, content a string or parts ``{type: "text",
  text}``, ``{type: "tool-call", toolName, input}``, ``{type: "tool-result", output: {type: "json" |
  "text", value}}``; ``ai.response.text`` and ``ai.response.toolCalls`` what it returned;
  ``ai.usage.promptTokens`` / ``completionTokens`` (``inputTokens`` / ``outputTokens`` when
  streamed; also ``gen_ai.usage.*``), ``ai.model.id``,
  ``ai.response.model``. These spans also carry ``gen_ai.system`` without ``gen_ai.operation.name``,
  so this reader comes before the GenAI one.
- ``ai.toolCall``: a tool's execution: ``ai.toolCall.name``, ``.args`` and ``.result`` (JSON). A
  tool whose result lists documents retrieved them (its candidates).
- ``ai.embed`` / ``ai.embedMany`` and their ``doEmbed``: embeddings.

What a tool result gave the model is in the next model call's prompt as the tool-result part: its
documents' texts are written out there, so the context is derived from what the model was given
(a tool's ``toModelOutput`` may keep fewer documents than the tool returned).
"""

from __future__ import annotations

from typing import Any

from collector.normalize import doclists
from collector.normalize.step import Reader, Step, StepType
from collector.normalize.values import as_int, as_str, parse_json

_CALLS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_MODEL_CALLS = tuple(f"{c}.do{'Stream' if 'stream' in c else 'Generate'}" for c in _CALLS)
_EMBEDS = ("ai.embed", "ai.embedMany", "ai.embed.doEmbed", "ai.embedMany.doEmbed")


def detect(attrs: dict[str, Any]) -> bool:
    return isinstance(attrs.get("ai.operationId"), str)


def _step_type(op: str) -> StepType:
    if op in _MODEL_CALLS:
        return "llm"
    if op in _CALLS:
        return "chain"
    if op == "ai.toolCall":
        return "tool"
    if op in _EMBEDS:
        return "embedding"
    return "other"


def _part_text(part: Any) -> str | None:
    """The text a prompt part gave the model: text, or a tool result (documents by their texts)."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text":
        return as_str(part.get("text"))
    if kind != "tool-result":
        return None  # tool calls, files, reasoning: no prompt text
    output = part.get("output")
    value = output.get("value") if isinstance(output, dict) else output
    docs = doclists.documents_in(value, "context", ())
    if docs:
        return "\n".join(d.content for d in docs if d.content)
    return value if isinstance(value, str) else as_str(value)


def messages_text(value: Any) -> tuple[str | None, str | None]:
    """(all the text the messages gave the model, the last user message's text)."""
    messages = parse_json(value)
    if not isinstance(messages, list):
        return None, None
    texts: list[str] = []
    last_user = None
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        parts = content if isinstance(content, list) else [content]
        text = "\n".join(t for t in map(_part_text, parts) if t) or None
        if text:
            texts.append(text)
            if m.get("role") == "user":
                last_user = text
    return ("\n".join(texts) or None), last_user


def _call_prompt(value: Any) -> tuple[str | None, str | None]:
    """(input text, query) of an SDK call's ``ai.prompt``: ``{system, prompt, messages}``."""
    parsed = parse_json(value)
    if not isinstance(parsed, dict):
        text = as_str(value)
        return text, text
    system = parsed.get("system")
    prompt = parsed.get("prompt")
    if isinstance(prompt, list):  # a prompt given as messages
        text, query = messages_text(prompt)
    elif parsed.get("messages") is not None:
        text, query = messages_text(parsed["messages"])
    else:
        text = query = as_str(prompt)
    joined = "\n".join(t for t in (system if isinstance(system, str) else None, text) if t) or None
    return joined, query


def _first_int(attrs: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        n = as_int(attrs.get(key))
        if n is not None:
            return n
    return None


def _tokens(attrs: dict[str, Any], step: Step) -> None:
    # generateText writes promptTokens / completionTokens, streamText inputTokens / outputTokens
    step.input_tokens = _first_int(
        attrs, ("ai.usage.inputTokens", "ai.usage.promptTokens", "gen_ai.usage.input_tokens")
    )
    step.output_tokens = _first_int(
        attrs, ("ai.usage.outputTokens", "ai.usage.completionTokens", "gen_ai.usage.output_tokens")
    )
    step.total_tokens = as_int(attrs.get("ai.usage.totalTokens"))
    if step.total_tokens is None and step.input_tokens is not None and step.output_tokens is not None:
        step.total_tokens = step.input_tokens + step.output_tokens


def _answer(attrs: dict[str, Any]) -> str | None:
    text = attrs.get("ai.response.text")
    if isinstance(text, str) and text:
        return text
    obj = attrs.get("ai.response.object")
    return as_str(obj) if obj not in (None, "") else None


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    op = str(attrs.get("ai.operationId", ""))
    step.convention = "vercel_ai"
    step.step_type = _step_type(op)
    step.model = as_str(attrs.get("ai.response.model")) or as_str(attrs.get("ai.model.id"))
    step.session_id = as_str(attrs.get("ai.telemetry.metadata.sessionId"))
    step.user_id = as_str(attrs.get("ai.telemetry.metadata.userId"))
    if step.step_type == "llm":
        step.input_text, step.query_text = messages_text(attrs.get("ai.prompt.messages"))
        step.output_text = _answer(attrs)
        _tokens(attrs, step)
    elif step.step_type == "chain":
        step.input_text, step.query_text = _call_prompt(attrs.get("ai.prompt"))
        step.output_text = _answer(attrs)
        _tokens(attrs, step)
    elif step.step_type == "tool":
        step.tool_name = as_str(attrs.get("ai.toolCall.name"))
        step.tool_arguments = as_str(attrs.get("ai.toolCall.args"))
        step.tool_result = as_str(attrs.get("ai.toolCall.result"))
        step.input_text, step.output_text = step.tool_arguments, step.tool_result
    elif step.step_type == "embedding":
        step.input_text = as_str(attrs.get("ai.value")) or as_str(attrs.get("ai.values"))


READER = Reader("vercel_ai", detect, read, ("ai.", "gen_ai."))
