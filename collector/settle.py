"""Trace completion: find traces that settled, assemble them, hand them on for evaluation.

A trace is ready when its root span arrived and nothing new came for ``settle_seconds``, or when
``max_trace_wait_seconds`` passed without a root. A late span bumps ``span_count`` past
``assembled_spans`` and the trace is assembled (and evaluated) again.

Ingest comes first: while ingest is under pressure (``pressure()`` is true; in a server, spans waited
for the writer most of the last seconds, ``collector.runtime.INGEST_PRESSURE_SHARE``) the loop skips
its rounds, so assembling (and the evaluation it triggers) does not take CPU from the writer during a
burst. Steady traffic that the writer keeps up with is no pressure, so live traces settle on time. It
never skips for longer than ``max_backoff_seconds`` in a row: under endless overload a round still
runs at least that often, and it catches up on everything ready. What waits meanwhile shows on the
gauges of ``SETTLE_METRICS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from collector.assemble import STAGE_PRIORITY, DocView, StepView, assemble
from collector.metrics import Metrics
from collector.store.reader import Window, received_window, window_sql
from collector.store.tx import transaction
from collector.textnorm import normalize

log = logging.getLogger("ragfault.settle")

# a trace not assembled yet, or not with all its spans
_WAITING = "(settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count)"
# ... and complete: its root came and nothing since for settle_seconds, or max_wait_seconds passed
_COMPLETE = "((has_root AND last_received_at <= $settled) OR last_received_at <= $expired)"
_READY = f"""
SELECT trace_id, span_count, first_received_at, last_received_at FROM traces
WHERE {_WAITING} AND {_COMPLETE}{{recent}}
ORDER BY last_received_at
LIMIT $limit
"""
# A trace waits to be assembled from its last span's arrival until max_wait_seconds after it at
# most. So a round of the loop looks only at traces whose last span arrived since then (and
# RECENT_MARGIN before, for a settler held back by ingest): the scan skips the row groups of older
# traces instead of reading the whole table twice a second. Every FULL_SWEEP_SECONDS, and for a
# round given its own time, it looks at the whole table, for traces left over (the server was down
# meanwhile, or the settler was held back longer than the margin).
RECENT_MARGIN = timedelta(minutes=5)
FULL_SWEEP_SECONDS = 60.0
# With nothing left to assemble, the loop waits for spans to be stored (``listen``) rather than look
# twice a second; a query after a pause costs the engine tens of milliseconds of CPU, which made an
# idle server's pollers cost several per cent of a core. It still sweeps every FULL_SWEEP_SECONDS.
_RECENT = " AND last_received_at >= $recent"
_UNSETTLED = f"SELECT count(*) FROM traces WHERE {_WAITING}{_RECENT}"
# traces complete (ready) but not assembled yet, and since when the oldest has been ready
_READY_BACKLOG = f"""
SELECT count(*), min(CASE WHEN has_root AND last_received_at <= $settled THEN last_received_at + $settle
                          ELSE last_received_at + $max_wait END)
FROM traces
WHERE {_WAITING} AND {_COMPLETE}{_RECENT}
"""
SETTLE_METRICS = {
    "ragfault_traces_waiting_settle": (
        "gauge",
        "Traces complete (settle time passed) but not assembled yet: held back while ingest is under pressure.",
    ),
    "ragfault_settle_lag_seconds": ("gauge", "Now minus the time the oldest of those became complete."),
}
OBSERVE_SECONDS = 1.0  # how often the settle loop refreshes its gauges


_CTX_COLS = (
    "trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source, received_at"
)


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# The documents ``assemble`` reads: explicit context documents (whether there are any), and the
# ranked stages' documents with content, the first of each text only (in the order ``assemble`` ranks
# them: a later document with the same text can never name a context document). The same chunk comes
# as a candidate, a reranker input and a reranker output: that is less than half the rows.
_RANK = "CASE stage " + " ".join(f"WHEN '{st}' THEN {p}" for st, p in STAGE_PRIORITY.items()) + " END"
_RANKED = ", ".join(f"'{st}'" for st in STAGE_PRIORITY)
_ASSEMBLY_DOCS = (
    "SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source "
    "FROM step_documents WHERE trace_id IN (SELECT trace_id FROM _ids) AND source <> 'derived'{extra} "
    f"AND ((stage = 'context' AND source = 'span') OR (stage IN ({_RANKED}) AND content <> '')) "
    "QUALIFY stage = 'context' OR row_number() OVER "
    f"(PARTITION BY trace_id, stage = 'context', content ORDER BY {_RANK}, span_id, stage, position) = 1 "
    "ORDER BY trace_id, span_id, stage, position"
)


def load_trace_parts(
    con: duckdb.DuckDBPyConnection, trace_ids: list[str], window: Window = None
) -> tuple[dict[str, list[StepView]], dict[str, list[DocView]]]:
    """The steps of these traces, and the documents ``assemble`` needs (``_ASSEMBLY_DOCS``)."""
    con.register("_ids", pa.table({"trace_id": trace_ids}))
    extra, params = window_sql(window)
    try:
        steps: dict[str, list[StepView]] = {t: [] for t in trace_ids}
        for r in con.execute(
            "SELECT trace_id, span_id, parent_span_id, step_type, start_time, end_time, query_text, "
            f"input_text, output_text, user_scope, is_root FROM steps WHERE trace_id IN (SELECT trace_id FROM _ids){extra}",
            params,
        ).fetchall():
            steps[r[0]].append(StepView(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10])))
        docs: dict[str, list[DocView]] = {t: [] for t in trace_ids}
        for r in con.execute(_ASSEMBLY_DOCS.format(extra=extra), params).fetchall():
            docs[r[0]].append(DocView(*r[1:]))
    finally:
        con.unregister("_ids")
    return steps, docs


class Settler:
    def __init__(
        self,
        cursor: duckdb.DuckDBPyConnection,
        write: Callable[[Callable[[duckdb.DuckDBPyConnection], Any]], Any],
        *,
        settle_seconds: float,
        max_wait_seconds: float,
        interval: float = 0.5,
        batch_limit: int = 2000,
        pressure: Callable[[], bool] | None = None,
        max_backoff_seconds: float = 30.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.cursor = cursor
        self.write = write  # runs a function on the writing connection (the writer thread in a server)
        self.settle_seconds = settle_seconds
        self.max_wait_seconds = max_wait_seconds
        self.interval = min(interval, settle_seconds / 2)
        self.batch_limit = batch_limit
        self.listeners: list[Callable[[list[str]], None]] = []
        self.pressure = pressure  # None: never back off
        self.max_backoff_seconds = max_backoff_seconds
        self._backoff_since: float | None = None
        self.skipped_rounds = 0
        self._swept_at = float("-inf")  # when a round last found everything there was in the whole table
        self._stop = threading.Event()
        self._wake = threading.Event()  # spans stored (``listen``), or stop
        self._listening = False
        # one round at a time: the loop and a forced round from another thread (``ragfault`` local
        # commands, tests) share ``cursor``, which refuses a second concurrent call
        self._round = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="ragfault-settler", daemon=True)
        self.settled_total = 0
        self.metrics = metrics  # the settle backlog's gauges (SETTLE_METRICS), when given
        self._observed_at = float("-inf")
        if metrics is not None:
            for name, (kind, text) in SETTLE_METRICS.items():
                metrics.describe(name, kind, text)

    def start(self) -> None:
        self._thread.start()

    def listen(self, listeners: list[Callable[[int], None]]) -> None:
        """Be told when spans are stored (the writer's ``listeners``): an idle loop then waits for
        that instead of polling."""
        listeners.append(self.notify)
        self._listening = True

    def notify(self, stored: int) -> None:
        if stored:
            self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def ingest_busy(self) -> bool:
        """True while ingest is under pressure (spans waiting for the writer)."""
        return self.pressure is not None and bool(self.pressure())

    def _back_off(self) -> bool:
        """Skip this round? Yes under ingest pressure, but not for ``max_backoff_seconds`` in a row."""
        if not self.ingest_busy():
            self._backoff_since = None
            return False
        now = time.monotonic()
        if self._backoff_since is None:
            self._backoff_since = now
        if now - self._backoff_since >= self.max_backoff_seconds:
            self._backoff_since = now  # run this round; the next stretch of skipping starts here
            return False
        self.skipped_rounds += 1
        return True

    def _loop(self) -> None:
        quiet = False  # the last round left no recent trace waiting to be assembled
        while True:
            if quiet and self._listening:  # until spans are stored, or the next sweep is due
                self._wake.wait(max(0.0, self._swept_at + FULL_SWEEP_SECONDS - time.monotonic()))
            else:  # traces are waiting: every interval (spans stored meanwhile do not hurry it)
                self._stop.wait(self.interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                if self._back_off():
                    self._observe_if_due()  # the backlog held back shows on /metrics meanwhile
                    continue
                while self.run_once() >= self.batch_limit and not self._stop.is_set():
                    pass
                quiet = self._nothing_unsettled()
                if quiet:
                    self._observe_none()
                else:
                    self._observe_if_due()
            except Exception:
                quiet = False
                log.exception("settle round failed")

    def backlog(self, now: datetime | None = None) -> tuple[int, datetime | None]:
        """Traces complete but not assembled yet (among those whose last span arrived lately), and
        when the oldest of them became complete."""
        now = now or utcnow()
        params = {
            **self._complete_params(now),
            "settle": timedelta(seconds=self.settle_seconds),
            "max_wait": timedelta(seconds=self.max_wait_seconds),
            "recent": self._recent(now),
        }
        with self._round:  # the cursor is shared with rounds asked for from other threads
            n, since = self.cursor.execute(_READY_BACKLOG, params).fetchall()[0]
        return int(n), since

    def observe(self) -> None:
        """Refresh the settle backlog's gauges (``SETTLE_METRICS``)."""
        if self.metrics is None:
            return
        now = utcnow()
        n, since = self.backlog(now)
        self._set_gauges(n, max(0.0, (now - since).total_seconds()) if since else 0.0)

    def _observe_if_due(self) -> None:
        if self.metrics is not None and time.monotonic() - self._observed_at >= OBSERVE_SECONDS:
            self.observe()

    def _observe_none(self) -> None:
        """Nothing recent waits to be assembled: the gauges read zero without a query."""
        if self.metrics is not None:
            self._set_gauges(0, 0.0)

    def _set_gauges(self, waiting: int, lag: float) -> None:
        assert self.metrics is not None
        self._observed_at = time.monotonic()
        self.metrics.set("ragfault_traces_waiting_settle", waiting)
        self.metrics.set("ragfault_settle_lag_seconds", lag)

    def _nothing_unsettled(self) -> bool:
        """No trace whose last span arrived lately waits to be assembled (ready or not yet)."""
        with self._round:  # the cursor is shared with rounds asked for from other threads
            return not self.cursor.execute(_UNSETTLED, {"recent": self._recent(utcnow())}).fetchall()[0][0]

    def _complete_params(self, now: datetime) -> dict[str, datetime]:
        """The parameters of ``_COMPLETE`` at ``now``."""
        return {
            "settled": now - timedelta(seconds=self.settle_seconds),
            "expired": now - timedelta(seconds=self.max_wait_seconds),
        }

    def _recent(self, now: datetime) -> datetime:
        """The oldest last span a trace still waiting to be assembled can have (bar leftovers)."""
        return now - timedelta(seconds=self.max_wait_seconds) - RECENT_MARGIN

    def ready(self, now: datetime | None = None) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self._ready(now)]

    def _ready(self, now: datetime | None = None) -> list[tuple[str, int, datetime | None, datetime | None]]:
        sweep = now is not None or time.monotonic() - self._swept_at >= FULL_SWEEP_SECONDS
        now = now or utcnow()
        params: dict[str, Any] = {**self._complete_params(now), "limit": self.batch_limit}
        if not sweep:
            params["recent"] = self._recent(now)
        started = time.monotonic()
        rows = self.cursor.execute(_READY.format(recent="" if sweep else _RECENT), params).fetchall()
        if sweep and len(rows) < self.batch_limit:
            self._swept_at = started  # (with a full batch, the next round looks at everything again)
        return [(r[0], int(r[1]), r[2], r[3]) for r in rows]

    def run_once(self, now: datetime | None = None, force: bool = False) -> int:
        """Assemble every ready trace (all unassembled ones with ``force``); returns how many."""
        with self._round:
            return self._run_once(now, force)

    def _run_once(self, now: datetime | None, force: bool) -> int:
        if force:
            rows = self.cursor.execute(
                "SELECT trace_id, span_count, first_received_at, last_received_at FROM traces "
                "WHERE settled_at IS NULL OR assembled_spans < span_count LIMIT $limit",
                {"limit": self.batch_limit},
            ).fetchall()
            found = [(r[0], int(r[1]), r[2], r[3]) for r in rows]
        else:
            found = self._ready(now)
        if not found:
            return 0
        ready = [(r[0], r[1]) for r in found]
        ids = [t for t, _ in ready]
        last_received = {r[0]: r[3] for r in found}
        window = received_window([(r[2], r[3]) for r in found])
        steps, docs = load_trace_parts(self.cursor, ids, window)
        asm_rows: dict[str, list[Any]] = {
            k: []
            for k in (
                "trace_id",
                "query_text",
                "query_norm",
                "answer_text",
                "answer_span_id",
                "user_scope",
                "assembled_spans",
            )
        }
        ctx: dict[str, list[Any]] = {
            k: []
            for k in (
                "trace_id", "span_id", "stage", "position", "doc_id", "chunk_id", "content", "score", "metadata",
                "source", "received_at",
            )
        }  # fmt: skip
        for trace_id, count in ready:
            a = assemble(steps[trace_id], docs[trace_id])
            asm_rows["trace_id"].append(trace_id)
            asm_rows["query_text"].append(a.query_text)
            asm_rows["query_norm"].append(normalize(a.query_text) or None)
            asm_rows["answer_text"].append(a.answer_text)
            asm_rows["answer_span_id"].append(a.answer_span_id)
            asm_rows["user_scope"].append(a.user_scope)
            asm_rows["assembled_spans"].append(count)
            for d in a.context:
                ctx["trace_id"].append(trace_id)
                ctx["received_at"].append(last_received[trace_id])  # inside the trace's window
                for k in (
                    "span_id",
                    "stage",
                    "position",
                    "doc_id",
                    "chunk_id",
                    "content",
                    "score",
                    "metadata",
                    "source",
                ):
                    ctx[k].append(getattr(d, k))
        asm = pa.table(
            {
                "trace_id": pa.array(asm_rows["trace_id"], pa.string()),
                "query_text": pa.array(asm_rows["query_text"], pa.string()),
                "query_norm": pa.array(asm_rows["query_norm"], pa.string()),
                "answer_text": pa.array(asm_rows["answer_text"], pa.string()),
                "answer_span_id": pa.array(asm_rows["answer_span_id"], pa.string()),
                "user_scope": pa.array(asm_rows["user_scope"], pa.list_(pa.string())),
                "assembled_spans": pa.array(asm_rows["assembled_spans"], pa.int64()),
            }
        )
        ctx_tbl = pa.table(
            {
                "trace_id": pa.array(ctx["trace_id"], pa.string()),
                "span_id": pa.array(ctx["span_id"], pa.string()),
                "stage": pa.array(ctx["stage"], pa.string()),
                "position": pa.array(ctx["position"], pa.int32()),
                "doc_id": pa.array(ctx["doc_id"], pa.string()),
                "chunk_id": pa.array(ctx["chunk_id"], pa.string()),
                "content": pa.array(ctx["content"], pa.string()),
                "score": pa.array(ctx["score"], pa.float64()),
                "metadata": pa.array(ctx["metadata"], pa.string()),
                "source": pa.array(ctx["source"], pa.string()),
                "received_at": pa.array(ctx["received_at"], pa.timestamp("us")),
            }
        )
        settled_at = now or utcnow()

        def write(con: duckdb.DuckDBPyConnection) -> None:
            con.register("_asm", asm)
            con.register("_ctx", ctx_tbl)
            try:
                with transaction(con):
                    extra, params = window_sql(window)
                    con.execute(
                        "DELETE FROM step_documents WHERE source = 'derived' AND trace_id IN (SELECT trace_id FROM _asm)"
                        + extra,
                        params,
                    )
                    con.execute(f"INSERT INTO step_documents ({_CTX_COLS}) SELECT {_CTX_COLS} FROM _ctx")
                    con.execute(
                        "UPDATE traces SET query_text = a.query_text, query_norm = a.query_norm, answer_text = a.answer_text, "
                        "answer_span_id = a.answer_span_id, user_scope = a.user_scope, "
                        "assembled_spans = a.assembled_spans, settled_at = $now FROM _asm a "
                        "WHERE traces.trace_id = a.trace_id",
                        {"now": settled_at},
                    )
            finally:
                con.unregister("_asm")
                con.unregister("_ctx")

        self.write(write)
        self.settled_total += len(ids)
        for listener in self.listeners:
            try:
                listener(ids)
            except Exception:
                log.exception("settle listener failed")
        return len(ids)
