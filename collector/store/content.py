"""GenAI content events on the store: the log records of settling traces that carry a model call's
messages, the spans they belong to, and the text they fill into steps (``collector.content_events``
reads them into steps; the statements are ``sql/content/*.sql``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from collector.store.base import Tx
from collector.store.reader import Window, window_sql
from collector.store.templates import filled

AREA = "content"


@dataclass(frozen=True)
class Fill:
    """A step whose text its content events filled in."""

    trace_id: str
    span_id: str
    query_text: str | None
    input_text: str | None
    output_text: str | None


FILL_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("span_id", pa.string()), ("query_text", pa.string()),
    ("input_text", pa.string()), ("output_text", pa.string()),
])  # fmt: skip


def event_records(tx: Tx, trace_ids: list[str], events: Iterable[str], window: Window = None) -> list[Any]:
    """The log records named one of ``events`` of these traces that name their span, by trace, span
    and time: (trace_id, span_id, event_name, attributes, body, time_unix_nano)."""
    extra, params = window_sql(window)
    names = ", ".join(f"'{e}'" for e in sorted(events))
    tx.register("_fill_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        return tx.execute(filled(AREA, "event_records", events=names, window=extra), params).fetchall()
    finally:
        tx.unregister("_fill_ids")


def event_spans(tx: Tx, keys: Iterable[tuple[str, str]]) -> list[Any]:
    """The stored spans with these (trace_id, span_id): (trace_id, span_id, attributes, events)."""
    keys = list(keys)
    tx.register(
        "_fill_spans",
        pa.table({
            "trace_id": pa.array([k[0] for k in keys], pa.string()),
            "span_id": pa.array([k[1] for k in keys], pa.string()),
        }),
    )  # fmt: skip
    try:
        return tx.execute(filled(AREA, "event_spans")).fetchall()
    finally:
        tx.unregister("_fill_spans")


def write_fills(tx: Tx, fills: list[Fill]) -> None:
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
