"""GenAI content events -> the message attributes of their span (``gen_ai.input.messages`` & co.).

The GenAI semantic conventions let an instrumentor carry a model call's messages as events instead
of span attributes (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-events/):

- ``gen_ai.client.inference.operation.details``: one event a call, whose attributes are the same
  ``gen_ai.input.messages``, ``gen_ai.output.messages`` and ``gen_ai.system_instructions`` a span
  would carry (structured values, or JSON strings);
- the older one-event-a-message form: ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` (body ``{content, tool_calls, id}``) and
  ``gen_ai.choice`` (body ``{index, finish_reason, message: {role, content, tool_calls}}``).

They arrive as OTLP log records (joined to their span by trace id and span id) or as span events
(whose attributes then hold what a log record's body would). Either way ``content_attributes`` turns
them into the attributes the span would have had, so the convention reader sees one shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from collector.ingest.otlp_values import attributes as proto_attributes
from collector.normalize.values import parse_json

OPERATION_DETAILS = "gen_ai.client.inference.operation.details"
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE = "gen_ai.choice"
CONTENT_EVENTS = frozenset({OPERATION_DETAILS, CHOICE, *MESSAGE_EVENTS})

INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"


@dataclass(frozen=True, slots=True)
class ContentEvent:
    """One content event: a log record (``body`` set) or a span event (``body`` None)."""

    name: str
    attributes: dict[str, Any]
    body: Any = None
    time_unix_nano: int = 0


def _messages(value: Any) -> list[Any]:
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        parsed = parsed.get("messages", [parsed])
    return list(parsed) if isinstance(parsed, list) else []


def _payload(event: ContentEvent) -> dict[str, Any]:
    """What a message event says: its body (a log record), else its attributes (a span event)."""
    body = event.body
    if isinstance(body, str):
        parsed = parse_json(body) if body.lstrip()[:1] in ("{", "[") else None
        return parsed if isinstance(parsed, dict) else {"content": body}
    if isinstance(body, dict):
        return body
    return event.attributes


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        if content.lstrip()[:1] == "[":  # a JSON list of content blocks, written as a string
            parsed = parse_json(content)
            if isinstance(parsed, list):
                return _text_parts(parsed)
        return [{"type": "text", "content": content}]
    if isinstance(content, list):  # already parts, or content blocks ({"type": "text", "text": ...})
        return [_part(p) for p in content]
    parsed = parse_json(content)
    return _text_parts(parsed) if parsed is not None and parsed is not content else []


def _part(p: Any) -> dict[str, Any]:
    """One content block as a GenAI part: a typed part as it is; an untyped block by the one key it
    is made of (``{"text"}``; ``{"json": value}`` as its JSON; ``{"toolUse": {name, input, toolUseId}}``
    a tool call; ``{"toolResult": {toolUseId, content: [blocks]}}`` what the tool returned)."""
    if not isinstance(p, dict):
        return {"type": "text", "content": str(p)}
    if "type" in p or len(p) != 1:
        return p
    ((kind, value),) = p.items()
    if kind == "text" and isinstance(value, str):
        return {"type": "text", "content": value}
    if kind == "json":
        return {"type": "text", "content": json.dumps(value, ensure_ascii=False)}
    if kind in ("toolUse", "tool_use") and isinstance(value, dict):
        return {
            "type": "tool_call", "id": value.get("toolUseId") or value.get("id"), "name": value.get("name"),
            "arguments": value.get("input"),
        }  # fmt: skip
    if kind in ("toolResult", "tool_result") and isinstance(value, dict):
        inner = _text_parts(value.get("content"))
        text = "\n".join(str(x.get("content", "")) for x in inner if x.get("content"))
        return {
            "type": "tool_call_response",
            "id": value.get("toolUseId") or value.get("id"),
            "response": text,
        }
    return p


def _tool_calls(calls: Any) -> list[dict[str, Any]]:
    out = []
    for call in _messages(calls):
        if isinstance(call, dict):
            raw = call.get("function")
            fn: dict[str, Any] = raw if isinstance(raw, dict) else {}
            out.append({
                "type": "tool_call", "id": call.get("id"), "name": fn.get("name", call.get("name")),
                "arguments": fn.get("arguments", call.get("arguments")),
            })  # fmt: skip
    return out


def _message(role: str, payload: dict[str, Any]) -> dict[str, Any]:
    parts = _text_parts(payload.get("content"))
    if role == "tool":  # what a tool returned: its text, or the response of its result blocks
        text = "\n".join(
            str(p.get("content") or p.get("response")) for p in parts if p.get("content") or p.get("response")
        )
        parts = [{"type": "tool_call_response", "id": payload.get("id"), "response": text}] if text else []
    parts += _tool_calls(payload.get("tool_calls"))
    return {"role": payload.get("role") or role, "parts": parts}


def content_attributes(events: Iterable[ContentEvent]) -> dict[str, Any]:
    """The message attributes that content events stand for (empty when none carries content).

    Events are read in time order; ``operation.details`` events add their messages as they are,
    message events one message each, in the order the application sent them."""
    inputs: list[Any] = []
    outputs: list[Any] = []
    system: list[Any] = []
    ordered = sorted((e for e in events if e.name in CONTENT_EVENTS), key=lambda e: e.time_unix_nano)
    for e in ordered:
        if e.name == OPERATION_DETAILS:
            attrs = e.attributes
            system += _messages(attrs.get(SYSTEM))
            inputs += _messages(attrs.get(INPUT))
            outputs += _messages(attrs.get(OUTPUT))
            continue
        payload = _payload(e)
        if e.name == CHOICE:
            message = parse_json(payload.get("message"))
            # the message object; or its content alone (a list of content blocks, or a text)
            inner: dict[str, Any] = (
                message
                if isinstance(message, dict)
                else {"content": message}
                if isinstance(message, (list, str)) and message != ""
                else payload
            )
            out = _message("assistant", inner)
            if payload.get("finish_reason") is not None:
                out["finish_reason"] = payload.get("finish_reason")
            if out["parts"]:
                outputs.append(out)
            continue
        role = MESSAGE_EVENTS[e.name]
        msg = _message(role, payload)
        if not msg["parts"]:
            continue
        if role == "system":
            system += msg["parts"]
        else:
            inputs.append(msg)
    found: dict[str, Any] = {}
    if system:
        found[SYSTEM] = system
    if inputs:
        found[INPUT] = inputs
    if outputs:
        found[OUTPUT] = outputs
    return found


TOOL_ARGUMENTS, TOOL_RESULT = "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"


def with_content(attrs: dict[str, Any], events: Iterable[ContentEvent]) -> dict[str, Any]:
    """A span's attributes with what its content events say added: the attributes the reader would
    have seen had the instrumentor put the messages on the span. The span's own attributes win.
    On a tool call's span (``execute_tool``) the events are the call itself: the message it was
    given is its arguments, the choice it gave its result."""
    found = content_attributes(events)
    if not found:
        return attrs
    merged = dict(attrs)
    for key, value in found.items():
        if merged.get(key) in (None, "", "[]"):
            merged[key] = value
    if attrs.get("gen_ai.operation.name") == "execute_tool":
        for key, messages in ((TOOL_ARGUMENTS, found.get(INPUT)), (TOOL_RESULT, found.get(OUTPUT))):
            text = _said(messages or [])
            if text and merged.get(key) in (None, ""):
                merged[key] = text
    return merged


def _said(messages: list[Any]) -> str | None:
    """The text of messages' parts (a tool's arguments or result), or None."""
    texts = []
    for m in messages:
        for p in m.get("parts", []) if isinstance(m, dict) else []:
            t = p.get("content") or p.get("response") if isinstance(p, dict) else None
            if isinstance(t, str) and t:
                texts.append(t)
    return "\n".join(texts) or None


def span_content_events(events: Any) -> list[ContentEvent]:
    """The content events among a span's events: OTLP ``Span.Event`` messages, or the list of
    ``{name, time_unix_nano, attributes}`` objects the ``spans.events`` column holds."""
    out: list[ContentEvent] = []
    for e in events or ():
        if isinstance(e, dict):
            name, attrs, t = e.get("name"), e.get("attributes"), e.get("time_unix_nano")
            if name in CONTENT_EVENTS and isinstance(attrs, dict):
                out.append(ContentEvent(str(name), attrs, None, int(t) if isinstance(t, int) else 0))
        elif getattr(e, "name", None) in CONTENT_EVENTS:
            out.append(ContentEvent(e.name, proto_attributes(e.attributes), None, e.time_unix_nano))
    return out
