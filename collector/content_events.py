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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from collector.assemble import StepView
from collector.normalize import normalize_span
from collector.normalize.genai_events import CONTENT_EVENTS, ContentEvent, span_content_events, with_content
from collector.store.reader import Window, window_sql

# a record may be received this long before the first span of its trace (an app that flushes its
# log exporter before its span exporter) and still be found without scanning the whole table
LEAD = timedelta(minutes=5)
_EVENTS = ", ".join(f"'{e}'" for e in sorted(CONTENT_EVENTS))


@dataclass(frozen=True)
class Fill:
    trace_id: str
    span_id: str
    query_text: str | None
    input_text: str | None
    output_text: str | None


FILL_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("span_id", pa.string()), ("query_text", pa.string()),
    ("input_text", pa.string()), ("output_text", pa.string()),
])  # fmt: skip


def _loads(value: Any) -> Any:
    if value is None:
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def load_fills(
    con: duckdb.DuckDBPyConnection,
    trace_ids: list[str],
    steps: dict[str, list[StepView]],
    window: Window = None,
) -> list[Fill]:
    """Read the content events of these traces' log records into their steps (``steps`` is updated in
    place); returns the steps whose text changed, for ``write_fills``."""
    lead = (window[0] - LEAD, window[1]) if window is not None else None
    extra, params = window_sql(lead)
    con.register("_fill_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        rows = con.execute(
            "SELECT trace_id, span_id, event_name, attributes, body, time_unix_nano FROM log_records "
            f"WHERE trace_id IN (SELECT trace_id FROM _fill_ids) AND span_id IS NOT NULL AND event_name IN ({_EVENTS})"
            f"{extra} ORDER BY trace_id, span_id, time_unix_nano",
            params,
        ).fetchall()
        if not rows:
            return []
        events: dict[tuple[str, str], list[ContentEvent]] = {}
        for trace_id, span_id, name, attrs, body, t in rows:
            parsed = _loads(attrs)
            events.setdefault((trace_id, span_id), []).append(
                ContentEvent(name, parsed if isinstance(parsed, dict) else {}, _loads(body), int(t or 0))
            )
        con.register(
            "_fill_spans",
            pa.table({
                "trace_id": pa.array([k[0] for k in events], pa.string()),
                "span_id": pa.array([k[1] for k in events], pa.string()),
            }),
        )  # fmt: skip
        try:
            spans = con.execute(
                "SELECT s.trace_id, s.span_id, s.attributes, s.events FROM spans s "
                "JOIN _fill_spans f ON s.trace_id = f.trace_id AND s.span_id = f.span_id"
            ).fetchall()
        finally:
            con.unregister("_fill_spans")
    finally:
        con.unregister("_fill_ids")
    by_span = {(t, s.span_id): s for t, views in steps.items() for s in views}
    fills: list[Fill] = []
    for trace_id, span_id, attrs_json, events_json in spans:
        view = by_span.get((trace_id, span_id))
        if view is None:
            continue
        attrs = _loads(attrs_json)
        attrs = attrs if isinstance(attrs, dict) else {}
        # the span's own events first (as ingest read them), then its log records
        found = span_content_events(_loads(events_json)) + events[(trace_id, span_id)]
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
    return fills


def write_fills(con: duckdb.DuckDBPyConnection, fills: list[Fill]) -> None:
    """Store the filled text in ``steps`` (inside the settle round's transaction)."""
    if not fills:
        return
    table = pa.table(
        {name: pa.array([getattr(f, name) for f in fills], pa.string()) for name in FILL_SCHEMA.names},
        schema=FILL_SCHEMA,
    )
    con.register("_fills", table)
    try:
        con.execute(
            "UPDATE steps SET query_text = f.query_text, input_text = f.input_text, output_text = f.output_text "
            "FROM _fills f WHERE steps.trace_id = f.trace_id AND steps.span_id = f.span_id"
        )
    finally:
        con.unregister("_fills")
