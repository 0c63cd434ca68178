"""Deep-search agents: the ``surfaced`` and ``opened`` stages (docs/architecture.md, Evidence and matching), derived at assembly.

A search tool often returns a list of results — titles, snippets, ids or urls, no full text — and
the agent then opens some of them with another tool (``fetch``, ``open_url``, ``read_document``)
whose result is the document's text. Evidence that was listed but never opened was never read, and
that is a failure of its own (layer ``not_opened``), not a retrieval miss.

- ``surfaced``: each item of a tool result that is a list of search results (a JSON list, or an
  object holding one under ``results``, ``items``, ``hits``, …) whose items carry an id or a url
  and a title or snippet, and no text field (``content``, ``page_content``, ``text``: such a list
  is a list of retrieved documents, read as the tool's candidates by the normalizer). One row per
  result on the search tool's span, in rank order: ``doc_id`` the result's id, else its url;
  ``content`` empty (the text was not fetched); ``metadata`` the title, snippet, url and id.
- ``opened``: a later tool call (it starts after the search started) whose arguments name a
  surfaced result (a string value equal to its id or url) and whose result is text (plain text, or
  an object's ``content`` / ``text`` / ``page_content`` / ``body`` / ``raw_content`` / ``markdown``),
  unless it failed (status ERROR). One row per result it opened, on the opening tool's span:
  ``doc_id`` as surfaced, ``content`` the text fetched, ``metadata`` the url, title and the
  search span and rank it was surfaced at. An opened document counts as a candidate: the text
  was retrieved.

Rows are ``source = 'derived'``, replaced whenever the trace is assembled again, like the derived
context stage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from collector.normalize import documents
from collector.settling.assemble import DocView, StepView

_LIST_KEYS = (
    "results",
    "items",
    "hits",
    "search_results",
    "organic_results",
    "organic",
    "documents",
    "data",
    "web",
)
# one definition of a search result's fields, shared with the normalizer's document rules (a list
# of results is not a list of retrieved documents there)
_ID_KEYS = documents.LISTING_ID_FIELDS
_URL_KEYS = documents.LISTING_URL_FIELDS
_TITLE_KEYS = documents.LISTING_TITLE_FIELDS
_SNIPPET_KEYS = documents.LISTING_SNIPPET_FIELDS
_TEXT_KEYS = documents.LISTING_TEXT_FIELDS  # a result with one of these is a retrieved document
_OPENED_TEXT_KEYS = ("content", "text", "page_content", "body", "raw_content", "markdown", "full_text")


@dataclass(frozen=True, slots=True)
class Result:
    """One search result as listed."""

    rank: int
    id: str | None
    url: str | None
    title: str | None
    snippet: str | None

    @property
    def key(self) -> str | None:
        return self.id or self.url

    def names(self) -> set[str]:
        return {_canon(n) for n in (self.id, self.url) if n}


def _loads(value: str | None) -> Any:
    if not value or value.lstrip()[:1] not in ("[", "{", '"'):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        v = _str(item.get(k))
        if v:
            return v
    return None


def _canon(name: str) -> str:
    """Ids and urls compare without surrounding space and a trailing slash."""
    return name.strip().rstrip("/")


def _result_list(parsed: Any, depth: int = 0) -> list[Any] | None:
    if isinstance(parsed, list):
        return parsed
    if isinstance(parsed, dict) and depth < 2:
        for key in _LIST_KEYS:
            found = _result_list(parsed.get(key), depth + 1)
            if found:
                return found
    return None


def search_results(result: str | None) -> list[Result]:
    """The results listed by a search tool's result, or [] when it is no list of search results."""
    items = _result_list(_loads(result))
    if not items or not all(isinstance(i, dict) for i in items):
        return []
    out: list[Result] = []
    for rank, item in enumerate(items):
        if any(item.get(k) not in (None, "") for k in _TEXT_KEYS):
            return []  # retrieved documents with their text, not a list of results
        out.append(
            Result(
                rank,
                _first(item, _ID_KEYS),
                _first(item, _URL_KEYS),
                _first(item, _TITLE_KEYS),
                _first(item, _SNIPPET_KEYS),
            )
        )
    if not any(r.key for r in out) or not any(r.title or r.snippet for r in out):
        return []
    return out


def opened_text(result: str | None) -> str | None:
    """The document text a tool returned: plain text, or an object's text field."""
    if not result or not result.strip():
        return None
    parsed = _loads(result)
    if parsed is None:
        return result.strip()
    if isinstance(parsed, str):
        return parsed.strip() or None
    if isinstance(parsed, dict):
        return _first(parsed, _OPENED_TEXT_KEYS)
    return None


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    if depth > 4:
        return
    s = _str(value)
    if s is not None:
        yield s
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def argument_names(arguments: str | None) -> set[str]:
    """Every string value of a tool call's arguments (the raw text when it is not JSON)."""
    if not arguments or not arguments.strip():
        return set()
    parsed = _loads(arguments)
    values = [arguments] if parsed is None else list(_strings(parsed))
    return {_canon(v) for v in values if v.strip()}


def _start(s: StepView) -> tuple[bool, Any]:
    return (s.start_time is None, s.start_time)


def _meta(**values: Any) -> str:
    return orjson.dumps({k: v for k, v in values.items() if v is not None}).decode()


def search_stages(steps: list[StepView]) -> list[DocView]:
    """The ``surfaced`` and ``opened`` rows of a trace (see the module doc)."""
    tools = sorted((s for s in steps if s.step_type == "tool"), key=_start)
    if len(tools) < 1:
        return []
    out: list[DocView] = []
    listed: list[tuple[StepView, Result]] = []
    for tool in tools:
        output = tool.tool_result or tool.output_text
        results = search_results(output)
        if results:
            for r in results:
                meta = _meta(title=r.title, snippet=r.snippet, url=r.url, id=r.id, rank=r.rank + 1)
                out.append(
                    DocView(tool.span_id, "surfaced", r.rank, r.key, None, None, None, meta, "derived")
                )
            listed.extend((tool, r) for r in results)
            continue
        if not listed or (tool.status_code or "").upper() == "ERROR":
            continue
        names = argument_names(tool.tool_arguments or tool.input_text)
        if not names:
            continue
        text = opened_text(output)
        if not text:
            continue
        position = 0
        seen: set[str] = set()
        for search, r in listed:
            if (
                search.start_time is not None
                and tool.start_time is not None
                and tool.start_time < search.start_time
            ):
                continue
            if not (r.names() & names) or (r.key or "") in seen:
                continue
            seen.add(r.key or "")
            meta = _meta(
                url=r.url, title=r.title, id=r.id, surfaced_span_id=search.span_id, surfaced_rank=r.rank + 1
            )
            out.append(DocView(tool.span_id, "opened", position, r.key, None, text, None, meta, "derived"))
            position += 1
    return out
