"""The mapping ``ragfault doctor`` suggests for spans no reader could read (``GET /api/v1/coverage``,
``"mappings"``; the entries are those of ``collector.normalize.mapping``).

Spans no convention reader claimed and the structural layer could not read (convention
``unknown``) are sampled from recent traces. Each of their keys is classified by what its values
look like, over every sample, never by its name alone:

- a **document list**: a list of objects (at any depth of the value, JSON strings unwrapped), each
  with a text of more than one word at the same path; the id is the path whose values are short,
  distinct, one-word strings or integers (preferring names like ``id`` / ``ref`` / ``key``), the
  score the path of numbers;
- **prompt messages**: a message list (``collector.normalize.structural.message_list``);
- **text**: more than one word. Which text is the question and which the answer is told by the
  trace: the question is the text that the trace's prompts contain (a RAG prompt quotes its
  question) more often than the other texts do, or where they do equally, the key's words
  (``input`` / ``output`` ...); beside a document list a text is the query (a
  search's), beside a prompt the answer; a text that contains another text of its span is a prompt.

A span with a document list is a ``retrieval``; with two lists, one holding a subset of the other's
texts, a ``rerank`` (the subset is its output); with a prompt, an ``llm``. What cannot be told
(one text alone, two texts contained equally often) is left out and said so: a guess would map
the wrong field, which is worse than none.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import orjson

from collector.normalize import structural
from collector.normalize.shape import INFRASTRUCTURE, side, wordy
from collector.store import doctor

MAX_TRACES = 50  # recent traces with unread spans looked at
MAX_SPANS = 3000
MAX_DEPTH = 4  # levels inside one document looked into for its fields

_ID_WORDS = re.compile(r"(^|[._])(id|ids|ref|key|uuid|doc|name)$", re.IGNORECASE)

Path = tuple[str | int, ...]


def _path_text(path: Path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out.lstrip(".")


def _leaves(value: Any, path: Path = (), depth: int = 0) -> list[tuple[Path, Any]]:
    """The scalar leaves of one document (objects only, JSON strings unwrapped)."""
    v = structural.parsed(value)
    if isinstance(v, dict) and depth < MAX_DEPTH:
        out: list[tuple[Path, Any]] = []
        for k, x in v.items():
            out.extend(_leaves(x, (*path, str(k)), depth + 1))
        return out
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return [(path, v)]
    return []


def _document_list(
    value: Any, path: Path = (), depth: int = 0
) -> tuple[Path, dict[str, Path], list[Any]] | None:
    """The first list of documents in a value: its path, the paths of text, id and score in one
    document, and its items."""
    v = structural.parsed(value)
    if depth > MAX_DEPTH:
        return None
    items = [structural.parsed(x) for x in v] if isinstance(v, list) else []
    if items and all(isinstance(x, dict) and not structural.is_message(x) for x in items):
        fields = _doc_fields([dict(_leaves(x)) for x in v])
        if fields is not None:
            return path, fields, v
    children = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in children:
        if isinstance(k, int) and k > 0:
            break  # a list's first item stands for the others
        found = _document_list(x, (*path, k), depth + 1)
        if found is not None:
            return found
    return None


def _doc_fields(items: list[dict[Path, Any]]) -> dict[str, Path] | None:
    paths = set(items[0]).intersection(*items[1:]) if items else set()
    texts = [p for p in paths if all(isinstance(i[p], str) and wordy(i[p]) for i in items)]
    if not texts:
        return None
    text = max(texts, key=lambda p: sum(len(i[p]) for i in items))
    fields = {"document_text": text}
    ids = [
        p
        for p in paths
        if p != text
        and all(isinstance(i[p], (str, int)) and not wordy(str(i[p])) for i in items)
        and len({i[p] for i in items}) == len(items)
    ]
    if ids:
        named = [p for p in ids if _ID_WORDS.search(_path_text(p))]
        fields["document_id"] = sorted(named or ids, key=len)[0]
    scores = [p for p in paths if all(isinstance(i[p], float) for i in items)]
    if scores:
        fields["document_score"] = sorted(scores, key=len)[0]
    if len(items) < 2 and len(fields) < 2:
        return None  # one object with one text: a message, a record, not a document list
    return fields


class _Key:
    """What one key of one span name held over the samples."""

    def __init__(self) -> None:
        self.docs: dict[str, Path] | None = None
        self.docs_at: Path = ()
        self.doc_texts: list[set[str]] = []
        self.messages = 0
        self.texts: list[str] = []
        self.contained = 0  # samples whose text the trace's prompts contain
        self.seen = 0


def sample(
    cursor: Any, service: str | None, since: Any
) -> list[tuple[str, str, str | None, dict[str, Any], str]]:
    """(trace id, span name, scope, attributes, convention) of recent traces with unread spans."""
    params = {"service": service, "since": since, "traces": MAX_TRACES}
    rows = doctor.unread_spans(cursor, params, MAX_SPANS)
    out = []
    for trace_id, name, scope, attrs, convention in rows:
        try:
            parsed = orjson.loads(attrs) if isinstance(attrs, (str, bytes)) else attrs
        except orjson.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            out.append((trace_id, name or "", scope, parsed, convention))
    return out


def suggest(rows: list[tuple[str, str, str | None, dict[str, Any], str]]) -> dict[str, Any]:
    """The mapping entries that would read the unread spans of ``rows`` (see the module doc)."""
    prompts: dict[str, list[str]] = defaultdict(list)  # trace -> its prompt-like texts
    for trace_id, _name, _scope, attrs, _conv in rows:
        for _key, value in _content(attrs):
            messages = structural.message_list(value)
            text = structural.join_messages(messages) if messages else structural.text_of(value)
            if text and len(text) > 1:
                prompts[trace_id].append(text)
    keys: dict[tuple[str, str | None], dict[str, _Key]] = defaultdict(lambda: defaultdict(_Key))
    unread: dict[tuple[str, str | None], int] = defaultdict(int)
    for trace_id, name, scope, attrs, conv in rows:
        if conv != "unknown":
            continue
        unread[(name, scope)] += 1
        for key, value in _content(attrs):
            _classify(keys[(name, scope)][key], value, prompts[trace_id])
    spans = []
    for (name, scope), by_key in keys.items():
        spans.append(_entry(name, scope, unread[(name, scope)], by_key))
    return {"spans": spans, "toml": toml([e for s in spans for e in s["entries"]])}


def _content(attrs: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (k, v)
        for k, v in attrs.items()
        if not k.startswith(INFRASTRUCTURE) and isinstance(v, (str, list, dict)) and v not in ("", [], {})
    ]


def _classify(k: _Key, value: Any, prompts: list[str]) -> None:
    k.seen += 1
    found = _document_list(value)
    if found is not None:
        k.docs_at, k.docs, items = found
        k.doc_texts.append({str(dict(_leaves(x)).get(k.docs["document_text"], "")) for x in items})
        return
    if structural.message_list(value):
        k.messages += 1
        return
    text = structural.text_of(value)
    if text and wordy(text):
        k.texts.append(text)
        if any(text in p and p != text for p in prompts):
            k.contained += 1


def _entry(name: str, scope: str | None, n: int, by_key: dict[str, _Key]) -> dict[str, Any]:
    """One span name's keys, what they look like, and the entries that would read them (None when
    nothing can be told)."""
    looks: dict[str, str] = {}
    docs = {k: x for k, x in by_key.items() if x.docs is not None and len(x.doc_texts) * 2 >= x.seen}
    prompts = [k for k, x in by_key.items() if x.messages and x.messages * 2 >= x.seen]
    texts = {
        k: x for k, x in by_key.items() if k not in docs and k not in prompts and len(x.texts) * 2 >= x.seen
    }
    main: dict[str, Any] = {}
    extra: list[dict[str, Any]] = []  # a reranker's input: documents of a second stage
    if len(docs) >= 2:
        ordered = sorted(docs, key=lambda k: sum(len(t) for t in docs[k].doc_texts))
        out, inp = ordered[0], ordered[-1]
        if all(a <= b for a, b in zip(docs[out].doc_texts, docs[inp].doc_texts, strict=False)):
            main.update(step_type="rerank", **_docs_fields(out, docs[out]), documents_stage="reranked")
            extra.append({**_docs_fields(inp, docs[inp]), "documents_stage": "rerank_input"})
            looks[out], looks[inp] = "documents (reranked)", "documents (rerank input)"
    elif docs:
        key = next(iter(docs))
        main.update(step_type="retrieval", **_docs_fields(key, docs[key]))
        looks[key] = "documents"
    if prompts:
        main.setdefault("step_type", "llm")
        main["prompt"], looks[prompts[0]] = prompts[0], "prompt messages"
    text_keys = list(texts)
    if len(text_keys) == 2 and not prompts:
        a, b = text_keys
        if _contains(texts[a], texts[b]) or _contains(texts[b], texts[a]):
            prompt, answer = (a, b) if _contains(texts[a], texts[b]) else (b, a)
            main.setdefault("step_type", "llm")
            main["prompt"], looks[prompt] = prompt, "prompt text"
            text_keys = [answer]
        elif texts[a].contained != texts[b].contained or {side(a), side(b)} == {"in", "out"}:
            # the trace tells (its prompts quote the question), else the keys' words do
            if texts[a].contained != texts[b].contained:
                query, answer = (a, b) if texts[a].contained > texts[b].contained else (b, a)
            else:
                query, answer = (a, b) if side(a) == "in" else (b, a)
            main.update(query=query, answer=answer)
            looks[query], looks[answer] = "question", "answer"
            text_keys = []
    if len(text_keys) == 1:
        key = text_keys[0]
        if main.get("step_type") in ("retrieval", "rerank"):
            main["query"], looks[key] = key, "question"
        elif "prompt" in main:
            main["answer"], looks[key] = key, "answer"
    entries = []
    for e in (main, *extra):
        if e:
            head = {"name": name, "span_name": re.escape(name)}
            if scope:
                head["scope"] = re.escape(scope)
            entries.append({**head, **e})
    keys_out = [{"key": k, "looks_like": looks.get(k, _plain(x))} for k, x in sorted(by_key.items())]
    return {"span_name": name, "scope": scope, "spans": n, "keys": keys_out, "entries": entries}


def _plain(k: _Key) -> str:
    if k.docs is not None:
        return "documents"
    if k.messages:
        return "prompt messages"
    if k.texts:
        return "text (question or answer: the trace does not tell which)"
    return "nothing readable"


def _contains(outer: _Key, inner: _Key) -> bool:
    """Each sample of ``outer`` contains the same sample of ``inner`` (a prompt and its question)."""
    pairs = list(zip(outer.texts, inner.texts, strict=False))
    return bool(pairs) and all(b in a and a != b for a, b in pairs)


def _docs_fields(key: str, k: _Key) -> dict[str, Any]:
    assert k.docs is not None
    at = _path_text(k.docs_at)
    out: dict[str, Any] = {"documents": f"{key}$.{at}" if at else key}
    out.update({field: _path_text(path) for field, path in k.docs.items()})
    return out


def toml(entries: list[dict[str, Any]]) -> str:
    """The entries as ``[[conventions.mapping]]`` tables of a config file (a JSON string is a TOML
    basic string)."""
    lines: list[str] = []
    for e in entries:
        lines.append("[[conventions.mapping]]")
        lines.extend(f"{k} = {orjson.dumps(v).decode()}" for k, v in e.items())
        lines.append("")
    return "\n".join(lines)
