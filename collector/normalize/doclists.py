"""Document lists found by shape in any value (docs/architecture.md, Conventions and readers).

A list of objects is a document list when each carries a text and one of them an id, a score or
metadata (``collector.normalize.documents`` says which field is which), wrapped or not (LlamaIndex's
``{"node": {...}, "score"}``, ``{"document": {...}, "score"}``, a store's ``{"record": {...},
"score"}``, LangChain's ``{"lc", "kwargs"}``), wherever it sits in a value: ``documents_in`` finds the
first one, ``is_document_list`` asks whether a value *is* one (a task's output that is its
retrieval), after the unwrapping rules of ``collector.normalize.structural``.
"""

from __future__ import annotations

from typing import Any

from collector.normalize import documents, structural
from collector.normalize.docvalues import make_doc
from collector.normalize.step import Doc, Stage


def doc_body(item: Any) -> dict[str, Any] | None:
    """A document item with its wrapper taken off, or None when it is no document-like object."""
    d = structural.parsed(item)
    if not isinstance(d, dict) or structural.is_message(d) or documents.is_message_record(d):
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
    inner = structural.parsed(d[inner_key])
    if not isinstance(inner, dict) or structural.is_message(inner):
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
    bodies = [doc_body(x) for x in items]
    if not bodies or any(b is None for b in bodies):
        return None
    found: list[dict[str, Any]] = [b for b in bodies if b is not None]
    fields = documents.infer(found, strict=True)
    if fields is None or not documents.described(found, fields):
        return None  # no text in some item; or content blocks, not documents
    texts = [documents.text(b, fields) for b in found]
    if any(documents.holds_structure(t) and documents_in(t, stage, source_keys) for t in texts):
        return None  # a text that is JSON holding documents wraps them: the documents are inside it
    return [
        make_doc(
            stage,
            i,
            documents.ident(b, fields),
            t,
            documents.score(b, fields),
            documents.metadata(b),
            source_keys,
        )
        for i, (b, t) in enumerate(zip(found, texts, strict=True))
    ]


def documents_in(value: Any, stage: Stage, source_keys: tuple[str, ...], depth: int = 0) -> list[Doc] | None:
    """The first document list in a value, wherever it sits (depth first), or None."""
    if depth > structural.MAX_DEPTH:
        return None
    v = structural.parsed(value)
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
        if isinstance(child, (dict, list)) or (
            isinstance(child, str) and child.lstrip()[:1] in structural.JSON_HEADS
        ):
            found = documents_in(child, stage, source_keys, depth + 1)
            if found:
                return found
    return None


def is_document_list(value: Any, source_keys: tuple[str, ...]) -> list[Doc] | None:
    """The documents of a value that *is* a document list (itself, or the one list of an object
    such as ``{"documents": [...], "count": n}``), wrappers of rules 1-3 off; None otherwise. Unlike
    ``documents_in`` it does not look inside larger payloads (a response object's source nodes)."""
    v = structural.parsed(value)
    for _ in range(structural.MAX_DEPTH):
        if isinstance(v, dict):
            values = [structural.parsed(y) for y in v.values()]
            lists = [x for x in values if isinstance(x, (list, dict))]
            if len(lists) != 1 or any(isinstance(x, str) and x.strip() for x in values):
                return None  # (a text beside the list: an answer with its sources, not a retrieval)
            v = lists[0]
            continue
        break
    if not isinstance(v, list) or not v:
        return None
    return _as_docs(v, "candidate", source_keys)
