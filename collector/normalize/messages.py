"""Text read from chat messages and from wrapped input and output values: a message's content
parts, a JSON list of GenAI messages (all its text, and what the user last asked), and the human
text a framework wraps in JSON (``{"query_bundle": {"query_str": ...}}``)."""

from __future__ import annotations

from typing import Any

from collector.normalize.values import as_str, parse_json


def message_text(content: Any) -> str | None:
    """Text of a chat message content: a string, or a list of parts with text.

    GenAI "parts" are read by type: ``text`` (and untyped parts) give their ``content``/``text``,
    ``tool_call_response`` gives its ``response`` (what a tool returned is part of what a model
    read); tool calls, media and reasoning parts carry no prompt text.
    """
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                ptype = part.get("type")
                if ptype == "tool_call_response":
                    t = part.get("response", part.get("result"))
                elif ptype in (None, "text", "input_text", "output_text"):
                    t = part.get("content", part.get("text"))
                else:
                    t = None
                if isinstance(t, str):
                    parts.append(t)
                elif t is not None:
                    parts.append(as_str(t) or "")
        return "\n".join(p for p in parts if p) or None
    if isinstance(content, dict):
        return message_text(content.get("content", content.get("text", content.get("parts"))))
    return as_str(content)


def json_messages_text(value: Any) -> tuple[str | None, str | None]:
    """(all text, last user text) of a JSON list of GenAI messages ({role, parts|content})."""
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        parsed = parsed.get("messages", [parsed])
    if not isinstance(parsed, list):
        return (as_str(value) if isinstance(value, str) else None), None
    texts: list[str] = []
    last_user = None
    for m in parsed:
        if not isinstance(m, dict):
            t = message_text(m)
            if t:
                texts.append(t)
            continue
        content = m.get("parts", m.get("content"))
        t = message_text(content)
        if t:
            texts.append(t)
            if m.get("role") in ("user", "human") and not _only_tool_responses(content):
                last_user = t
    return ("\n".join(texts) if texts else None), last_user


def _only_tool_responses(content: Any) -> bool:
    """Whether a message's parts are all tool results: some SDKs send what a tool returned as a
    ``user`` message of ``tool_call_response`` parts, which is no question the user asked."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") == "tool_call_response" for p in content)
    )


def join_texts(texts: list[str | None]) -> str | None:
    kept = [t for t in texts if t]
    return "\n".join(kept) if kept else None


# Keys under which frameworks wrap the human text of an input or output value, most specific first.
_TEXT_KEYS = (
    "query_str", "query", "question", "input", "inputs", "user_input", "prompt", "answer", "response",
    "output", "outputs", "result", "text", "content",
)  # fmt: skip


# Keys that name what was asked: an output value's text is never under one of them (a graph's final
# state ``{"question": q, "documents": [...], "answer": a}`` answered a, it did not say q).
QUESTION_KEYS = frozenset(("query_str", "query", "question", "input", "inputs", "user_input", "prompt"))


def unwrap_text(value: str | None, answer: bool = False) -> str | None:
    """The human text inside a JSON-wrapped input or output value, else the value itself.

    ``{"query_bundle": {"query_str": "q"}}`` (LlamaIndex), ``{"inputs": "q", "tags": []}`` and
    ``{"outputs": "a", "kwargs": {}}`` (OpenLLMetry LangChain), ``"\"q\""`` and a list of chat
    messages all give the text. A value that holds no single obvious text is returned unchanged.
    ``answer``: the value is an output, whose text is not under a key naming what was asked.
    """
    if not value:
        return value
    s = value.strip()
    if not s or s[0] not in '{["':
        return value
    found = _text_in(parse_json(s), 0, QUESTION_KEYS if answer else frozenset())
    return found if found else value


def _text_in(parsed: Any, depth: int, skip: frozenset[str] = frozenset()) -> str | None:
    if depth > 4 or parsed is None:
        return None
    if isinstance(parsed, str):
        return parsed or None
    if isinstance(parsed, dict):
        if skip:
            parsed = {k: v for k, v in parsed.items() if k not in skip}
        for key in _TEXT_KEYS:
            v = parsed.get(key)
            if isinstance(v, str) and v:
                return v
            if isinstance(v, (dict, list)):
                inner = _text_in(v, depth + 1, skip)
                if inner:
                    return inner
        nested = [v for v in parsed.values() if isinstance(v, dict)]
        strings = [v for v in parsed.values() if isinstance(v, str) and v]
        if len(strings) == 1:
            return strings[0]
        if not strings and len(nested) == 1:
            return _text_in(nested[0], depth + 1, skip)
        return None
    if isinstance(parsed, list) and parsed:
        last = parsed[-1]
        if isinstance(last, dict):
            return (
                message_text(last.get("parts", last.get("content")))
                if ("parts" in last or "content" in last)
                else None
            )
        if isinstance(last, str) and len(parsed) == 1:
            return last
    return None
