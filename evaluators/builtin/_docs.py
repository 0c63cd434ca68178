"""Shared helpers of the document-level evaluators (freshness, permission, duplicates).

A step document is described by its registry row when the registry knows it (by id, source id or
content, see ``Matching.kb_id``), else by the metadata the span carried. Documents are counted
distinct by identity: registry id, else document or chunk id, else normalized content.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, TypeVar

import orjson

from evaluators.eval_input import EvalInput
from evaluators.text import normalize_doc
from evaluators.trace_view import StepDoc

_T = TypeVar("_T")


def doc_key(inp: EvalInput, doc: StepDoc) -> tuple[str, str]:
    """The identity a document is counted by."""
    kb_id = inp.matching.kb_id(doc)
    if kb_id:
        return ("kb", kb_id)
    if doc.doc_id or doc.chunk_id:
        return ("id", doc.doc_id or doc.chunk_id or "")
    norm = normalize_doc(doc.content)
    if norm:
        return ("content", norm)
    return ("position", f"{doc.span_id}:{doc.stage}:{doc.position}")


def doc_name(inp: EvalInput, doc: StepDoc) -> str:
    """A readable name: registry id, else id, else the start of the content."""
    kb_id = inp.matching.kb_id(doc)
    if kb_id:
        return kb_id
    if doc.doc_id or doc.chunk_id:
        return doc.doc_id or doc.chunk_id or ""
    if doc.content:
        return f'"{doc.content[:40]}"'
    return f"{doc.span_id}#{doc.position}"


def distinct(inp: EvalInput, docs: list[StepDoc]) -> list[StepDoc]:
    """The first document of each identity, in the given order (worked out once a trace for the
    same documents: freshness and permission both ask for the same lists)."""
    # the documents belong to the trace, which outlives the cache, so their ids are stable keys
    key = ("distinct", *map(id, docs))
    cache = inp._cache
    found = cache.get(key)
    if found is None:
        found = cache[key] = _distinct(inp, docs)
    return list(found)


def judged_once(
    judged: dict[tuple[int, ...], _T], docs: list[StepDoc], judge: Callable[[list[StepDoc]], _T]
) -> _T:
    """``judge(docs)``, worked out once per list of documents in ``judged`` (an evaluator's own
    dict for one trace): with one retrieval step, the trace's candidates are that step's, and the
    step row and the trace row share the result (rows only read it)."""
    key = tuple(map(id, docs))
    try:
        return judged[key]
    except KeyError:
        found = judged[key] = judge(docs)
        return found


def per_registry(inp: EvalInput, key: tuple[Any, ...], work: Callable[[], _T]) -> _T:
    """``work()``, worked out once per registry for ``key`` (``KnowledgeBase.memo``): for results
    that depend on registry rows alone, shared by every trace (callers only read them)."""
    memo = inp.kb.memo()
    try:
        return memo[key]  # type: ignore[no-any-return]
    except KeyError:
        found = memo[key] = work()
        return found


def _distinct(inp: EvalInput, docs: list[StepDoc]) -> list[StepDoc]:
    seen: set[tuple[str, str]] = set()
    out = []
    for d in docs:
        k = doc_key(inp, d)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out


def meta(doc: StepDoc, key: str) -> Any:
    return doc.metadata.get(key) if doc.metadata else None


def as_list(value: Any) -> list[str] | None:
    """A list of strings from a list, a JSON list in a string, or a comma-separated string."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None  # an empty string names no acl
        if text.startswith("["):
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                value = text.strip("[]").split(",")
        else:
            value = text.split(",")
    if isinstance(value, (list, tuple, set)):
        return [str(v).strip().strip("'\"") for v in value if str(v).strip()]
    return [str(value)]


def as_time(value: Any) -> datetime | None:
    """A naive UTC datetime from a datetime, a date, an ISO string or epoch seconds/milliseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = value / 1000 if value > 1e11 else value
        dt = datetime.fromtimestamp(secs, UTC)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            try:
                d = date.fromisoformat(text[:10])
            except ValueError:
                return None
            dt = datetime(d.year, d.month, d.day)
    else:
        return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt
