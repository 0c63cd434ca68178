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

Documents are recognised by shape too: a list of objects, each carrying a text (under a usual name,
``page_content``, ``content``, ``text`` ..., or the field that reads as a passage in every item:
``collector.normalize.documents``), at least one of them also an id, a score or metadata
(what tells a document list from a list of content blocks), wrapped or not (LlamaIndex's
``{"node": {...}, "score"}``, ``{"document": {...}, "score"}``, LangChain's ``{"lc", "kwargs"}``),
found anywhere in a value.

Nothing here raises on odd input: a value that holds no single text gives None, never a guess.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import orjson

from collector.normalize import documents
from collector.normalize.common import QUESTION_KEYS, Doc, Stage, make_doc

MAX_DEPTH = 24  # levels of a value looked into (a hostile payload nests without end); a wrapper takes 1-3
_JSON_HEADS = frozenset('{["')

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
# the usual names of a document's fields (``collector.normalize.documents`` infers the others)
DOC_TEXT_FIELDS = documents.TEXT_FIELDS


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
        if not s or s[0] not in _JSON_HEADS:
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
        if isinstance(child, (dict, list)) or (isinstance(child, str) and child.lstrip()[:1] in _JSON_HEADS):
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


# --------------------------------------------------------------------------------------------------
# documents by shape


def _doc_body(item: Any) -> dict[str, Any] | None:
    """A document item with its wrapper taken off, or None when it is no document-like object."""
    d = parsed(item)
    if not isinstance(d, dict) or is_message(d):
        return None
    if documents.usual_text(d) is not None:
        return d
    # a wrapper: the one object it holds is the document, with the wrapper's own scalars (its
    # score) added (LlamaIndex's {"node", "score"}, {"document", "score"}, a store's {"record", "score"})
    inner_key = None
    for key, x in d.items():
        if key in documents.META_FIELDS:
            continue  # (a document's metadata is no wrapper of it)
        if isinstance(x, dict) or (isinstance(x, str) and x.lstrip()[:1] == "{"):
            if inner_key is not None:
                return d  # two objects: no wrapper of one
            inner_key = key
    if inner_key is None:
        return d
    inner = parsed(d[inner_key])
    if not isinstance(inner, dict) or is_message(inner):
        return d
    if documents.usual_text(inner) is None and (documents.has_words(d) or not documents.has_words(inner)):
        return d  # the text is the wrapper's own (or nowhere): no wrapper
    merged = dict(inner)
    for key, x in d.items():
        if key != inner_key and key not in merged and not isinstance(x, (dict, list)):
            merged[key] = x
    return merged


def _as_docs(items: list[Any], stage: Stage, source_keys: tuple[str, ...]) -> list[Doc] | None:
    """The documents of a list that is a document list (see the module doc), else None."""
    bodies = [_doc_body(x) for x in items]
    if not bodies or any(b is None for b in bodies):
        return None
    found: list[dict[str, Any]] = [b for b in bodies if b is not None]
    fields = documents.infer(found, strict=True)
    if fields is None or not documents.described(found, fields):
        return None  # no text in some item; or content blocks, not documents
    docs = []
    for i, b in enumerate(found):
        docs.append(
            make_doc(
                stage,
                i,
                documents.ident(b, fields),
                documents.text(b, fields),
                documents.score(b, fields),
                documents.metadata(b),
                source_keys,
            )
        )
    return docs


def documents_in(value: Any, stage: Stage, source_keys: tuple[str, ...], depth: int = 0) -> list[Doc] | None:
    """The first document list in a value, wherever it sits (depth first), or None."""
    if depth > MAX_DEPTH:
        return None
    v = parsed(value)
    if isinstance(v, list):
        if v and any(
            isinstance(x, (dict, list)) or (isinstance(x, str) and x.lstrip()[:1] == "{") for x in v
        ):
            found = _as_docs(v, stage, source_keys)
            if found is not None:
                return found
        children: list[Any] = v
    elif isinstance(v, dict):
        children = list(v.values())
    else:
        return None
    for child in children:
        if isinstance(child, (dict, list)) or (isinstance(child, str) and child.lstrip()[:1] in _JSON_HEADS):
            found = documents_in(child, stage, source_keys, depth + 1)
            if found:
                return found
    return None


def is_document_list(value: Any, source_keys: tuple[str, ...]) -> list[Doc] | None:
    """The documents of a value that *is* a document list (itself, or the one list of an object
    such as ``{"documents": [...], "count": n}``), wrappers of rules 1-3 off; None otherwise. Unlike
    ``documents_in`` it does not look inside larger payloads (a response object's source nodes)."""
    v = parsed(value)
    for _ in range(MAX_DEPTH):
        if isinstance(v, dict):
            values = [parsed(y) for y in v.values()]
            lists = [x for x in values if isinstance(x, (list, dict))]
            if len(lists) != 1 or any(isinstance(x, str) and x.strip() for x in values):
                return None  # (a text beside the list: an answer with its sources, not a retrieval)
            v = lists[0]
            continue
        break
    if not isinstance(v, list) or not v:
        return None
    return _as_docs(v, "candidate", source_keys)


# --------------------------------------------------------------------------------------------------
# attributes flattened one field per key

MAX_FLAT_INDEX = 1_000  # a list position past this in a key is no list a reader rebuilds
_INDEX_SEGMENT = re.compile(r"\.(\d+)(?=\.|$)")


def unflatten(attrs: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
    """Attributes written one field per key with list positions (``acme.results.0.text``,
    ``x.input_messages.1.message.content``: OpenTelemetry attributes cannot nest, so many
    instrumentations flatten lists this way) with each such group rebuilt as the value it flattens:
    ``{"acme.results": [{"text": ...}, ...]}``, the dotted rest of each key nested
    (``{"message": {"content": ...}}``), positions in order, lists inside lists rebuilt too. Keys
    starting with ``keep`` (a reader's own) and keys without a position stay as they are; a rebuilt
    key already present is not overwritten. Returns ``attrs`` itself when nothing is flattened."""
    groups: dict[str, dict[int, dict[str, Any]]] = {}
    flat: dict[str, str] = {}  # each flattened key -> its group
    for key, value in attrs.items():
        if not any(c.isdigit() for c in key) or key.startswith(keep):
            continue
        m = _INDEX_SEGMENT.search(key)
        if m is None or int(m.group(1)) > MAX_FLAT_INDEX:
            continue
        rest = key[m.end() + 1 :]
        groups.setdefault(key[: m.start()], {}).setdefault(int(m.group(1)), {})[rest] = value
        flat[key] = key[: m.start()]
    if not groups:
        return attrs
    out = {k: v for k, v in attrs.items() if k not in flat or flat[k] in attrs}
    for prefix, items in groups.items():
        if prefix not in attrs:
            out[prefix] = [_nested(items[i]) for i in sorted(items)]
    return out


def _nested(fields: dict[str, Any]) -> Any:
    """One item's fields (the rest of each key after its position) as the value they describe."""
    if set(fields) == {""}:
        return fields[""]
    flat = unflatten({k: v for k, v in fields.items() if k})
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if any(c.isdigit() for c in key) and _INDEX_SEGMENT.search(key):
            continue  # rebuilt under its prefix
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
            node = nxt
        node[parts[-1]] = value
    return out
