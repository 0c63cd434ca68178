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
"""

from __future__ import annotations

from collections.abc import Container
from datetime import timedelta
from typing import Any

import orjson

from collector.assemble import StepView
from collector.normalize import normalize_span
from collector.normalize.genai_events import CONTENT_EVENTS, ContentEvent, span_content_events, with_content
from collector.store import content
from collector.store.base import Tx
from collector.store.content import FILL_SCHEMA, ContentSources, Fill
from collector.store.reader import Window

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


def load_fills(
    con: Tx,
    trace_ids: list[str],
    steps: dict[str, list[StepView]],
    window: Window = None,
    sources: ContentSources | None = None,
    first: Container[str] = (),
) -> list[Fill]:
    """Read the content events of these traces' log records into their steps (``steps`` is updated in
    place); returns the steps whose text changed, for ``write_fills``. A record joins its span only as
    ``sources`` allows (by default from the span's own service); the records refused in the traces
    assembled for the ``first`` time are counted (``sources.refused``): those of a settled trace were
    counted at ingest."""
    sources = sources or ContentSources()
    lead = (window[0] - LEAD, window[1]) if window is not None else None
    rows = content.event_records(con, trace_ids, CONTENT_EVENTS, lead)
    if not rows:
        return []
    events: dict[tuple[str, str], list[tuple[str | None, ContentEvent]]] = {}
    for trace_id, span_id, name, attrs, body, t, service in rows:
        parsed = _loads(attrs)
        events.setdefault((trace_id, span_id), []).append(
            (
                service,
                ContentEvent(name, parsed if isinstance(parsed, dict) else {}, _loads(body), int(t or 0)),
            )
        )
    spans = content.event_spans(con, events)
    by_span = {(t, s.span_id): s for t, views in steps.items() for s in views}
    fills: list[Fill] = []
    refused = 0
    for trace_id, span_id, attrs_json, events_json, span_service in spans:
        view = by_span.get((trace_id, span_id))
        if view is None:
            continue
        records = [e for service, e in events[(trace_id, span_id)] if sources.joins(service, span_service)]
        if trace_id in first:
            refused += len(events[(trace_id, span_id)]) - len(records)
        if not records:
            continue
        attrs = _loads(attrs_json)
        attrs = attrs if isinstance(attrs, dict) else {}
        # the span's own events first (as ingest read them), then its log records
        found = span_content_events(_loads(events_json)) + records
        try:
            step = normalize_span(with_content(attrs, found))
        except Exception:  # a reader must never stop a settle round; the step keeps what it had
            continue
        query = step.query_text or view.query_text
        text_in = step.input_text or view.input_text
        text_out = step.output_text or view.output_text
        if (query, text_in, text_out) == (view.query_text, view.input_text, view.output_text):
            continue
        view.query_text, view.input_text, view.output_text = query, text_in, text_out
        fills.append(Fill(trace_id, span_id, query, text_in, text_out))
    sources.count_refused(refused)
    return fills


def write_fills(con: Tx, fills: list[Fill]) -> None:
    """Store the filled text in ``steps`` (inside the settle round's transaction)."""
    content.write_fills(con, fills)
