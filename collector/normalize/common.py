"""Helpers shared by the convention readers: flattened lists, messages, documents, ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

# Metadata keys that may name the source document of a chunk (DESIGN §3); configurable per server.
DEFAULT_SOURCE_KEYS: tuple[str, ...] = (
    "doc_id",
    "document_id",
    "ref_doc_id",
    "source",
    "file_name",
    "file_path",
)


@dataclass(slots=True)
class Doc:
    """One document seen by a step: a retrieval candidate, a reranker output or a context document."""

    stage: str
    position: int
    chunk_id: str | None = None
    doc_id: str | None = None
    content: str | None = None
    score: float | None = None
    metadata: dict[str, Any] | None = None


@dataclass(slots=True)
class Step:
    """The convention-independent reading of one span."""

    step_type: str = "other"
    convention: str = "unknown"
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
    docs: list[Doc] = field(default_factory=list)


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
        try:
            return int(value)
        except ValueError:
            return None
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
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
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        rest = key[plen:]
        idx, _, sub = rest.partition(".")
        if not idx.isdigit():
            continue
        out.setdefault(int(idx), {})[sub] = value
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


def make_doc(
    stage: str,
    position: int,
    raw_id: Any,
    content: Any,
    score: Any,
    metadata: Any,
    source_keys: tuple[str, ...],
) -> Doc:
    meta = parse_json(metadata) if metadata is not None else None
    if meta is not None and not isinstance(meta, dict):
        meta = {"value": meta}
    chunk_id = as_str(raw_id) if raw_id not in (None, "") else None
    doc_id = source_doc_id(meta, source_keys) or chunk_id
    return Doc(
        stage=stage,
        position=position,
        chunk_id=chunk_id,
        doc_id=doc_id,
        content=as_str(content),
        score=as_float(score),
        metadata=meta,
    )


def openinference_docs(
    attrs: dict[str, Any], prefix: str, stage: str, source_keys: tuple[str, ...]
) -> list[Doc]:
    """Documents flattened as ``prefix.{i}.document.{id,content,score,metadata}``."""
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


def json_docs(value: Any, stage: str, source_keys: tuple[str, ...]) -> list[Doc]:
    """Documents given as a JSON list of objects (GenAI semconv, LangChain outputs)."""
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        for key in ("documents", "docs", "outputs", "output", "result", "results"):
            if isinstance(parsed.get(key), list):
                parsed = parsed[key]
                break
    if not isinstance(parsed, list):
        return []
    docs = []
    for i, item in enumerate(parsed):
        if isinstance(item, str):
            docs.append(Doc(stage=stage, position=i, content=item))
            continue
        if not isinstance(item, dict):
            continue
        # LangChain serializes a Document as {"lc": 1, "kwargs": {"page_content": ..., "metadata": ...}}.
        body = item.get("kwargs") if isinstance(item.get("kwargs"), dict) else item
        meta = body.get("metadata")
        content = body.get("content", body.get("page_content", body.get("text")))
        raw_id = body.get("id", body.get("document_id", body.get("doc_id")))
        docs.append(make_doc(stage, i, raw_id, content, body.get("score"), meta, source_keys))
    return docs


def message_text(content: Any) -> str | None:
    """Text of a chat message content: a string, or a list of parts with text."""
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
                t = part.get("content", part.get("text"))
                if isinstance(t, str):
                    parts.append(t)
                elif t is not None:
                    parts.append(as_str(t) or "")
        return "\n".join(parts) if parts else None
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
        t = message_text(m.get("parts", m.get("content")))
        if t:
            texts.append(t)
            if m.get("role") in ("user", "human"):
                last_user = t
    return ("\n".join(texts) if texts else None), last_user


def join_texts(texts: list[str | None]) -> str | None:
    kept = [t for t in texts if t]
    return "\n".join(kept) if kept else None
