"""Structural reading: what a payload says by its shape, whatever its keys are called
(docs/architecture.md, Conventions and readers).

Convention readers are exact where they apply. Beneath them this layer reads any value by one set
of unwrapping rules, applied recursively until none applies:

1. a string holding JSON (an object, an array or a quoted string) is its parsed value: JSON inside
   JSON strings, layer after layer; a serialized constructor call (LangChain's ``{"lc", "type":
   "constructor", "kwargs"}``) is the object its arguments describe;
2. a decorated call's ``{"args": [...], "kwargs": {...}}`` is the one text among its arguments;
3. a pipeline's ``{"data": {component: {...}}}`` is its inputs by component, and an object whose
   components all ask one text asks that text;
4. a message ``{"role", "content" | "parts" | "text"}`` (or typed by its speaker: ``{"type":
   "human", "content"}``, ``{"type": "human", "data": {...}}``; or a pair ``["user", text]`` in a
   list of messages) is its content, and one whose parts are all tool results speaks for a
   tool, not the user; a content-block list
   (``[{"type": "text", "text": ...}]``, GenAI parts, plain strings) is its text joined;
5. a list of messages is found under any key (``{"messages": [...]}``, ``{"input": {"history": ...}}``);
6. an object with a usual text key (``query``, ``question``, ``input``, ``prompt``, ``output``,
   ``text`` ...) is that text, and an object of one entry is its entry.

Documents are recognised by shape too, after these rules (``collector.normalize.doclists``, with
``collector.normalize.documents`` saying which field is which), and attributes flattened one field
per key are rebuilt before any of this reads them (``collector.normalize.flat``).

Nothing here raises on odd input: a value that holds no single text gives None, never a guess.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from collector.normalize.messages import QUESTION_KEYS

MAX_DEPTH = 24  # levels of a value looked into (a hostile payload nests without end); a wrapper takes 1-3
JSON_HEADS = frozenset('{["')  # what a string holding JSON starts with

# keys whose value is the human text of an object, most specific first
TEXT_KEYS = (
    "query_str", "query", "question", "user_input", "input", "inputs", "prompt", "message", "answer",
    "response", "output", "outputs", "result", "completion", "text", "content",
)  # fmt: skip
_ROLE_KEYS = ("role", "_role")
_SPEAKER_TYPES = frozenset(("human", "ai", "system", "tool", "user", "assistant", "function", "developer"))
_CONTENT_KEYS = ("content", "parts", "text", "_content", "contents")
_BLOCK_TYPES = frozenset(("text", "input_text", "output_text"))
_TOOL_RESULT_TYPES = frozenset(
    ("tool_call_response", "tool_result", "function_response", "function_call_output")
)
_TOOL_CALL_KEYS = ("tool_calls", "toolCalls", "tool_call_id", "toolCallId", "toolName", "function_call")
_PART_TEXT_KEYS = ("text", "content", "response", "result")  # what a typed part's text may sit under


class Message(NamedTuple):
    """One chat message found by shape: its role (lower case) and its text ('' for none)."""

    role: str
    text: str


def _constructed(value: Any) -> Any:
    """A serialized constructor call (``{"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}``,
    how LangChain writes its messages and documents) is the object its arguments describe."""
    if isinstance(value, dict) and value.get("type") == "constructor" and "lc" in value:
        kwargs = value.get("kwargs")
        if isinstance(kwargs, dict):
            return kwargs
    if (
        isinstance(value, dict)
        and len(value) == 2
        and isinstance(value.get("data"), dict)
        and "type" in value
    ):
        return value["data"]  # a typed envelope (``{"type": "human", "data": {"content": ...}}``)
    return value


def parsed(value: Any) -> Any:
    """Rule 1: a string holding JSON is its parsed value, layer after layer (a serialized constructor
    call its arguments); other values as they are."""
    for _ in range(MAX_DEPTH):
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if not isinstance(value, str):
            return _constructed(value)
        s = value.lstrip()
        if not s or s[0] not in JSON_HEADS:
            return value
        try:
            inner = orjson.loads(s)
        except orjson.JSONDecodeError:
            return value
        if inner == value:
            return value
        value = inner
    return _constructed(value)


def _role(d: dict[str, Any]) -> str | None:
    for key in _ROLE_KEYS:
        r = d.get(key)
        if isinstance(r, str) and r:
            return r.lower()
    kind = d.get("type")  # a message typed by its speaker (LangChain's ``{"type": "human", "content"}``)
    if isinstance(kind, str) and kind.lower() in _SPEAKER_TYPES:
        return kind.lower()
    return None


def _content(d: dict[str, Any]) -> Any:
    for key in _CONTENT_KEYS:
        if key in d:
            return d[key]
    return None


def _speaker(d: dict[str, Any]) -> str:
    """A message's role, ``tool`` for one whose parts are all tool results (some SDKs send what a
    tool returned as a ``user`` message of such parts: no question the user asked)."""
    role = _role(d) or ""
    content = parsed(_content(d))
    if isinstance(content, list) and content and all(_tool_part(p) for p in content):
        return "tool"
    return role


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_").replace("-", "_")


def _tool_part(p: Any) -> bool:
    """A message part that carries what a tool returned: typed so (``{"type": "tool_result"}``) or
    keyed so (Gemini's ``{"function_response": {...}}`` / ``{"functionResponse": {...}}``)."""
    if not isinstance(p, dict):
        return False
    if str(p.get("type", "")).replace("-", "_") in _TOOL_RESULT_TYPES:
        return True
    return len(p) == 1 and _snake(next(iter(p))) in _TOOL_RESULT_TYPES


def is_message(d: Any) -> bool:
    return isinstance(d, dict) and _role(d) is not None and any(k in d for k in _CONTENT_KEYS)


def _pair_message(x: Any) -> Any:
    """A message written as a pair ``[role, text]`` (``("user", "...")``, a shorthand frameworks
    accept) as the object it stands for; anything else as it is."""
    if (
        isinstance(x, list)
        and len(x) == 2
        and isinstance(x[0], str)
        and x[0].lower() in _SPEAKER_TYPES
        and isinstance(x[1], (str, list, dict))
    ):
        return {"role": x[0], "content": x[1]}
    return x


def _one_entry(x: Any) -> Any:
    """An object of one entry that holds an object (``{"message": {"role", "content"}}``, as a
    flattened list is rebuilt) as that object; anything else as it is."""
    if isinstance(x, dict) and len(x) == 1:
        (inner,) = x.values()
        inner = parsed(inner)
        if isinstance(inner, dict):
            return inner
    return x


def _messages_here(items: list[Any], depth: int) -> list[Message] | None:
    """The messages of a list that is one (every item a message), else None."""
    if not items:
        return None
    values = [_pair_message(_one_entry(parsed(x))) for x in items]
    if not all(is_message(x) for x in values):
        return None
    return [Message(_speaker(x), text_of(_content(x), depth + 1) or "") for x in values]


def message_list(value: Any, depth: int = 0) -> list[Message] | None:
    """Rule 5: the first list of messages in a value, under any key (depth first); None when none."""
    v = parsed(value)
    if depth > MAX_DEPTH:
        return None
    if isinstance(v, list):
        found = _messages_here(v, depth)
        if found is not None:
            return found
        children: list[Any] = v
    elif isinstance(v, dict):
        if is_message(v):
            return [Message(_speaker(v), text_of(_content(v), depth + 1) or "")]
        children = list(v.values())
    else:
        return None
    for child in children:
        if isinstance(child, (dict, list)) or (isinstance(child, str) and child.lstrip()[:1] in JSON_HEADS):
            found = message_list(child, depth + 1)
            if found:
                return found
    return None


def calls_tool(value: Any, depth: int = 0) -> bool:
    """Whether a value holds a tool call (an object with ``tool_calls``, ``function_call`` ...): what
    a model answers when it calls a tool instead of speaking."""
    if depth > 6:
        return False
    v = parsed(value)
    if isinstance(v, dict):
        if any(v.get(k) for k in _TOOL_CALL_KEYS):
            return True
        children: list[Any] = list(v.values())
    elif isinstance(v, list):
        children = v
    else:
        return False
    return any(calls_tool(c, depth + 1) for c in children[:64] if isinstance(c, (dict, list, str)))


def last_user_text(messages: list[Message]) -> str | None:
    """The text of the last user message (the question of the current turn)."""
    for m in reversed(messages):
        if m.role in ("user", "human") and m.text:
            return m.text
    return None


def join_messages(messages: list[Message]) -> str | None:
    return "\n".join(m.text for m in messages if m.text.strip()) or None


def _is_block_type(t: Any) -> bool:
    return isinstance(t, str) and t in _BLOCK_TYPES


def _call_text(v: dict[str, Any], depth: int) -> str | None:
    """Rule 2: the one text among a decorated call's arguments (a method's ``self`` arrives as its
    class name: with several texts, bare identifiers are left out)."""
    args, kwargs = v.get("args"), v.get("kwargs")
    values = [
        *(args if isinstance(args, list) else []),
        *(kwargs.values() if isinstance(kwargs, dict) else []),
    ]
    texts = [t for t in (text_of(a, depth + 1) for a in values if a is not None) if t]
    if len(texts) > 1:
        texts = [t for t in texts if not t.isidentifier()]
    distinct = list(dict.fromkeys(texts))
    return distinct[0] if len(distinct) == 1 else None


def text_of(value: Any, depth: int = 0) -> str | None:
    """The human text of a value with every wrapper taken off (rules 1-6), or None when it holds no
    single text (an object of several unrelated fields, a number, nothing)."""
    if depth > MAX_DEPTH:
        return None
    v = parsed(value)
    if isinstance(v, str):
        return v if v.strip() else None
    if isinstance(v, list):
        return _list_text(v, depth)
    if not isinstance(v, dict) or not v:
        return None
    if is_message(v):
        return text_of(_content(v), depth + 1)
    kind = v.get("type")
    if isinstance(kind, str) and not _is_block_type(kind) and not any(k in v for k in _PART_TEXT_KEYS):
        return None  # a typed part that carries no text: a tool call, an image, reasoning
    if _is_block_type(kind) and isinstance(v.get("text", v.get("content")), (str, dict, list)):
        return text_of(v.get("text", v.get("content")), depth + 1)
    if "args" in v and set(v) <= {"args", "kwargs"}:
        return _call_text(v, depth)
    if any(k in v for k in _TOOL_CALL_KEYS):
        return None  # a tool call: its arguments are no one's text
    # each entry is read once (reading it again under each rule would cost 3^depth)
    read: dict[str, str | None] = {}
    for key in TEXT_KEYS:
        if key in v:
            t = read[key] = text_of(v[key], depth + 1)
            if t:
                return t
    # (a part's ``type`` names its kind, never its text: ``{"type": "text"}`` recorded without content)
    present = [
        (k, x) for k, x in v.items() if k != "type" and x is not None and x != "" and x != [] and x != {}
    ]
    if len(present) == 1:
        k, x = present[0]
        return read[k] if k in read else text_of(x, depth + 1)
    messages = message_list(v, depth + 1)
    if messages:
        return join_messages(messages)
    # inputs by component (rule 3): one text asked of them all
    asked = set()
    for k, x in present:
        if isinstance(x, (dict, list)):
            t = read[k] if k in read else text_of(x, depth + 1)
            if t:
                asked.add(t)
    return asked.pop() if len(asked) == 1 else None


def _list_text(items: list[Any], depth: int) -> str | None:
    messages = _messages_here(items, depth)
    if messages is not None:
        return join_messages(messages)
    texts: list[str] = []
    for item in items:
        x = parsed(item)
        if isinstance(x, str):
            texts.append(x)
        elif isinstance(x, dict) and (_is_block_type(x.get("type")) or set(x) <= {"type", "text", "content"}):
            t = text_of(x, depth + 1)  # a content block
            if t is None:
                return None
            texts.append(t)
        elif isinstance(x, dict) and isinstance(x.get("type"), str):
            t = text_of(x, depth + 1)  # another typed part: its text if it has one (a tool's response)
            if t:
                texts.append(t)
        elif isinstance(x, dict) and len(x) == 1 and isinstance(_one_entry(x), dict):
            t = text_of(x, depth + 1)  # a part in a wrapper of one entry (``{"message_content": {...}}``)
            if t is None:
                return None
            texts.append(t)
        elif len(items) == 1:
            return text_of(x, depth + 1)
        else:
            return None  # a list of objects that are neither messages nor blocks holds no one text
    return "\n".join(t for t in texts if t.strip()) or None


def answer_of(value: Any) -> str | None:
    """The answer in an output value: the last message of a message list in it that no user,
    system or tool spoke, else its text, never under a key naming what was asked (a graph's final
    state ``{"question": q, "documents": [...], "answer": a}`` answered a)."""
    v = parsed(value)
    if isinstance(v, dict) and not is_message(v):
        v = {k: x for k, x in v.items() if k not in QUESTION_KEYS}
        if not v:
            return None
    messages = message_list(v)
    if messages:
        said = [m for m in messages if m.role not in ("user", "human", "system", "tool") and m.text]
        return said[-1].text if said else None
    return text_of(v)


def query_of(value: Any) -> str | None:
    """The question in a value: the last user message of a message list in it, else its text."""
    messages = message_list(value)
    if messages:
        return last_user_text(messages)
    return text_of(value)
