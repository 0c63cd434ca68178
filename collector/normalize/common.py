"""The model every convention reader fills (``Step``, ``Doc``, their ``Literal`` step types, stages and
conventions) and the helpers they share: flattened lists, messages, documents, ids."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal, NamedTuple, get_args

import orjson

from collector.normalize import documents

# Metadata keys that may name the source document of a chunk (docs/architecture.md, Evidence and matching); configurable per server.
DEFAULT_SOURCE_KEYS: tuple[str, ...] = (
    "doc_id",
    "document_id",
    "ref_doc_id",
    "source",
    "file_name",
    "file_path",
)


# What a step is (docs/architecture.md, Conventions and readers): the values of ``steps.step_type``.
StepType = Literal["retrieval", "rerank", "llm", "tool", "agent", "chain", "embedding", "other"]
# Where a document was seen, as a span reports it (docs/architecture.md, Evidence and matching): the values of ``step_documents.stage``
# that readers write. Settling derives ``context`` from the answering prompt, and ``surfaced`` /
# ``opened`` for search agents (``collector.search_stages``).
Stage = Literal["candidate", "reranked", "context", "rerank_input"]
# Which reader read a span: the values of ``steps.convention`` (``structural``: no convention reader
# claimed the span, and ``collector.normalize.shape`` read it by the shape of its payloads; ``mapping``:
# no reader claimed it, and a ``[[conventions.mapping]]`` entry of the config file read it).
Convention = Literal[
    "openinference", "traceloop", "haystack", "vercel_ai", "genai", "structural", "unknown", "mapping"
]

STEP_TYPES: tuple[StepType, ...] = get_args(StepType)
STAGES: tuple[Stage, ...] = get_args(Stage)
CONVENTIONS: tuple[Convention, ...] = get_args(Convention)


@dataclass(slots=True)
class Doc:
    """One document seen by a step: a retrieval candidate, a reranker output or a context document."""

    stage: Stage
    position: int
    chunk_id: str | None = None
    doc_id: str | None = None
    content: str | None = None
    score: float | None = None
    metadata: dict[str, Any] | None = None
    metadata_json: str | None = None  # the metadata as received, when it was a JSON object string


@dataclass(slots=True)
class Step:
    """The convention-independent reading of one span."""

    step_type: StepType = "other"
    convention: Convention = "unknown"
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    query_text: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    top_k: int | None = None
    session_id: str | None = None
    user_id: str | None = None
    case_id: str | None = None
    run_id: str | None = None
    user_scope: list[str] | None = None
    citations: list[str] | None = None
    data_source_id: str | None = None  # the knowledge source a retrieval searched
    docs: list[Doc] = field(default_factory=list)
    # the fields the structural layer filled, each with its rule and key (``shape:documents@output``),
    # and those a reader left empty on purpose (``traceloop:...``); every other field was read by the
    # step's ``convention``. None when there is nothing to say.
    provenance: dict[str, str] | None = None


class Reader(NamedTuple):
    """One convention: ``detect`` says whether a span's attributes are written in it, ``read`` fills
    the step from them (never raising on odd values)."""

    convention: Convention
    detect: Callable[[dict[str, Any]], bool]
    read: Callable[[dict[str, Any], Step, tuple[str, ...]], None]
    # the key prefixes the reader reads: the structural layer beneath it leaves those keys to it
    owns: tuple[str, ...] = ()


def as_str(value: Any) -> str | None:
    """A string form of an attribute value, JSON for structured values."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return orjson.dumps(value).decode()


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        try:
            return int(s)
        except ValueError:
            pass
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
        return f if f == f else None  # NaN is no score
    return None


def as_str_list(value: Any) -> list[str] | None:
    """A list of strings from an array attribute, a JSON array string or a comma-separated string."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v) != ""]
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                parsed = orjson.loads(s)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return [str(v) for v in parsed if v is not None and str(v) != ""]
        return [p.strip() for p in s.split(",") if p.strip()]
    return [str(value)]


def parse_json(value: Any) -> Any:
    """Parse a JSON string attribute; structured values pass through, bad JSON gives None."""
    if isinstance(value, (dict, list)):
        return value
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return None


def indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Group flattened list attributes: ``prefix.{i}.rest`` -> {i: {rest: value}}.

    ``prefix`` includes the trailing dot, e.g. ``"retrieval.documents."``.
    """
    out: dict[int, dict[str, Any]] = {}
    plen = len(prefix)
    last_idx, last = "", None  # the keys of one item are usually adjacent: skip isdigit/int/lookup
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        idx, _, sub = key[plen:].partition(".")
        if idx == last_idx and last is not None:
            last[sub] = value
        elif idx.isdigit():
            i = int(idx)
            last = out.get(i)
            if last is None:
                last = out[i] = {}
            last[sub] = value
            last_idx = idx
    return out


def source_doc_id(metadata: dict[str, Any] | None, source_keys: tuple[str, ...]) -> str | None:
    """The source document id named in chunk metadata, if any."""
    if not metadata:
        return None
    for key in source_keys:
        v = metadata.get(key)
        if v is not None and v != "":
            return str(v)
    return None


# Where a document's score may sit in its metadata when the document itself has none: LangChain's
# ``Document`` has no score field, so its retrievers and compressors put it in ``metadata``
# (``relevance_score`` from a reranking compressor, ``score`` from many vector stores).
METADATA_SCORE_KEYS = ("relevance_score", "score")


def metadata_score(meta: Any) -> float | None:
    """The score a document's metadata holds (``METADATA_SCORE_KEYS``), for a document that has no
    score of its own; None when there is none or it is no number."""
    if type(meta) is not dict:
        return None
    for key in METADATA_SCORE_KEYS:
        f = as_float(meta.get(key))
        if f is not None:
            return f
    return None


def make_doc(
    stage: Stage,
    position: int,
    raw_id: Any,
    content: Any,
    score: Any,
    metadata: Any,
    source_keys: tuple[str, ...],
) -> Doc:
    meta_json = None
    if metadata is None:
        meta = None
    elif type(metadata) is str:  # the usual case: a JSON object string, kept as received
        try:
            meta = orjson.loads(metadata)
        except orjson.JSONDecodeError:
            meta = None
        if type(meta) is dict:
            meta_json = metadata
        elif meta is None:
            meta = (
                {"value": metadata} if metadata else None
            )  # not JSON: keep the text, it may still be useful
        else:
            meta = {"value": meta}
    else:
        meta = parse_json(metadata)
        if meta is None and isinstance(metadata, bytes) and metadata != b"":
            meta = {"value": as_str(metadata)}
        elif meta is not None and not isinstance(meta, dict):
            meta = {"value": meta}
    chunk_id = None if raw_id is None or raw_id == "" else (raw_id if type(raw_id) is str else as_str(raw_id))
    doc_id = source_doc_id(meta, source_keys) or chunk_id
    value = as_float(score)
    return Doc(
        stage,
        position,
        chunk_id,
        doc_id,
        content if content is None or type(content) is str else as_str(content),
        value if value is not None or meta is None else metadata_score(meta),
        meta,
        meta_json,
    )


_MISSING: Any = object()


def key_blob(attrs: dict[str, Any]) -> str:
    """Every key of a span, each after a newline: ``prefix_count`` searches it in C."""
    return "\n" + "\n".join(attrs)


def prefix_count(attrs: dict[str, Any], prefix: str, keys: str | None = None) -> int:
    """How many keys start with ``prefix`` (at least; a key holding a newline may add to the count)."""
    if keys is None:
        return sum(map(str.startswith, attrs, repeat(prefix)))
    return keys.count("\n" + prefix)


@functools.lru_cache(maxsize=4096)
def _doc_keys(prefix: str, i: int) -> tuple[str, str, str, str]:
    """The keys of document ``i`` of a flattened list: built once, not for every span."""
    base = f"{prefix}{i}.document."
    return base + "id", base + "content", base + "score", base + "metadata"


def openinference_docs(
    attrs: dict[str, Any], prefix: str, stage: Stage, source_keys: tuple[str, ...], keys: str | None = None
) -> list[Doc]:
    """Documents flattened as ``prefix.{i}.document.{id,content,score,metadata}``.

    ``keys`` is the span's ``key_blob`` when the caller has it.
    """
    # How many keys the list has; none is the common case (every span is asked for its
    # ``ragfault.context.documents.``), and a list of documents is read by direct look-ups. Any
    # other layout (gaps in the indices, other sub-keys) is read by the general path.
    n = prefix_count(attrs, prefix, keys)
    if not n:
        return []
    docs = []
    found = 0
    i = 0
    get = attrs.get
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    while found < n:
        id_key, content_key, score_key, meta_key = _doc_keys(prefix, i)
        rid = get(id_key, _MISSING)
        content = get(content_key, _MISSING)
        score = get(score_key, _MISSING)
        meta = get(meta_key, _MISSING)
        seen = (
            (rid is not _MISSING)
            + (content is not _MISSING)
            + (score is not _MISSING)
            + (meta is not _MISSING)
        )
        if not seen:
            break  # a gap in the indices, or keys other than these four: read the general way
        found += seen
        # the usual types are read inline (make_doc reads the same way); anything else goes through it
        if (
            type(rid) is str
            and rid
            and (content is _MISSING or type(content) is str)
            and (score is _MISSING or type(score) is float)
            and type(meta) is str
        ):
            try:
                parsed = loads(meta)
            except decode_error:
                parsed = None
            if type(parsed) is dict:
                doc_id = rid
                for key in source_keys:
                    v = parsed.get(key)
                    if v is not None and v != "":
                        doc_id = str(v)
                        break
                docs.append(
                    Doc(
                        stage,
                        i,
                        rid,
                        doc_id,
                        None if content is _MISSING else content,
                        metadata_score(parsed) if score is _MISSING else score,
                        parsed,
                        meta,
                    )
                )
                i += 1
                continue
        docs.append(
            make_doc(
                stage,
                i,
                None if rid is _MISSING else rid,
                None if content is _MISSING else content,
                None if score is _MISSING else score,
                None if meta is _MISSING else meta,
                source_keys,
            )
        )
        i += 1
    if found == n:
        return docs
    docs = []
    for i, sub in sorted(indexed(attrs, prefix).items()):
        docs.append(
            make_doc(
                stage,
                i,
                sub.get("document.id"),
                sub.get("document.content"),
                sub.get("document.score"),
                sub.get("document.metadata"),
                source_keys,
            )
        )
    return docs


_DOC_LIST_KEYS = ("documents", "docs", "outputs", "output", "result", "results", "source_documents")


def _doc_list(parsed: Any) -> list[Any] | None:
    """The list of documents inside a parsed JSON value (a list, or a dict holding one)."""
    if isinstance(parsed, list):
        return parsed
    if isinstance(parsed, dict):
        for key in _DOC_LIST_KEYS:
            inner = parsed.get(key)
            if isinstance(inner, list):
                return inner
            if isinstance(inner, dict) and any(isinstance(inner.get(k), list) for k in _DOC_LIST_KEYS):
                return _doc_list(inner)
    return None


def json_docs(value: Any, stage: Stage, source_keys: tuple[str, ...], strict: bool = False) -> list[Doc]:
    """Documents given as a JSON list of objects (GenAI semconv, LangChain outputs).

    Accepts a list, or an object holding the list under a usual key (``{"documents": [...]}`` as
    OpenLLMetry writes a LangChain retriever's output). Items may be plain strings, flat objects
    (``{id, score, content|page_content|text, metadata}``) or LangChain-serialized documents
    (``{"lc": 1, "kwargs": {"page_content": ..., "metadata": ...}}``). Fields under other names are
    inferred from the list (``collector.normalize.documents``); ``strict``: nothing said these are
    documents, so the list must read as one (a passage of text in every item, no search listing).
    """
    items = _doc_list(parse_json(value))
    if not items:
        return []
    bodies: list[dict[str, Any] | None] = []
    for item in items:  # (inline: this runs for every document of every span that lists some)
        if type(item) is not dict:
            bodies.append(None)
            continue
        kwargs = item.get("kwargs")
        body: dict[str, Any] = kwargs if type(kwargs) is dict else item
        inner = body.get("document")
        if type(inner) is dict:  # {"document": {...}, "score": ...}
            body = {**inner, "score": body.get("score", inner.get("score"))}
        bodies.append(body)
    objects = [b for b in bodies if b is not None]
    fields = documents.infer(objects, strict) if objects else None
    if fields is None:
        if strict:
            return []
        fields = documents.USUAL
    docs = []
    text_key, id_key, score_key = fields
    for i, (item, found) in enumerate(zip(items, bodies, strict=True)):
        if found is None:
            if isinstance(item, str) and not strict:
                docs.append(Doc(stage=stage, position=i, content=item))
            continue
        body = found
        # (inline ``documents.text`` / ``ident`` / ``score``: the list's names first, the usual ones after)
        text = body.get(text_key) if text_key is not None else None
        if type(text) is not str or not text or text.isspace():
            text = documents.usual_text(body)
        raw_id = body.get(id_key) if id_key is not None else None
        if raw_id is None or raw_id == "":
            raw_id = documents.first(body, documents.ID_FIELDS)
        score = body.get(score_key) if score_key is not None else None
        if score is None or score == "":
            score = documents.first(body, documents.SCORE_FIELDS)
        docs.append(make_doc(stage, i, raw_id, text, score, body.get("metadata"), source_keys))
    return docs


def tool_docs(result: Any, source_keys: tuple[str, ...], stage: Stage = "candidate") -> list[Doc]:
    """Candidate documents in a tool's result, when the result is a list of documents.

    An agent's search tool often returns the retrieved documents as its result (a JSON list of
    ``{id, content|page_content|text, score, metadata}`` objects, or an object holding such a list);
    those are the retrieval's candidates. Anything else (plain text, a list of strings, objects
    without a text field) is no document list: a tool returning ``["Paris", "Rome"]`` retrieved nothing.
    ``result`` is a JSON string, or a value already parsed.
    """
    if isinstance(result, str):
        if result.lstrip()[:1] not in ("[", "{"):
            return []
        parsed = parse_json(result)
    elif isinstance(result, (list, dict)):  # already parsed (an argument inside a wrapped call)
        parsed = result
    else:
        return []
    items = _doc_list(parsed)
    if not items or not all(isinstance(item, dict) for item in items):
        return []
    if any(documents.is_message_record(item) for item in items):
        return []  # messages an agent runtime relays, not documents
    docs = json_docs(items, stage, source_keys, strict=True)
    # every item an object with a text that is no JSON (json_docs reads it by the same fields), and,
    # unless a key names them (``{"documents": [...]}``), at least one with an id, a score or
    # metadata: a bare content block ``[{"text": ...}]`` is text
    if len(docs) != len(items) or any(
        d.content is None or (documents.holds_structure(d.content) and tool_docs(d.content, source_keys))
        for d in docs
    ):
        return []  # (a text that is JSON of documents wraps them; a JSON document is a document)
    named = isinstance(parsed, dict)
    return (
        docs
        if named or any(d.chunk_id or d.doc_id or d.score is not None or d.metadata for d in docs)
        else []
    )


def _first_present(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        v = d.get(k)
        if v is not None and v != "":
            return v
    return None


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
