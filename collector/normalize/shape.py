"""The structural layer under the convention readers, for one span (docs/architecture.md,
Conventions and readers).

``fill`` runs after the convention reader and fills only what it left empty, by the shape of the
payloads (``collector.normalize.structural``), never by a convention's attribute names. Attributes
flattened one field per key (``acme.results.0.text``) are read as the list they flatten
(``collector.normalize.flat``), keys a reader owns aside; document lists are found by
``collector.normalize.doclists``:

- a span no reader claimed (convention ``unknown``) is read whole: a document list anywhere in its
  attributes makes it a retrieval with those candidates; a message list on its input side gives its
  input and query (the last user message), text on its output side its output; messages in and text
  out make it a model call (``llm``). Its convention is then ``structural``.
- a span a reader claimed keeps every field the reader set, and every field it left empty on
  purpose (named in ``Step.provenance`` by the reader); the layer adds: a tool call's arguments
  and result, and an agent's input and output, recorded under keys the reader does not know; the
  documents of a task or chain whose output *is* a document list (it retrieved; given documents in
  its input too, it reranked or cut them: a rerank), of a retrieval or tool whose output
  holds one (wrapped in JSON strings, call results, objects) or, recording no output, holds one
  under a key the reader does not know (not on the input side), the query of such a retrieval, and a
  model call's input or output recorded under keys the reader does not know. A payload written as a
  Python object's repr rather than JSON is read for its documents too (``collector.normalize.pyrepr``).

Keys of OpenTelemetry's transport and infrastructure namespaces (``http.``, ``url.``, ``db.`` ...,
``INFRASTRUCTURE``) are never read as content: an HTTP server span's captured request headers are
no question. Which side a key is on (input or output) is read from the words it is made of (``input``,
``prompt``, ``request`` / ``output``, ``response``, ``completion`` ...), so a vendor's own namespace
reads the same as a known one. Plain text counts only when it has more than one word (or is CJK
text, written without spaces): a method name or a status (``GET``, ``OK``) is no prompt. Each field filled is named in ``Step.provenance`` with the
rule and the key it came from.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from collector.normalize import doclists, flat, pyrepr, structural
from collector.normalize.step import Step
from collector.normalize.values import as_str

Side = Literal["in", "out"]

_OUT_WORDS = frozenset((
    "output", "outputs", "response", "responses", "completion", "completions", "answer", "result", "results",
    "reply", "replies", "choices", "generation", "generations",
))  # fmt: skip
_IN_WORDS = frozenset((
    "input", "inputs", "prompt", "prompts", "request", "query", "question", "messages", "message", "args",
    "arguments", "history", "instructions",
))  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")
# OpenTelemetry's namespaces of transport and infrastructure (a request's headers, its URL, the
# database statement, the host): never what a user asked or was answered, whatever words they hold
INFRASTRUCTURE = (
    "http.", "url.", "server.", "client.", "network.", "net.", "rpc.", "db.", "messaging.", "user_agent.",
    "process.", "thread.", "code.", "exception.", "telemetry.", "otel.", "host.", "k8s.", "cloud.",
    "container.", "service.", "deployment.", "ragfault.",
)  # fmt: skip
_STRUCTURED_HEADS = frozenset('[{"')  # a JSON object, array, or a JSON string of one


def side(key: str) -> Side | None:
    """The side a key names by its words (output first: ``gen_ai.output.messages`` is output)."""
    words = {w.lower() for w in _WORD.findall(key)}
    if words & _OUT_WORDS:
        return "out"
    if words & _IN_WORDS:
        return "in"
    return None


def _empty(value: Any) -> bool:
    """No value: nothing, an empty string, or an empty JSON object or list (what an instrumentation
    writes under a key it fills on other spans: ``llm_request = "{}"`` on a tool call)."""
    if value is None or value == "" or value == [] or value == {}:
        return True
    return isinstance(value, str) and len(value) <= 8 and value.strip() in ("{}", "[]", "null", '""')


def _structured(value: Any) -> bool:
    """A JSON object or array, or a string that may hold one (by its first character)."""
    if isinstance(value, (dict, list)):
        return bool(value)
    if not isinstance(value, str) or not value:
        return False
    if value[0].isspace():
        value = value.lstrip()
    head = value[:1]
    if head == '"':  # a JSON string: of an object or array only when one follows its quote
        return value[1:2] in _STRUCTURED_HEADS
    return head in _STRUCTURED_HEADS


def wordy(text: str | None) -> bool:
    """Text of more than one word (a question, a prompt, an answer), or of several characters of a
    script written without spaces (Chinese, Japanese)."""
    if not text:
        return False
    return len(text.split(None, 1)) > 1 or (not text.isascii() and len(text.strip()) >= 4)


def _note(step: Step, field: str, rule: str) -> None:
    if step.provenance is None:
        step.provenance = {}
    step.provenance[field] = rule


def fill(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...], owns: tuple[str, ...] = ()) -> None:
    """Fill what the convention reader left empty (see the module doc); ``owns``: the key prefixes
    the reader reads (``Reader.owns``), left to it. Never raises on odd values."""
    if step.convention == "unknown":
        _read_unknown(flat.unflatten(attrs), step, source_keys)
        return
    stype = step.step_type
    decided = step.provenance or {}  # a field a reader left empty on purpose says so here
    loose: dict[str, Any] | None = None  # the attributes with flattened lists rebuilt, once a pass asks

    def rebuilt() -> dict[str, Any]:
        nonlocal loose
        if loose is None:
            loose = flat.unflatten(attrs, owns)
        return loose

    if stype == "tool" and (step.tool_arguments is None or step.tool_result is None):
        _tool_gaps(rebuilt(), step, owns)
    if stype in ("chain", "other", "retrieval", "tool") and not step.docs and "docs" not in decided:
        _documents(step, source_keys)
        if not step.docs and not step.output_text and not step.tool_result:
            _documents_beside(rebuilt(), step, source_keys, owns)
    if stype in ("llm", "agent") and (not step.input_text or not step.output_text):
        _llm_gaps(rebuilt(), step, owns)
    if step.step_type == "other" and not step.docs and not step.input_text:
        # a span a reader claimed without saying what it was: a model call by its shape
        payloads = _payloads(rebuilt(), owns)
        if _chat(payloads, {k: side(k) for k, _ in payloads}, step, None):
            step.step_type = "llm"
            _note(step, "step_type", "shape:messages_in_reply_out")
    if step.docs and step.docs[0].doc_id is None and step.docs[0].chunk_id is None and step.output_text:
        _ids_from_output(step, source_keys)


def _ids_from_output(step: Step, source_keys: tuple[str, ...]) -> None:
    """Documents a reader read without ids (a convention whose document attributes carry only the
    text) take the ids of the same texts in the step's own output, where the documents are recorded
    again whole (LangChain.js's ``{"documents": [{"pageContent", "metadata", "id"}]}``)."""
    if not _structured(step.output_text):
        return
    whole = doclists.documents_in(step.output_text, "candidate", source_keys)
    if not whole:
        return
    by_text: dict[str, tuple[str | None, str | None]] = {}
    for d in whole:
        if d.content and (d.chunk_id is not None or d.doc_id is not None):
            by_text.setdefault(d.content, (d.chunk_id, d.doc_id))
    given = False
    for d in step.docs:
        if d.doc_id is None and d.chunk_id is None and d.content in by_text:
            d.chunk_id, d.doc_id = by_text[d.content]
            given = True
    if given:
        _note(step, "doc_ids", "shape:ids_by_text@output_text")


def _tool_gaps(attrs: dict[str, Any], step: Step, owns: tuple[str, ...]) -> None:
    """A tool call's arguments or result under keys its reader does not know (``tool_arguments``,
    ``tool_response``): kept as recorded, structured or not (a result listing documents is read
    for them next, and one that is plain text is what the tool answered)."""
    for key, value in attrs.items():
        if key.startswith(INFRASTRUCTURE) or key.startswith(owns) or _empty(value):
            continue
        where = side(key)
        if where == "in" and step.tool_arguments is None:
            step.tool_arguments = as_str(value)
            step.input_text = step.input_text or step.tool_arguments
            _note(step, "tool_arguments", f"shape:tool_input@{key}")
        elif where == "out" and step.tool_result is None:
            step.tool_result = as_str(value)
            step.output_text = step.output_text or step.tool_result
            _note(step, "tool_result", f"shape:tool_output@{key}")


def _documents(step: Step, source_keys: tuple[str, ...]) -> None:
    stype = step.step_type
    recorded, field = (
        (step.tool_result, "tool_result") if stype == "tool" else (step.output_text, "output_text")
    )
    if not recorded:
        return
    payload: Any = recorded
    if not _structured(payload):
        # a value recorded as a Python object's repr (``content='..' artifact=[Document(...)]``)
        described = pyrepr.value(payload)
        if not isinstance(described, (dict, list)):
            return
        payload, field = described, f"{field}:repr"
    if stype in ("chain", "other"):
        # a task whose output *is* a document list retrieved it (not one that merely carries
        # documents beside its answer, like a query engine's response with its source nodes)
        docs = doclists.is_document_list(payload, source_keys)
        if not docs:
            return
        given = (
            doclists.documents_in(step.input_text, "rerank_input", source_keys) if step.input_text else None
        )
        if given:
            # given documents and returning documents: it reranked or cut them (a prompt budget)
            step.step_type = "rerank"
            _note(step, "step_type", f"shape:documents_in_document_list_out@{field}")
            for d in docs:
                d.stage = "reranked"
            step.docs = given + docs
            _note(step, "docs.rerank_input", "shape:documents@input_text")
            _note(step, "docs.reranked", f"shape:documents@{field}")
            return
        _retrieved(step, f"shape:document_list@{field}")
    else:
        docs = doclists.documents_in(payload, "candidate", source_keys)
        if not docs and isinstance(payload, str):
            # not JSON: a Python list or dict ``str()``-ed (of JSON strings, or of objects)
            described = pyrepr.value(payload)
            if isinstance(described, (dict, list)):
                docs = doclists.documents_in(described, "candidate", source_keys)
                field = f"{field}:repr"
        if not docs:
            return
    step.docs = docs
    _note(step, "docs", f"shape:documents@{field}")


def _documents_beside(
    attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...], owns: tuple[str, ...]
) -> None:
    """Documents a claimed span that recorded no output holds under a key its reader does not know
    (``search.hits``, a vendor's ``results`` attribute): read as for an unclaimed span, from any key
    not on the input side (documents a step was given are no documents it retrieved). A task or
    chain holding them retrieved them. A step whose output was recorded returned that (an empty
    list is an empty result; an answer with its sources beside it answered, it did not retrieve)."""
    for key, value in attrs.items():
        if (
            key.startswith(INFRASTRUCTURE)
            or key.startswith(owns)
            or side(key) == "in"
            or not _structured(value)
        ):
            continue
        docs = doclists.documents_in(value, "candidate", source_keys)
        if not docs:
            continue
        step.docs = docs
        _note(step, "docs", f"shape:documents@{key}")
        if step.step_type in ("chain", "other"):
            _retrieved(step, f"shape:documents@{key}")
        return


def _retrieved(step: Step, rule: str) -> None:
    """A task or chain that holds documents it did not get retrieved them: a retrieval (named by
    ``rule``), whose query is its input's question when no reader gave one."""
    step.step_type = "retrieval"
    _note(step, "step_type", rule)
    if not step.query_text and step.input_text:
        step.query_text = structural.query_of(step.input_text)
        if step.query_text:
            _note(step, "query_text", "shape:query@input_text")


def _payloads(attrs: dict[str, Any], owns: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The attributes that may hold content: not of a transport or infrastructure namespace, not a
    reader's own, and a non-empty text or a structure."""
    return [
        (k, v)
        for k, v in attrs.items()
        if not k.startswith(INFRASTRUCTURE)
        and not k.startswith(owns)
        and isinstance(v, (str, list, dict))
        and v != ""
    ]


def _llm_gaps(attrs: dict[str, Any], step: Step, owns: tuple[str, ...]) -> None:
    """A model call's input or output under keys its reader does not know (a key of the reader's
    own namespace that gave it nothing holds nothing: a model call that only called a tool)."""
    for key, value in attrs.items():
        if key.startswith(INFRASTRUCTURE) or key.startswith(owns) or value is None or value == "":
            continue
        where = side(key)
        if where == "in" and not step.input_text:
            _input(step, key, value)
        elif where == "out" and not step.output_text:
            _output(step, key, value)


def _input(step: Step, key: str, value: Any) -> bool:
    messages = structural.message_list(value) if _structured(value) else None
    if messages:
        step.input_text = structural.join_messages(messages)
        _note(step, "input_text", f"shape:messages@{key}")
        query = structural.last_user_text(messages)
        if query and not step.query_text:
            step.query_text = query
            _note(step, "query_text", f"shape:last_user_message@{key}")
        return step.input_text is not None
    text = structural.text_of(value)
    if not wordy(text):
        return False
    step.input_text = text
    _note(step, "input_text", f"shape:text@{key}")
    return True


def _output(step: Step, key: str, value: Any) -> bool:
    messages = structural.message_list(value) if _structured(value) else None
    if messages:
        said = [m for m in messages if m.role not in ("user", "human", "system")]
        text = structural.join_messages(said or messages)
    else:
        text = structural.text_of(value)
    if not wordy(text) and not (messages and text):
        return False
    step.output_text = text
    _note(step, "output_text", f"shape:{'messages' if messages else 'text'}@{key}")
    return True


def _read_unknown(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    """A span no convention reader claimed, read by shape alone."""
    payloads = _payloads(attrs)
    if not payloads:
        return
    sides = {k: side(k) for k, _ in payloads}
    # documents: on the output side first, then anywhere
    ordered = [p for p in payloads if sides[p[0]] == "out"] + [p for p in payloads if sides[p[0]] != "out"]
    docs_key = None
    for key, value in ordered:
        if _structured(value):
            docs = doclists.documents_in(value, "candidate", source_keys)
            if docs:
                step.docs, docs_key = docs, key
                _note(step, "docs", f"shape:documents@{key}")
                break
    model_call = _chat(payloads, sides, step, docs_key)
    if step.docs and not model_call:
        step.step_type = "retrieval"
        _note(step, "step_type", f"shape:documents@{docs_key}")
    elif model_call:
        step.step_type = "llm"
        _note(step, "step_type", f"shape:messages_in_{'text' if step.output_text else 'tool_call'}_out")
    if step.provenance:
        step.convention = "structural"


def _chat(
    payloads: list[tuple[str, Any]], sides: dict[str, Side | None], step: Step, docs_key: str | None
) -> bool:
    """Read the input and output side of a span's payloads into ``step``; whether they make it a
    model call: a message list in, and text or a tool call out. The input side reads a message list
    under any key first (a prompt recorded both as messages and as the text of an object's repr reads
    as the messages), then plain text."""
    has_messages = False
    inputs = [p for p in payloads if sides[p[0]] == "in"]
    chats = [p for p in inputs if _structured(p[1]) and structural.message_list(p[1])]
    for key, value in chats or inputs:
        if not step.input_text and _input(step, key, value):
            has_messages = bool(chats)
            break
    called = False
    outputs = [p for p in payloads if sides[p[0]] == "out" and p[0] != docs_key]
    # (a reply recorded as messages too reads as the messages, as the input side does)
    replies = [p for p in outputs if _structured(p[1]) and structural.message_list(p[1])]
    for key, value in replies + [p for p in outputs if p not in replies]:
        if not step.output_text:
            if not _output(step, key, value) and has_messages and _structured(value):
                called = called or structural.calls_tool(value)
    return has_messages and (bool(step.output_text) or called)
