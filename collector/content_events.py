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
recorded only as a log record). Such a record re-opens no settled trace on its own (an
application's every log line would): it is read when its trace settles, or settles again. Each
field filled is named in the step's ``provenance``: the reader with ``@log_records`` for GenAI
content events, the structural rule and the record's key (``shape:text@log[llm.response].body``)
for the others.
"""

from __future__ import annotations

from collections.abc import Container
from datetime import timedelta
from typing import Any

import orjson

from collector.assemble import StepView
from collector.normalize import events as payloads
from collector.normalize import normalize_span
from collector.normalize.genai_events import CONTENT_EVENTS, ContentEvent, span_content_events, with_content
from collector.store import content
from collector.store.base import Tx
from collector.store.content import FILL_SCHEMA, ContentSources, Fill
from collector.store.reader import Window
from collector.store.templates import filled

__all__ = ["FILL_SCHEMA", "LEAD", "ContentSources", "Fill", "load_fills", "write_fills"]

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


def _span_records(con: Tx, trace_ids: list[str], window: Window) -> list[Any]:
    """The log records of these traces that name their span and are no GenAI content event."""
    lo, hi = window if window is not None else (None, None)
    params = {"t": trace_ids, "events": sorted(CONTENT_EVENTS), "lo": lo, "hi": hi}
    return con.execute(filled(content.AREA, "span_records"), params).fetchall()


Key = tuple[str, str]


def load_fills(
    con: Tx,
    trace_ids: list[str],
    steps: dict[str, list[StepView]],
    window: Window = None,
    sources: ContentSources | None = None,
    first: Container[str] = (),
) -> list[Fill]:
    """Read the content events and other log records of these traces into their steps (``steps`` is
    updated in place); returns the steps whose text changed, for ``write_fills``. A record joins its
    span only as ``sources`` allows (by default from the span's own service); the content events
    refused in the traces assembled for the ``first`` time are counted (``sources.refused``): those
    of a settled trace were counted at ingest."""
    sources = sources or ContentSources()
    lead = (window[0] - LEAD, window[1]) if window is not None else None
    rows = content.event_records(con, trace_ids, CONTENT_EVENTS, lead)
    others = _span_records(con, trace_ids, lead)
    if not rows and not others:
        return []
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
    for trace_id, span_id, name, attrs, body, _t, service in others:
        parsed = _loads(attrs)
        record = ("log", name or "", parsed if isinstance(parsed, dict) else {}, _loads(body))
        found.setdefault((trace_id, span_id), []).append((service, record))
    spans = content.event_spans(con, {**events, **found})
    by_span = {(t, s.span_id): s for t, views in steps.items() for s in views}
    fills: list[Fill] = []
    refused = 0
    for trace_id, span_id, attrs_json, events_json, span_service in spans:
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
        fill = _fill(view, _loads(attrs_json), _loads(events_json), records, logged)
        if fill is not None:
            fills.append(Fill(trace_id, span_id, *fill))
    sources.count_refused(refused)
    return fills


_TEXT = ("query_text", "input_text", "output_text")


def _fill(
    view: StepView,
    attrs: Any,
    span_events: Any,
    records: list[ContentEvent],
    logged: list[payloads.Payload],
) -> tuple[str | None, str | None, str | None, str | None] | None:
    """The span read again with its records: (query, input, output, provenance of what changed), or
    None when nothing changed. The span's own events first (as ingest read them), then its records.
    A field a log record's payload gave fills only an empty one: the structural layer never
    overrides what the span's reader or attributes said."""
    attrs = attrs if isinstance(attrs, dict) else {}
    read = with_content(attrs, span_content_events(span_events) + records)
    extra = payloads.attributes(payloads.span_events(span_events) + logged) or None
    try:
        step = normalize_span(read, extra=extra)
    except Exception:  # a reader must never stop a settle round; the step keeps what it had
        return None
    noted = step.provenance or {}
    out: dict[str, str | None] = {}
    changed: dict[str, str] = {}
    for name in _TEXT:
        old, new = getattr(view, name), getattr(step, name)
        source = noted.get(name, step.convention)
        if new is None or new == old or (old and "@log[" in source):
            out[name] = old
            continue
        out[name] = new
        changed[name] = source if ":" in source else f"{source}@log_records"
    if not changed:
        return None
    view.query_text, view.input_text, view.output_text = (
        out["query_text"],
        out["input_text"],
        out["output_text"],
    )
    return out["query_text"], out["input_text"], out["output_text"], orjson.dumps(changed).decode()


def write_fills(con: Tx, fills: list[Fill]) -> None:
    """Store the filled text in ``steps`` (inside the settle round's transaction)."""
    content.write_fills(con, fills)
