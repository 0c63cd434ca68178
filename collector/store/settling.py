"""Settling's operations on the store: which traces are ready, what waits, the parts of a trace that
assembly reads, and the write of a settled trace (``collector.settling.settle`` decides, this reads and writes).

Every function takes the handle it runs on (``Tx`` to callers): the settle loop's cursor for reads, the writer
job's connection for ``write_settled``. The statements are ``sql/settle/*.sql``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from collector.settling.assemble import STAGE_PRIORITY, DocView, StepView
from collector.store import verdicts
from collector.store.backend import is_lake
from collector.store.base import Con, arrow_rows, operation
from collector.store.content import Fill, write_fills
from collector.store.file import facts
from collector.store.lake import work as lake_work
from collector.store.lake.claims import SETTLE
from collector.store.reader import Window, window_params
from collector.store.sqlfiles import sql
from collector.store.tx import transaction

AREA = "settle"

# the ranked stages, for ``assembly_docs``
_RANKED = list(STAGE_PRIORITY)

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
    """A trace to assemble: its id, the count its assembly records (spans and content events), when
    its first and last spans were received, and whether it was settled before (only then can it
    have derived context rows to replace)."""

    trace_id: str
    parts: int
    first_received_at: datetime | None
    last_received_at: datetime | None
    settled_before: bool = True


def _waiting(rows: list[Any]) -> list[Waiting]:
    return [Waiting(r[0], int(r[1]), r[2], r[3], bool(r[4])) for r in rows]


@operation
def ready_traces(
    tx: Con,
    *,
    settled: datetime,
    expired: datetime,
    limit: int,
    recent: datetime | None = None,
    keep: Callable[[Waiting], bool] | None = None,
    spare: int = 0,
) -> list[Waiting]:
    """At most ``limit`` complete traces not assembled yet, oldest last span first: the root came and
    nothing since ``settled``, or the last span is older than ``expired``. With ``recent``, only
    traces whose last span arrived since then (else the whole table); with ``keep``, only the rows it
    keeps, of ``limit + spare`` read (so the rows it holds back do not crowd out the rest), before a
    lake collector claims them (one held back is left to the others)."""
    params = {"settled": settled, "expired": expired, "limit": limit + spare, "recent": recent}
    rows = _waiting(tx.execute(sql(AREA, "ready_traces"), params).fetchall())
    if keep is not None:  # asked of each row until ``limit`` are kept, no further
        kept: list[Waiting] = []
        for r in rows:
            if len(kept) == limit:
                break
            if keep(r):
                kept.append(r)
        rows = kept
    return _claimed(tx, rows[:limit])


@operation
def waiting_traces(tx: Con, limit: int) -> list[Waiting]:
    """Traces with spans not assembled yet, complete or not (a forced round)."""
    return _claimed(tx, _waiting(tx.execute(sql(AREA, "waiting_traces"), {"limit": limit}).fetchall()))


def _claimed(tx: Con, rows: list[Waiting]) -> list[Waiting]:
    """On a lake, the rows this collector claimed to settle (``lake.work``); else all of them."""
    if not rows or not is_lake(tx):
        return rows
    return lake_work.claim_waiting(tx, rows, lambda r: r.trace_id, kind=SETTLE, recheck="still_waiting")


@operation
def ready_backlog(
    tx: Con,
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
    n, since = tx.execute(sql(AREA, "ready_backlog"), params).fetchall()[0]
    return int(n), since


@operation
def any_waiting(tx: Con, recent: datetime) -> bool:
    """Whether a trace whose last span arrived since ``recent`` waits to be assembled."""
    return bool(tx.execute(sql(AREA, "any_waiting"), {"recent": recent}).fetchall()[0][0])


@operation
def load_trace_parts(
    tx: Con, trace_ids: list[str], window: Window = None
) -> tuple[dict[str, list[StepView]], dict[str, list[DocView]]]:
    """The steps of these traces, and the documents assembly needs (``assembly_docs``, then
    ``first_of_each_text``); ``window`` (their received range) lets the scans skip the row groups of
    other traces."""
    tx.register("_ids", pa.table({"trace_id": trace_ids}))
    params = window_params(window)
    try:
        steps: dict[str, list[StepView]] = {t: [] for t in trace_ids}
        for r in tx.execute(sql(AREA, "trace_steps"), params).fetchall():
            steps[r[0]].append(
                StepView(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), *r[11:])
            )
        rows = arrow_rows(tx, sql(AREA, "assembly_docs"), {**params, "ranked": _RANKED})
    finally:
        tx.unregister("_ids")
    docs: dict[str, list[DocView]] = {t: [] for t in trace_ids}
    for trace_id, doc in first_of_each_text(rows):
        docs[trace_id].append(doc)
    return steps, docs


def first_of_each_text(rows: pa.Table) -> list[tuple[str, DocView]]:
    """The documents assembly reads, from the rows of ``assembly_docs``: every explicit context row,
    and of the ranked stages' rows the first of each text in a trace (by stage in assembly's order,
    then span, stage and position, missing positions last), as (trace id, document), sorted by
    trace, span, stage and position (missing positions last).

    Chosen with Arrow's kernels, texts compared by their index in the column's dictionary (each text
    hashed once), and only the rows kept become Python objects: a text comes back for each stage it
    is in, and partitioning by the texts themselves in SQL cost twice as much as fetching every row."""
    if not rows.num_rows:
        return []
    # the choice is made on narrow columns and row numbers; the texts are taken once, at the end
    keys = rows.select(["trace_id", "span_id", "stage", "position"])
    keys = keys.append_column("_row", pa.array(range(rows.num_rows), pa.int64()))
    context = pc.equal(keys.column("stage"), "context")
    ranked = keys.filter(pc.invert(context))
    ranked = ranked.append_column(
        "_text",
        pc.dictionary_encode(rows.column("content").filter(pc.invert(context))).combine_chunks().indices,
    ).append_column("_rank", pc.index_in(ranked.column("stage"), value_set=_PRIORITY))
    ranked = ranked.take(pc.sort_indices(ranked, sort_keys=_by("trace_id", "_text", "_rank", *_ORDER[1:])))
    n = ranked.num_rows
    if n:
        trace, text = ranked.column("trace_id"), ranked.column("_text")
        changed = pc.or_(
            pc.not_equal(trace.slice(1), trace.slice(0, n - 1)),
            pc.not_equal(text.slice(1), text.slice(0, n - 1)),
        )
        ranked = ranked.filter(pa.concat_arrays([pa.array([True]), changed.combine_chunks()]))
    kept = pa.concat_tables([keys.filter(context), ranked.select(keys.column_names)])
    kept = kept.take(pc.sort_indices(kept, sort_keys=_by(*_ORDER)))
    picked = rows.take(kept.column("_row"))
    columns = [picked.column(name).to_pylist() for name in _DOC_FIELDS]
    return list(zip(picked.column("trace_id").to_pylist(), map(DocView, *columns), strict=True))


def _by(*names: str) -> list[tuple[str, str]]:
    return [(name, "ascending") for name in names]


_ORDER = ("trace_id", "span_id", "stage", "position")
# the ranked stages in assembly's order (their index is the rank)
_PRIORITY = pa.array(sorted(STAGE_PRIORITY, key=STAGE_PRIORITY.__getitem__), pa.string())
_DOC_FIELDS = ("span_id", "stage", "position", "doc_id", "chunk_id", "content", "score", "metadata", "source")


@dataclass(frozen=True)
class Settled:
    """What a settle round writes: one assembly row per trace (``ASSEMBLY_SCHEMA``) and the context
    documents it derived (``CONTEXT_SCHEMA``), as Arrow tables built off the writer thread;
    ``resettles``: whether a trace of the round was settled before (else no derived context of
    theirs is stored, and there is none to remove)."""

    assembly: pa.Table
    context: pa.Table
    resettles: bool = True

    @classmethod
    def of(
        cls,
        assembly: Mapping[str, Sequence[Any]],
        context: Mapping[str, Sequence[Any]],
        resettles: bool = True,
    ) -> Settled:
        """From columns by name (lists of equal length)."""
        return cls(_table(assembly, ASSEMBLY_SCHEMA), _table(context, CONTEXT_SCHEMA), resettles)


def _table(columns: Mapping[str, Sequence[Any]], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema})


@operation
def write_settled(tx: Con, settled: Settled, fills: list[Fill], window: Window, settled_at: datetime) -> None:
    """Store a round's assembly in one transaction: the text content events filled into steps, the
    registry's text of documents sent without any, the derived context (replacing the last
    assembly's) and each trace's row (``settled_at``). On a lake: ``lake.work.write_settled``."""
    if is_lake(tx):
        return lake_work.write_settled(tx, settled.assembly, settled.context, fills, settled_at)
    tx.register("_asm", settled.assembly)
    tx.register("_ctx", settled.context)
    try:
        with transaction(tx):
            params = window_params(window)
            write_fills(tx, fills)
            tx.execute(sql(AREA, "registry_text"), params)
            if settled.resettles:  # derived context is written only here, with settled_at
                tx.execute(sql(AREA, "delete_derived"), params)
            tx.execute(sql(AREA, "insert_context"))
            tx.execute(sql(AREA, "update_traces"), {"now": settled_at})
            _settled_facts(tx, settled.assembly, window, settled_at)
    finally:
        tx.unregister("_asm")
        tx.unregister("_ctx")


def _settled_facts(tx: Con, assembly: pa.Table, window: Window, settled_at: datetime) -> None:
    """The traces just assembled are changed for their facts (``facts.changed``), in the same transaction;
    their verdicts are read from the least ``verdicts_since`` of those evaluated before (traces never
    evaluated have none), their rows of traces, steps and documents from the least time they were first
    received."""
    done = assembly.select(["trace_id"])
    tx.register("_done", done)
    try:
        earlier = verdicts.earlier_verdicts(tx, done.num_rows, window)
        facts.changed(tx, earlier.current_since(settled_at), earlier.received, settled_at)
    finally:
        tx.unregister("_done")
