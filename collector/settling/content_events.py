"""GenAI content events sent as log records fill their span's step when the trace settles.

An instrumentor that sends a model call's messages as log records
(``gen_ai.client.inference.operation.details``, ``gen_ai.user.message`` & co.) leaves the span
itself without them, and the records arrive in their own requests, before or after the span. At
assembly the records of each settling trace are read, joined to their span by (trace_id, span_id),
and the span is read again as if the messages had been its attributes
(``collector.normalize.genai_events.with_content``): the step's query, input and output text are
then what they would have been, for the assembly (query, answer, derived context) and in
``steps`` for the evaluators. A record that arrives after its trace settled re-opens the trace
(``traces.content_events``), which settles again.

A record fills its span only when it came from the span's own resource (``service.name``), or from a
service the server's ``trusted_content_sources`` names (``collector.store.content.ContentSources``):
any client that can send logs can name any trace and span id, and would otherwise rewrite another
service's answer. Ingest already keeps such a record from re-opening a settled trace; here, at a
trace's first assembly, the records that came before it settled are sorted out and counted.

Any other log record that names its span is a payload of that span for the structural layer
(``collector.normalize.events``): its attributes and body are read by the same rules as the span's
attributes, under the same trust rule, and fill only a field the span's step has empty (an answer
recorded only as a log record, or a retrieval's documents). Such a record re-opens no settled
trace on its own (an application's every log line would): it is read when its trace settles, or
settles again. Each field filled is named in the step's ``provenance``: the reader with
``@log_records`` for GenAI content events, the structural rule and the record's key
(``shape:text@log[llm.response].body``) for the others. Documents a log record gave a step that has none of that stage (a retrieval that
recorded its query on the span and its results as a log record) are written as the assembly's
derived rows (``source = 'derived'``, replaced at each settle as the derived context is), on
retrieval, tool and rerank steps: a step whose type only a log record would tell keeps its type.

The span is read again with the server's own build options (``collector.ingest.build.BuildOptions``: its
``source_keys`` and ``[[conventions.mapping]]`` entries, matched on the span's name and scope), as
ingest read it: a field a mapping filled is the same after the settle as before it.
"""

from __future__ import annotations

from collections.abc import Container
from datetime import timedelta
from typing import Any, NamedTuple

import orjson

from collector.ingest.build import DEFAULT_OPTIONS, BuildOptions
from collector.normalize import events as payloads
from collector.normalize import normalize_span
from collector.normalize.genai_events import CONTENT_EVENTS, ContentEvent, span_content_events, with_content
from collector.normalize.provenance import docs_key
from collector.normalize.step import Step
from collector.settling.assemble import DocView, StepView
from collector.store import content
from collector.store.base import Tx
from collector.store.content import FILL_SCHEMA, ContentSources, Fill
from collector.store.reader import Window

__all__ = ["FILL_SCHEMA", "LEAD", "ContentSources", "Fill", "Filled", "load_fills", "write_fills"]

# a record may be received this long before the first span of its trace (an app that flushes its
# log exporter before its span exporter) and still be found without scanning the whole table
LEAD = timedelta(minutes=5)


def _loads(value: Any) -> Any:
    if value is None:
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


Key = tuple[str, str]


class Filled(NamedTuple):
    """What the log records of a settle round's traces gave: the steps whose text changed (for
    ``write_fills``), and the documents they gave steps, by trace (written with the derived context)."""

    fills: list[Fill]
    documents: dict[str, list[DocView]]


# the steps whose documents a log record may give (the types that hold candidates or rerank stages)
_DOCUMENT_STEPS = frozenset(("retrieval", "tool", "rerank"))


def load_fills(
    con: Tx,
    trace_ids: list[str],
    steps: dict[str, list[StepView]],
    window: Window = None,
    sources: ContentSources | None = None,
    first: Container[str] = (),
    options: BuildOptions = DEFAULT_OPTIONS,
) -> Filled:
    """Read the content events and other log records of these traces into their steps (``steps`` is
    updated in place); returns the steps whose text changed, for ``write_fills``, and the documents
    the records gave. A record joins its span only as ``sources`` allows (by default from the span's
    own service); the content events refused in the traces assembled for the ``first`` time are
    counted (``sources.refused``): those of a settled trace were counted at ingest. ``options`` are the server's build options, so that
    a span is read again as ingest read it."""
    sources = sources or ContentSources()
    lead = (window[0] - LEAD, window[1]) if window is not None else None
    rows = content.event_records(con, trace_ids, CONTENT_EVENTS, lead)
    others = content.span_records(con, trace_ids, sorted(CONTENT_EVENTS), lead)
    if not rows and not others:
        return Filled([], {})
    events: dict[Key, list[tuple[str | None, ContentEvent]]] = {}
    for trace_id, span_id, name, attrs, body, t, service in rows:
        parsed = _loads(attrs)
        events.setdefault((trace_id, span_id), []).append(
            (
                service,
                ContentEvent(name, parsed if isinstance(parsed, dict) else {}, _loads(body), int(t or 0)),
            )
        )
    found: dict[Key, list[tuple[str | None, payloads.Payload]]] = {}
    for trace_id, span_id, record_name, attrs, body, _t, service in others:
        parsed = _loads(attrs)
        record = ("log", record_name or "", parsed if isinstance(parsed, dict) else {}, _loads(body))
        found.setdefault((trace_id, span_id), []).append((service, record))
    spans = content.event_spans(con, {**events, **found})
    by_span = {(t, s.span_id): s for t, views in steps.items() for s in views}
    fills: list[Fill] = []
    documents: dict[str, list[DocView]] = {}
    refused = 0
    for trace_id, span_id, attrs_json, events_json, span_service, span_name, scope in spans:
        key = (trace_id, span_id)
        view = by_span.get(key)
        if view is None:
            continue
        sent = events.get(key, [])
        records = [e for service, e in sent if sources.joins(service, span_service)]
        if trace_id in first:
            refused += len(sent) - len(records)
        logged = [p for service, p in found.get(key, []) if sources.joins(service, span_service)]
        if not records and not logged:
            continue
        span = _Span(_loads(attrs_json), _loads(events_json), span_name or "", scope)
        fill, docs = _fill(view, span, records, logged, options)
        if fill is not None:
            fills.append(Fill(trace_id, span_id, *fill))
        if docs:
            documents.setdefault(trace_id, []).extend(docs)
    sources.count_refused(refused)
    return Filled(fills, documents)


_TEXT = ("query_text", "input_text", "output_text")
_UNTYPED = frozenset(("other", "chain"))  # the step types a log record may show to be another


class _Span(NamedTuple):
    """A stored span as the settle reads it again: its attributes and events (parsed JSON), name and
    instrumentation scope (what a mapping entry matches)."""

    attrs: Any
    events: Any
    name: str
    scope: str | None


def _fill(
    view: StepView,
    span: _Span,
    records: list[ContentEvent],
    logged: list[payloads.Payload],
    options: BuildOptions = DEFAULT_OPTIONS,
) -> tuple[tuple[str | None, str | None, str | None, str | None, str | None] | None, list[DocView]]:
    """The span read again with its records: (query, input, output, provenance of what changed, the
    step type they showed), or None when nothing changed, and the documents its log records gave it.
    The span's own events first (as ingest read them), then its records. A field a log record's
    payload gave fills only an empty one: the structural layer never overrides what the span's
    reader or attributes said. A step of no type (``other``) or a plain task (``chain``) takes the
    type its records show (a span that recorded nothing, whose log record lists the documents it
    returned, was a retrieval), so that its documents are kept and counted as such."""
    attrs = span.attrs if isinstance(span.attrs, dict) else {}
    read = with_content(attrs, span_content_events(span.events) + records)
    extra = payloads.attributes(payloads.span_events(span.events) + logged) or None
    try:
        step = normalize_span(read, options.source_keys, None, options.mappings, span.name, span.scope, extra)
    except Exception:  # a reader must never stop a settle round; the step keeps what it had
        return None, []
    noted = step.provenance or {}
    out: dict[str, str | None] = {}
    changed: dict[str, str] = {}
    step_type = None
    if view.step_type in _UNTYPED and step.step_type not in _UNTYPED:
        # read as ingest read it, plus the records: what changed the type was a record
        step_type = view.step_type = step.step_type
        source = noted.get("step_type", step.convention)
        changed["step_type"] = source if ":" in source else f"{source}@log_records"
    docs = _logged_docs(view, step, noted, changed)
    for name in _TEXT:
        old, new = getattr(view, name), getattr(step, name)
        source = noted.get(name, step.convention)
        if new is None or new == old or (old and "@log[" in source):
            out[name] = old
            continue
        out[name] = new
        changed[name] = source if ":" in source else f"{source}@log_records"
    if not changed:
        return None, docs
    view.query_text, view.input_text, view.output_text = (
        out["query_text"],
        out["input_text"],
        out["output_text"],
    )
    return (
        out["query_text"],
        out["input_text"],
        out["output_text"],
        orjson.dumps(changed).decode(),
        step_type,
    ), docs


def _logged_docs(view: StepView, step: Step, noted: dict[str, str], changed: dict[str, str]) -> list[DocView]:
    """The documents of the stages only a log record gave (their provenance names a ``log[...]``
    key: the span itself had none of that stage, or the structural layer would not have looked
    further), as derived rows of the step; each stage's source is added to ``changed``."""
    if view.step_type not in _DOCUMENT_STEPS or not step.docs:
        return []
    out: list[DocView] = []
    for stage in sorted({d.stage for d in step.docs}):
        source = noted.get(docs_key(stage), "")
        if "@log[" not in source:
            continue
        changed[docs_key(stage)] = source
        for d in step.docs:
            if d.stage != stage:
                continue
            meta = d.metadata_json or (orjson.dumps(d.metadata).decode() if d.metadata else None)
            out.append(
                DocView(
                    view.span_id, stage, d.position, d.doc_id, d.chunk_id, d.content, d.score, meta, "derived"
                )
            )
    return out


def write_fills(con: Tx, fills: list[Fill]) -> None:
    """Store the filled text in ``steps`` (inside the settle round's transaction)."""
    content.write_fills(con, fills)
