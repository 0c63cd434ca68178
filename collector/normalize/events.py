"""Span events and log records as payloads of their span, for the structural layer (docs/architecture.md,
Conventions and readers).

An application or instrumentor may record a step's content beside the span instead of on it: a
prompt in a span event (``llm.prompt`` with ``content = [{"text": ...}]``), a retrieval's documents
in an event of its own (``search.done`` with ``hits = [{"id", "text", "score"}]``), an answer in a
log record that carries the span's trace and span id. Whatever the event is called, its attributes
(and a log record's body) are read by the same rules as the span's attributes (``collector.normalize.shape``
over ``collector.normalize.structural``), under the reader and the span's own attributes: they
fill only what neither left empty.

Each event becomes attributes keyed ``event[<name>].<key>`` (a log record's ``log[<name>].<key>``,
its body ``log[<name>].body``, and also each of its keys when the body is an object), so the side a key is on is
read from the event's name and the key together (``event[llm.prompt].content`` is input,
``log[llm.response].body`` output), and a field's provenance names the event it came from. Events
that are no content are left out: GenAI content events (``collector.normalize.genai_events`` makes
them the span's message attributes, for the reader), exceptions, and keys of the transport and
infrastructure namespaces (``shape.INFRASTRUCTURE``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collector.ingest.otlp_values import attributes as proto_attributes
from collector.normalize import doclists, structural
from collector.normalize.genai_events import CONTENT_EVENTS
from collector.normalize.shape import INFRASTRUCTURE, side
from collector.normalize.step import Step

_SKIP_EVENTS = frozenset({"exception", *CONTENT_EVENTS})
_SKIP_KEYS = (*INFRASTRUCTURE, "exception.", "event.name", "log.", "error.")

# one payload: (kind ``event`` or ``log``, name, attributes, body)
Payload = tuple[str, str, dict[str, Any], Any]


def readable(name: str | None) -> bool:
    """Whether an event of this name may hold content for the structural layer."""
    return name not in _SKIP_EVENTS


def _put(out: dict[str, Any], prefix: str, items: Iterable[tuple[str, Any]]) -> None:
    for key, value in items:
        if value is None or value == "" or key.startswith(_SKIP_KEYS):
            continue
        out.setdefault(prefix + key, value)


def attributes(payloads: Iterable[Payload]) -> dict[str, Any]:
    """The attributes the payloads stand for (see the module doc), the first of a key kept."""
    out: dict[str, Any] = {}
    for kind, name, attrs, body in payloads:
        if not readable(name):
            continue
        prefix = f"{kind}[{name or ''}]."
        _put(out, prefix, attrs.items())
        if body is None or body == "":
            continue
        out.setdefault(prefix + "body", body)  # whole, so a wrapper around it is taken off as one
        parsed = structural.parsed(body)
        if isinstance(parsed, dict):  # and by its keys, which may say more than the record's name
            _put(out, prefix, ((str(k), v) for k, v in parsed.items()))
    return out


def span_events(events: Any) -> list[Payload]:
    """The events of a span that may hold content: OTLP ``Span.Event`` messages, or the
    ``{name, time_unix_nano, attributes}`` objects of the ``spans.events`` column."""
    out: list[Payload] = []
    for e in events or ():
        if isinstance(e, dict):
            name, attrs = e.get("name"), e.get("attributes")
            if isinstance(name, str) and readable(name) and isinstance(attrs, dict) and attrs:
                out.append(("event", name, attrs, None))
        else:
            name = getattr(e, "name", None)
            if isinstance(name, str) and readable(name) and len(e.attributes):
                out.append(("event", name, proto_attributes(e.attributes), None))
    return out


def fill_documents(step: Step, extra: dict[str, Any], source_keys: tuple[str, ...]) -> None:
    """A retrieval or tool step a reader claimed that has no candidates, whose events hold a document
    list (not on the input side: a reranker's input, a tool's arguments), takes it. A span no reader
    claimed is read whole by the structural layer, its events included."""
    if step.step_type not in ("retrieval", "tool") or "docs" in (step.provenance or {}):
        return
    if any(d.stage == "candidate" for d in step.docs):
        return
    for key, value in extra.items():
        if side(key) == "in":
            continue
        docs = doclists.documents_in(value, "candidate", source_keys)
        if docs:
            step.docs.extend(docs)
            if step.provenance is None:
                step.provenance = {}
            step.provenance["docs"] = f"shape:documents@{key}"
            return
