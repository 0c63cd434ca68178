"""Settling and evaluation on a lake: the paths ``collector.store.settling`` and
``collector.store.verdicts`` take when their handle is a lake's.

Several collectors settle and evaluate the same lake. Each trace is worked on by the collector that
claimed it (``claims``): the traces a round finds ready (or waiting for the cheap tier) are
claimed, those still waiting once claimed are worked on, and the claims are released once the work
is committed. So a trace is settled once for each span count and evaluated once for each generation,
whichever collectors its spans arrived at; a collector killed with work claimed leaves its claims to
expire, and another takes the work then.

The writes append (``schema``): a settle round's assembly and derived context, a batch's
verdicts, log rows and each trace's new generation go in one lake transaction each, so a collector
killed half-way wrote all of it or nothing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from collector.store.base import Con
from collector.store.content import FILL_SCHEMA, Fill
from collector.store.lake import claims
from collector.store.sqlfiles import sql
from collector.store.templates import filled
from collector.store.tx import transaction

AREA = "lake/work"
CONFLICT_RETRIES = 6
JUDGE_TIER = "judge"  # the ``tier`` of the judge's verdicts
T = TypeVar("T")


def _with(tx: Con, tables: Mapping[str, pa.Table], run: Callable[[], T]) -> T:
    for name, table in tables.items():
        tx.register(name, table)
    try:
        return run()
    finally:
        for name in tables:
            tx.unregister(name)


def _ids(trace_ids: list[str]) -> pa.Table:
    return pa.table({"trace_id": pa.array(trace_ids, pa.string())})


def _committed(tx: Con, body: Callable[[], T]) -> T:
    """``body`` in one transaction, run again after a conflict with another collector's commit."""
    for attempt in range(CONFLICT_RETRIES + 1):
        try:
            with transaction(tx):
                return body()
        except duckdb.TransactionException:
            if attempt == CONFLICT_RETRIES:
                raise
            time.sleep(0.01 * (2**attempt))
    raise AssertionError("unreachable")


# --- settling -------------------------------------------------------------------------------------


def claim_waiting(
    tx: Con,
    rows: list[T],
    key: Callable[[T], str],
    *,
    kind: str,
    recheck: str,
    others: list[str] | None = None,
) -> list[T]:
    """Of the candidate ``rows`` (ready to settle, or waiting for the cheap tier, oldest first), the
    first ``claims.round_cap`` that no other collector holds (``others``: those held, when
    the caller read them already), claimed by this one and still waiting once claimed (``recheck``:
    a statement over ``_claimed``); the claims of the others are released."""
    if not rows:
        return rows
    held = set(claims.held_by_others(tx, kind) if others is None else others)
    rows = [r for r in rows if key(r) not in held][: claims.round_cap(tx)]
    if not rows:
        return rows
    got = claims.claim(tx, kind, [key(r) for r in rows])
    if not got:
        return []
    still = {
        str(r[0])
        for r in _with(tx, {"_claimed": _ids(got)}, lambda: tx.execute(sql(AREA, recheck)).fetchall())
    }
    done = [t for t in got if t not in still]
    if done:
        claims.release(tx, kind, done)
    return [r for r in rows if key(r) in still]


def write_settled(
    tx: Con, assembly: pa.Table, context: pa.Table, fills: list[Fill], settled_at: datetime
) -> None:
    """A settle round's assembly, derived context and the text content events filled into steps,
    appended under one new ``settle_id`` in one transaction, with the registry's text of the
    documents its traces sent without any (``document_texts``); the traces' settle claims are
    released after the commit."""
    settle_id = uuid.uuid4().hex
    ids = _ids(assembly.column("trace_id").to_pylist())
    no_docs = pa.table({"doc_id": pa.array([], pa.string())})  # (registry_texts: every document)
    tables = {"_asm": assembly, "_ctx": context, "_text_ids": ids, "_kb": no_docs}
    if fills:
        tables["_fills"] = pa.table(
            {name: pa.array([getattr(f, name) for f in fills], pa.string()) for name in FILL_SCHEMA.names},
            schema=FILL_SCHEMA,
        )

    def body() -> None:
        tx.execute(sql(AREA, "insert_derived"), {"settle_id": settle_id})
        tx.execute(sql(AREA, "insert_settles"), {"settle_id": settle_id, "now": settled_at})
        if fills:
            tx.execute(sql(AREA, "insert_fills"), {"settle_id": settle_id})
        tx.execute(sql(AREA, "registry_texts"), {"now": settled_at, "loaded": False})

    _with(tx, tables, lambda: _committed(tx, body))
    claims.release(tx, claims.SETTLE, assembly.column("trace_id").to_pylist())


def refill_textless(tx: Con, now: datetime) -> list[str]:
    """Inside a knowledge-base load's transaction (the documents registered as ``_kb``): the settled
    traces with documents sent without text that the load has text for get it (``document_texts``)
    and wait to be assembled again, then evaluated; returns them. The file's
    ``references/refill_textless`` and ``reassemble``, as appends."""
    ids = [str(r[0]) for r in tx.execute(sql(AREA, "textless_traces")).fetchall()]
    if not ids:
        return []

    def run() -> None:
        tx.execute(sql(AREA, "registry_texts"), {"now": now, "loaded": True})
        tx.execute(sql(AREA, "reassemble"), {"t": ids})

    _with(tx, {"_text_ids": _ids(ids)}, run)
    requeue(tx, ids, own_transaction=False)
    return ids


# --- verdicts -------------------------------------------------------------------------------------


def pending(tx: Con, n: int) -> list[tuple[str, int, datetime | None]]:
    """The oldest ``n`` settled traces waiting for the cheap tier that no other collector holds (at
    most the round cap), claimed by this one (those still waiting once claimed)."""
    others = claims.held_by_others(tx, claims.EVALUATE)
    rows = _with(tx, {"_others": _ids(others)}, lambda: tx.execute(sql(AREA, "pending"), {"n": n}).fetchall())
    found = [(str(r[0]), int(r[1] or 0), r[2]) for r in rows]
    return claim_waiting(
        tx, found, lambda r: r[0], kind=claims.EVALUATE, recheck="still_pending", others=others
    )


def judge_batch(evals: pa.Table) -> bool:
    """A batch of the judge tier: it has verdicts, and every one is of tier ``judge``. Its write leaves
    the cheap tier's queue as it is, on both backends (the cheap tier may not have evaluated the
    trace's latest assembly)."""
    return evals.num_rows > 0 and set(evals.column("tier").to_pylist()) == {JUDGE_TIER}


def write_verdicts(tx: Con, evals: pa.Table, log: pa.Table, done: pa.Table, now: datetime) -> list[str]:
    """A batch's verdicts, its ``eval_log`` rows and each trace's next generation, in one
    transaction; returns the traces written. The traces are claimed for the write (the evaluation
    loop holds them already; a synchronous evaluation takes them now), and a trace another collector
    holds, or whose generation moved since its rows were fetched (it was evaluated meanwhile), is
    left out: its verdicts would be a second set of one generation. The claims are released after
    the commit.

    A judge-tier batch (every verdict of tier ``judge``) is written whatever the cheap tier does
    meanwhile: it claims the traces as ``claims.JUDGE`` (so only two judge writes of one trace
    exclude each other), its verdicts take the generation after the trace's current one as read in
    the write, and it leaves the cheap tier's queue as it is (``mark_evaluated`` with ``$judged``): a cheap round that
    fetched the trace before is left out by the generation check and evaluates it again next round."""
    ids = list(dict.fromkeys(done.column("trace_id").to_pylist()))
    judged = judge_batch(evals)
    kind = claims.JUDGE if judged else claims.EVALUATE
    held = set(claims.claim(tx, kind, ids))
    fetched: dict[str, int] = {}
    for t, g in zip(
        evals.column("trace_id").to_pylist(), evals.column("generation").to_pylist(), strict=True
    ):
        fetched.setdefault(t, int(g) - 1)
    written: list[str] = []

    def body() -> None:
        current = dict(_with(tx, {"_done": done}, lambda: tx.execute(sql(AREA, "generations")).fetchall()))
        fresh = [
            t for t in ids if t in held and (judged or fetched.get(t, current.get(t, 0)) == current.get(t, 0))
        ]
        written[:] = fresh
        if not fresh:
            return
        keep = pa.array(fresh, pa.string())
        rows = evals.filter(pc.is_in(evals.column("trace_id"), keep))
        if judged:  # the generation after the current one
            at = rows.schema.get_field_index("generation")
            gens = [int(current.get(t, 0)) + 1 for t in rows.column("trace_id").to_pylist()]
            rows = rows.set_column(at, rows.schema.field(at), pa.array(gens, rows.schema.field(at).type))
        tables = {
            "_evals": rows,
            "_elog": log.filter(pc.is_in(log.column("trace_id"), keep)),
            "_done": _ids(fresh),
        }

        def run() -> None:
            tx.execute(sql(AREA, "insert_verdicts"))
            tx.execute(sql("verdicts", "insert_log"))
            tx.execute(sql(AREA, "mark_evaluated"), {"now": now, "judged": judged})

        _with(tx, tables, run)

    _committed(tx, body)
    claims.release(tx, kind, sorted(held))
    return written


def write_log(tx: Con, log: pa.Table, done: pa.Table | None) -> None:
    """``eval_log`` rows and the span counts the cheap tier loaded (``done``: trace_id, n)."""

    def body() -> None:
        tx.execute(sql("verdicts", "insert_log"))
        if done is not None:
            tx.execute(sql(AREA, "evaluated_spans"))

    tables = {"_elog": log, **({"_sdone": done} if done is not None else {})}
    _with(tx, tables, lambda: _committed(tx, body))


def requeue(
    tx: Con, trace_ids: list[str], *, evaluated_only: bool = False, own_transaction: bool = True
) -> list[str]:
    """Mark these settled traces (``evaluated_only``: those evaluated already) waiting for the cheap
    tier again; the ids marked. ``own_transaction``: False inside a caller's transaction."""

    def body() -> list[str]:
        text = sql(AREA, "requeue_evaluated" if evaluated_only else "requeue")
        ids = [str(r[0]) for r in tx.execute(text, {"t": trace_ids}).fetchall()]
        if ids:
            _with(tx, {"_requeued": _ids(ids)}, lambda: tx.execute(sql(AREA, "insert_requeued")))
        return ids

    return _committed(tx, body) if own_transaction else body()


# --- retention and export -------------------------------------------------------------------------

# the lake's raw tables -> the name users read them by (schema); the state tables are ``traces``
RAW_NAMES = {
    "span_rows": "spans", "step_rows": "steps", "step_document_rows": "step_documents",
    "derived_documents": "step_documents", "evaluation_rows": "evaluations", "trace_settles": "traces",
    "trace_evals": "traces", "step_fills": "steps", "document_texts": "step_documents",
    "trace_content_events": "traces",
}  # fmt: skip
# state tables whose rows change what a view's rows say, not how many there are (not counted)
AMENDING = ("step_fills", "document_texts")
VIEWS_WITH_TRACES = ("spans", "steps", "step_documents", "evaluations", "evaluation_history")


def _tables_with_trace_id(tx: Con) -> list[str]:
    return [str(r[0]) for r in tx.execute(filled("export", "trace_tables")).fetchall()]


def export_tables(tx: Con, keep: tuple[str, ...]) -> list[str]:
    """What a trace is exported as on a lake: ``traces`` first, the views users read (one row per
    span, the current and earlier verdicts) and the plain tables with a trace_id, but those in
    ``keep``; never the raw or state tables behind the views."""
    plain = [t for t in _tables_with_trace_id(tx) if t not in RAW_NAMES]
    names = ["traces", *VIEWS_WITH_TRACES, *plain]
    return [n for n in dict.fromkeys(names) if n not in keep]


def delete_traces(tx: Con, trace_ids: list[str], keep: tuple[str, ...]) -> dict[str, int]:
    """Delete these traces from every lake table holding their rows (the raw and state tables behind
    ``spans``, ``steps``, ``step_documents``, ``traces`` and ``evaluations``, and the plain tables),
    but those in ``keep`` (named as users read them), in one transaction; rows deleted by the names
    users read (``traces``: the traces that were stored)."""
    counts: dict[str, int] = {}

    def body() -> None:
        counts.clear()
        row = tx.execute(sql("retention", "count_traces")).fetchall()
        n_traces = int(row[0][0])
        for table in _tables_with_trace_id(tx):
            name = RAW_NAMES.get(table, table)
            if name in keep or table in keep:
                continue
            deleted = tx.execute(filled("retention", "delete_trace_rows", table=table)).fetchall()
            if name != "traces" and table not in AMENDING:
                counts[name] = counts.get(name, 0) + (int(deleted[0][0]) if deleted else 0)
        counts["traces"] = n_traces

    _with(tx, {"_del_ids": _ids(trace_ids)}, lambda: _committed(tx, body))
    return counts
