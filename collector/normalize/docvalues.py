"""Documents read from attribute values: a list flattened into keys (OpenInference's
``prefix.{i}.document.*``), a JSON list of objects or one object holding it, and a tool's result
that lists documents. Which field of an object is the text, the id and the score is
``collector.normalize.documents``'s answer; the source document's id comes from the chunk's
metadata (``DEFAULT_SOURCE_KEYS``)."""

from __future__ import annotations

import functools
from typing import Any

import orjson

from collector.normalize import documents
from collector.normalize.step import Doc, Stage
from collector.normalize.values import as_float, as_str, indexed, parse_json, prefix_count

# Metadata keys that may name the source document of a chunk (docs/architecture.md, Evidence and matching); configurable per server.
DEFAULT_SOURCE_KEYS: tuple[str, ...] = (
    "doc_id",
    "document_id",
    "ref_doc_id",
    "source",
    "file_name",
    "file_path",
)


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
