"""Settling's operations on the store: which traces are ready, what waits, the parts of a trace that
assembly reads, and the write of a settled trace (``collector.settle`` decides, this reads and writes).

Every function takes the handle it runs on (``Tx``): the settle loop's cursor for reads, the writer
job's connection for ``write_settled``. The statements are ``sql/settle/*.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import pyarrow as pa

from collector.assemble import STAGE_PRIORITY, DocView, StepView
from collector.store import lake_work
from collector.store.base import Tx
from collector.store.content import Fill, write_fills
from collector.store.lake_claims import SETTLE
from collector.store.reader import Window, window_sql
from collector.store.templates import filled, fragment
from collector.store.tx import transaction

AREA = "settle"

# assembly's order of the ranked stages, for ``assembly_docs``
_RANK = "CASE stage " + " ".join(f"WHEN '{st}' THEN {p}" for st, p in STAGE_PRIORITY.items()) + " END"
_RANKED = ", ".join(f"'{st}'" for st in STAGE_PRIORITY)

ASSEMBLY_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("query_text", pa.string()), ("query_norm", pa.string()),
    ("answer_text", pa.string()), ("answer_span_id", pa.string()), ("user_scope", pa.list_(pa.string())),
    ("assembled_spans", pa.int64()),
])  # fmt: skip
CONTEXT_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("span_id", pa.string()), ("stage", pa.string()), ("position", pa.int64()),
    ("doc_id", pa.string()), ("chunk_id", pa.string()), ("content", pa.string()), ("score", pa.float64()),
    ("metadata", pa.string()), ("source", pa.string()), ("received_at", pa.timestamp("us")),
])  # fmt: skip


class Waiting(NamedTuple):
    """A trace to assemble: its id, the count its assembly records (spans and content events), and
    when its first and last spans were received."""

    trace_id: str
    parts: int
    first_received_at: datetime | None
    last_received_at: datetime | None


def _waiting(rows: list[Any]) -> list[Waiting]:
    return [Waiting(r[0], int(r[1]), r[2], r[3]) for r in rows]


def ready_traces(
    tx: Tx, *, settled: datetime, expired: datetime, limit: int, recent: datetime | None = None
) -> list[Waiting]:
    """Complete traces not assembled yet, oldest last span first: the root came and nothing since
    ``settled``, or the last span is older than ``expired``. With ``recent``, only traces whose last
    span arrived since then (else the whole table)."""
    params: dict[str, Any] = {"settled": settled, "expired": expired, "limit": limit}
    if recent is not None:
        params["recent"] = recent
    text = filled(AREA, "ready_traces", recent="" if recent is None else fragment(AREA, "recent_filter"))
    return _claimed(tx, _waiting(tx.execute(text, params).fetchall()))


def waiting_traces(tx: Tx, limit: int) -> list[Waiting]:
    """Traces with spans not assembled yet, complete or not (a forced round)."""
    return _claimed(tx, _waiting(tx.execute(filled(AREA, "waiting_traces"), {"limit": limit}).fetchall()))


def _claimed(tx: Tx, rows: list[Waiting]) -> list[Waiting]:
    """On a lake, the rows this collector claimed to settle (``lake_work``); else all of them."""
    if not rows or not lake_work.is_lake(tx):
        return rows
    return lake_work.claim_waiting(tx, rows, lambda r: r.trace_id, kind=SETTLE, recheck="still_waiting")


def ready_backlog(
    tx: Tx,
    *,
    settled: datetime,
    expired: datetime,
    settle: timedelta,
    max_wait: timedelta,
    recent: datetime,
) -> tuple[int, datetime | None]:
    """How many traces (last span since ``recent``) are complete but not assembled, and when the
    oldest of them became complete."""
    params = {
        "settled": settled,
        "expired": expired,
        "settle": settle,
        "max_wait": max_wait,
        "recent": recent,
    }
    n, since = tx.execute(filled(AREA, "ready_backlog"), params).fetchall()[0]
    return int(n), since


def any_waiting(tx: Tx, recent: datetime) -> bool:
    """Whether a trace whose last span arrived since ``recent`` waits to be assembled."""
    return bool(tx.execute(filled(AREA, "any_waiting"), {"recent": recent}).fetchall()[0][0])


def load_trace_parts(
    tx: Tx, trace_ids: list[str], window: Window = None
) -> tuple[dict[str, list[StepView]], dict[str, list[DocView]]]:
    """The steps of these traces, and the documents assembly needs (``assembly_docs``); ``window``
    (their received range) lets the scans skip the row groups of other traces."""
    tx.register("_ids", pa.table({"trace_id": trace_ids}))
    extra, params = window_sql(window)
    try:
        steps: dict[str, list[StepView]] = {t: [] for t in trace_ids}
        for r in tx.execute(filled(AREA, "trace_steps", window=extra), params).fetchall():
            steps[r[0]].append(
                StepView(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), *r[11:])
            )
        docs: dict[str, list[DocView]] = {t: [] for t in trace_ids}
        text = filled(AREA, "assembly_docs", window=extra, rank=_RANK, ranked=_RANKED)
        for r in tx.execute(text, params).fetchall():
            docs[r[0]].append(DocView(*r[1:]))
    finally:
        tx.unregister("_ids")
    return steps, docs


@dataclass(frozen=True)
class Settled:
    """What a settle round writes: one assembly row per trace (``ASSEMBLY_SCHEMA``) and the context
    documents it derived (``CONTEXT_SCHEMA``), as Arrow tables built off the writer thread."""

    assembly: pa.Table
    context: pa.Table

    @classmethod
    def of(cls, assembly: Mapping[str, Sequence[Any]], context: Mapping[str, Sequence[Any]]) -> Settled:
        """From columns by name (lists of equal length)."""
        return cls(_table(assembly, ASSEMBLY_SCHEMA), _table(context, CONTEXT_SCHEMA))


def _table(columns: Mapping[str, Sequence[Any]], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema})


def write_settled(tx: Tx, settled: Settled, fills: list[Fill], window: Window, settled_at: datetime) -> None:
    """Store a round's assembly in one transaction: the text content events filled into steps, the
    registry's text of documents sent without any, the derived context (replacing the last
    assembly's) and each trace's row (``settled_at``). On a lake: ``lake_work.write_settled``."""
    if lake_work.is_lake(tx):
        return lake_work.write_settled(tx, settled.assembly, settled.context, fills, settled_at)
    tx.register("_asm", settled.assembly)
    tx.register("_ctx", settled.context)
    try:
        with transaction(tx):
            extra, params = window_sql(window)
            write_fills(tx, fills)
            tx.execute(filled(AREA, "registry_text", window=extra), params)
            tx.execute(filled(AREA, "delete_derived", window=extra), params)
            tx.execute(filled(AREA, "insert_context"))
            tx.execute(filled(AREA, "update_traces"), {"now": settled_at})
    finally:
        tx.unregister("_asm")
        tx.unregister("_ctx")
