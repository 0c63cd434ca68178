"""GenAI content events on the store: the log records of settling traces that carry a model call's
messages, the spans they belong to, the text they fill into steps (``collector.settling.content_events``
reads them into steps), and which new ones re-open a settled trace (``admitted_events``, at
ingest). The statements are ``sql/content/*.sql``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pyarrow as pa

from collector.store.base import Con, operation
from collector.store.reader import Window, window_params
from collector.store.rows import ContentEventRow, LogRecordRow, SpanEventsRow
from collector.store.templates import filled

AREA = "content"


@dataclass(frozen=True)
class Fill:
    """A step whose text its content events (or other log records) filled in; ``provenance`` the
    JSON object of the fields filled and where each came from, merged into ``steps.provenance``."""

    trace_id: str
    span_id: str
    query_text: str | None
    input_text: str | None
    output_text: str | None
    provenance: str | None = None
    step_type: str | None = None  # the type the records showed a step of no type to be (None: unchanged)


FILL_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("span_id", pa.string()), ("query_text", pa.string()),
    ("input_text", pa.string()), ("output_text", pa.string()), ("provenance", pa.string()),
    ("step_type", pa.string()),
])  # fmt: skip


@dataclass(frozen=True)
class ContentSources:
    """Whose GenAI content events may fill a span. A record joins the span it names only when it came
    from the span's own resource (``service.name``): any ingest client can name any trace and span,
    and would otherwise rewrite another service's answer. ``trusted`` services (a log shipper that
    forwards every app's records under its own name) may fill any span. ``refused`` is told how many
    records were refused (the server counts them on ``/metrics``)."""

    trusted: frozenset[str] = frozenset()
    refused: Callable[[int], None] | None = field(default=None, compare=False)

    def joins(self, record_service: str | None, span_service: str | None) -> bool:
        """Whether a record sent by ``record_service`` may fill a span sent by ``span_service``."""
        return record_service == span_service or (
            record_service is not None and record_service in self.trusted
        )

    def count_refused(self, n: int) -> None:
        if n and self.refused is not None:
            self.refused(n)


@operation
def event_records(
    tx: Con, trace_ids: list[str], events: Iterable[str], window: Window = None
) -> list[ContentEventRow]:
    """The log records named one of ``events`` of these traces that name their span, by trace, span
    and time: (trace_id, span_id, event_name, attributes, body, time_unix_nano, service_name)."""
    params = {**window_params(window), "events": sorted(events)}
    tx.register("_fill_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        return [
            ContentEventRow._make(r) for r in tx.execute(filled(AREA, "event_records"), params).fetchall()
        ]
    finally:
        tx.unregister("_fill_ids")


@operation
def span_records(
    tx: Con, trace_ids: list[str], content_events: list[str], window: Window = None
) -> list[LogRecordRow]:
    """The log records of these traces that name their span and are none of ``content_events``
    (the GenAI content events, read by ``event_records``)."""
    lo, hi = window if window is not None else (None, None)
    params = {"t": trace_ids, "events": content_events, "lo": lo, "hi": hi}
    return [LogRecordRow._make(r) for r in tx.execute(filled(AREA, "span_records"), params).fetchall()]


@operation
def event_spans(tx: Con, keys: Iterable[tuple[str, str]]) -> list[SpanEventsRow]:
    """The stored spans with these (trace_id, span_id): (trace_id, span_id, attributes, events,
    service_name, name, scope_name)."""
    keys = list(keys)
    tx.register(
        "_fill_spans",
        pa.table({
            "trace_id": pa.array([k[0] for k in keys], pa.string()),
            "span_id": pa.array([k[1] for k in keys], pa.string()),
        }),
    )  # fmt: skip
    try:
        return [SpanEventsRow._make(r) for r in tx.execute(filled(AREA, "event_spans")).fetchall()]
    finally:
        tx.unregister("_fill_spans")


@operation
def write_fills(tx: Con, fills: list[Fill]) -> None:
    """Store the filled text in ``steps`` (inside the settle round's transaction)."""
    if not fills:
        return
    table = pa.table(
        {name: pa.array([getattr(f, name) for f in fills], pa.string()) for name in FILL_SCHEMA.names},
        schema=FILL_SCHEMA,
    )
    tx.register("_fills", table)
    try:
        tx.execute(filled(AREA, "write_fills"))
    finally:
        tx.unregister("_fills")


# traces whose received ranges lie closer than this are looked up in one scan of ``spans``; beyond
# _MAX_SCANS such groups, one scan covers them all (a commit costs at most one scan of the range)
_MERGE_GAP = timedelta(minutes=1)
_MAX_SCANS = 8


def admitted_events(
    tx: Con, events: Sequence[tuple[str, str | None, str | None]], sources: ContentSources
) -> tuple[dict[str, int], int]:
    """Of new GenAI content events given as (trace_id, span_id, service_name): how many re-open each
    trace (they count in ``traces.content_events``), and how many were refused (``admitted``)."""
    flags, refused = admitted(tx, events, sources)
    counts: dict[str, int] = {}
    for e, ok in zip(events, flags, strict=True):
        if ok:
            counts[e[0]] = counts.get(e[0], 0) + 1
    return counts, refused


def admitted(
    tx: Con, events: Sequence[tuple[str, str | None, str | None]], sources: ContentSources
) -> tuple[list[bool], int]:
    """Of new GenAI content events given as (trace_id, span_id, service_name): whether each re-opens
    its trace, and how many were refused.

    A record of a trace not settled yet always counts: the first assembly reads it and keeps it out
    if its service is not the span's. A record of a settled trace counts only when its span is stored
    and may take it (``ContentSources.joins``); one from another service is refused, so a forged
    record costs no settle round nor evaluation; one whose span is not stored yet waits for it (the
    span re-opens the trace when it comes). The spans are read within their traces' received range.
    The file's ingest adds the counts to ``traces``; the lake's records only these events in
    ``trace_content_events``. Either way the record itself is stored."""
    names = sorted({e[0] for e in events})
    settled = {
        r[0]: (r[1], r[2]) for r in tx.execute(filled(AREA, "settled_windows"), {"t": names}).fetchall()
    }
    flags = [False] * len(events)
    check: list[int] = []
    for i, e in enumerate(events):
        if e[0] not in settled or (e[2] is not None and e[2] in sources.trusted):
            flags[i] = True
        elif e[1]:
            check.append(i)
    refused = 0
    if check:
        services = _span_services(tx, [events[i] for i in check], settled)
        for i in check:
            trace_id, span_id, service = events[i]
            key = (trace_id, span_id or "")
            if key not in services:
                continue  # its span is not stored: the span re-opens the trace when it comes
            if sources.joins(service, services[key]):
                flags[i] = True
            else:
                refused += 1
    return flags, refused


def _span_services(
    tx: Con,
    events: list[tuple[str, str | None, str | None]],
    windows: dict[str, tuple[datetime | None, datetime | None]],
) -> dict[tuple[str, str], str | None]:
    """The service of each stored span the events name, (trace_id, span_id) -> service_name. One scan
    for each group of traces received close together: a record naming an old trace costs a scan of
    that trace's range, not of everything received since; past ``_MAX_SCANS`` groups, one scan of
    the range from the first to the last."""
    lo_all, hi_all = datetime.min, datetime.max
    spans: dict[str, set[str]] = {}
    for trace_id, span_id, _ in events:
        spans.setdefault(trace_id, set()).add(span_id or "")
    ranges = sorted((windows[t][0] or lo_all, windows[t][1] or hi_all, t) for t in spans)
    groups: list[tuple[datetime, list[datetime], list[str]]] = []  # (lo, [hi], trace ids)
    for lo, hi, trace_id in ranges:
        if groups and (groups[-1][1][0] == hi_all or lo <= groups[-1][1][0] + _MERGE_GAP):
            groups[-1][1][0] = max(groups[-1][1][0], hi)
            groups[-1][2].append(trace_id)
        else:
            groups.append((lo, [hi], [trace_id]))
    if len(groups) > _MAX_SCANS:  # records naming many traces far apart: one scan of them all
        groups = [(groups[0][0], [max(g[1][0] for g in groups)], [t for g in groups for t in g[2]])]
    out: dict[tuple[str, str], str | None] = {}
    for lo, (hi,), trace_ids in groups:
        ids = sorted({span_id for t in trace_ids for span_id in spans[t]})
        params = {"lo": lo, "hi": hi, "t": trace_ids, "s": ids}
        for trace_id, span_id, service in tx.execute(filled(AREA, "span_services"), params).fetchall():
            if span_id in spans.get(trace_id, ()):  # (any span of these traces with any of these ids)
                out[(trace_id, span_id)] = service
    return out
