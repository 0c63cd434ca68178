"""Trace completion: find traces that settled, assemble them, hand them on for evaluation.

A trace is ready when its root span arrived and nothing new came for ``settle_seconds``, or when
``max_trace_wait_seconds`` passed without a root. A late span bumps ``span_count`` past
``assembled_spans`` and the trace is assembled (and evaluated) again.

Ingest comes first: while ingest is under pressure (``pressure()`` is true; in a server, spans waited
for the writer most of the last seconds, ``collector.settling.settle_service.INGEST_PRESSURE_SHARE``) the loop skips
its rounds, so assembling (and the evaluation it triggers) does not take CPU from the writer during a
burst. Steady traffic that the writer keeps up with is no pressure, so live traces settle on time. It
never skips for longer than ``max_backoff_seconds`` in a row: under endless overload a round still
runs at least that often, and it catches up on everything ready. What waits meanwhile shows on the
gauges of ``SETTLE_METRICS``.

Each settle of a trace settled before is evaluated again, and anyone who can send spans or logs can
re-open a trace. So a trace is settled again at most ``max_resettles`` times a minute (``ResettleLimit``,
on the loop's ``clock``): beyond it, it waits, still ready, until the minute has passed, and each
such deferral is counted (``ragfault_resettles_deferred_total``). A forced round is not limited.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from collector.ingest.build import DEFAULT_OPTIONS, BuildOptions
from collector.metrics import Metrics
from collector.settling.assemble import DOC_FIELDS, assemble
from collector.settling.content_events import ContentSources, load_fills
from collector.settling.search_stages import search_stages
from collector.store import settling
from collector.store.base import Tx
from collector.store.reader import received_window
from collector.store.settling import load_trace_parts
from ragfault_core.textnorm import normalize

__all__ = [
    "FULL_SWEEP_SECONDS", "RECENT_MARGIN", "RESETTLE_WINDOW_SECONDS", "SETTLE_METRICS", "ResettleLimit", "Settler",
    "load_trace_parts", "utcnow",
]  # fmt: skip

log = logging.getLogger("ragfault.settle")

# What the store reads for a round (``collector.store.settling``, ``sql/settle/``): traces not
# assembled yet, or not with all their spans (``assembled_spans`` counts the GenAI content log records
# the assembly saw too, ``content_events``: one that comes later re-opens the trace as a late span
# does; ``collector.settling.content_events``), and complete: their root came and nothing since for
# settle_seconds, or max_wait_seconds passed.
#
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
SETTLE_METRICS = {
    "ragfault_traces_waiting_settle": (
        "gauge",
        "Traces complete (settle time passed) but not assembled yet: held back while ingest is under pressure.",
    ),
    "ragfault_settle_lag_seconds": ("gauge", "Now minus the time the oldest of those became complete."),
    "ragfault_resettles_deferred_total": (
        "counter",
        "Times a re-opened trace was held back: it had been settled again max_resettles_per_minute "
        "times in the last minute (it settles once the minute has passed).",
    ),
    "ragfault_content_events_refused_total": (
        "counter",
        "GenAI content events (log records) kept from their span: sent by another service than the "
        "span's, not one of trusted_content_sources.",
    ),
}
RESETTLE_WINDOW_SECONDS = 60.0  # the window of ``max_resettles``
OBSERVE_SECONDS = 1.0  # how often the settle loop refreshes its gauges


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _wait(event: threading.Event, seconds: float) -> bool:
    return event.wait(seconds)


class ResettleLimit:
    """How often each trace was settled again within the last ``window`` seconds, and whether it may
    be once more (at most ``limit`` times). Only re-settles are remembered, each until it leaves the
    window, so the memory is that of the traces re-opened lately (one queue for all, oldest first)."""

    def __init__(self, limit: int, window: float = RESETTLE_WINDOW_SECONDS) -> None:
        self.limit = limit
        self.window = window
        self._order: deque[tuple[float, str]] = deque()
        self._counts: dict[str, int] = {}
        self.deferred: set[str] = set()  # held back now (each counted once until it settles again)

    def _expire(self, now: float) -> None:
        while self._order and self._order[0][0] <= now - self.window:
            _, trace_id = self._order.popleft()
            n = self._counts[trace_id] - 1
            if n:
                self._counts[trace_id] = n
            else:
                del self._counts[trace_id]
        if self.deferred:  # a trace deferred but gone since (deleted) is not kept
            self.deferred &= self._counts.keys()

    def allows(self, trace_id: str, now: float) -> bool:
        self._expire(now)
        return self._counts.get(trace_id, 0) < self.limit

    def record(self, trace_id: str, now: float) -> None:
        self._order.append((now, trace_id))
        self._counts[trace_id] = self._counts.get(trace_id, 0) + 1
        self.deferred.discard(trace_id)


class Settler:
    def __init__(
        self,
        cursor: Tx,
        write: Callable[[Callable[[Tx], Any]], Any],
        *,
        settle_seconds: float,
        max_wait_seconds: float,
        interval: float = 0.5,
        batch_limit: int = 2000,
        pressure: Callable[[], bool] | None = None,
        max_backoff_seconds: float = 30.0,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] | None = None,
        wait: Callable[[threading.Event, float], bool] | None = None,
        max_resettles: int | None = None,
        content_sources: ContentSources | None = None,
        options: BuildOptions = DEFAULT_OPTIONS,
    ) -> None:
        # time comes from these: ``clock`` (seconds, monotonic) for the loop's own timing (back-off,
        # sweeps, gauges), ``wall_clock`` (naive UTC) for what is complete, ``wait`` for the loop's
        # pauses (``wait(event, seconds)``: true once the event is set); tests drive all three
        self.clock = clock
        self.wall_clock = wall_clock or utcnow
        self.wait = wait or _wait
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
        # re-settles of one trace a minute (None: no limit), and whose content events fill a span
        self.resettles = ResettleLimit(max_resettles) if max_resettles is not None else None
        self.content_sources = content_sources or ContentSources()
        # how ingest read the spans (source keys, mappings): a span read again at settle is read alike
        self.options = options
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

    def resweep(self) -> None:
        """Look at the whole table in the next round, now: traces marked to be assembled again (a
        knowledge-base load gave their documents text) can be older than a round looks."""
        self._swept_at = float("-inf")
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
        now = self.clock()
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
                self.wait(self._wake, max(0.0, self._swept_at + FULL_SWEEP_SECONDS - self.clock()))
            else:  # traces are waiting: every interval (spans stored meanwhile do not hurry it)
                self.wait(self._stop, self.interval)
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
        now = now or self.wall_clock()
        with self._round:  # the cursor is shared with rounds asked for from other threads
            return settling.ready_backlog(
                self.cursor,
                **self._complete_params(now),
                settle=timedelta(seconds=self.settle_seconds),
                max_wait=timedelta(seconds=self.max_wait_seconds),
                recent=self._recent(now),
            )

    def observe(self) -> None:
        """Refresh the settle backlog's gauges (``SETTLE_METRICS``)."""
        if self.metrics is None:
            return
        now = self.wall_clock()
        n, since = self.backlog(now)
        self._set_gauges(n, max(0.0, (now - since).total_seconds()) if since else 0.0)

    def _observe_if_due(self) -> None:
        if self.metrics is not None and self.clock() - self._observed_at >= OBSERVE_SECONDS:
            self.observe()

    def _observe_none(self) -> None:
        """Nothing recent waits to be assembled: the gauges read zero without a query."""
        if self.metrics is not None:
            self._set_gauges(0, 0.0)

    def _set_gauges(self, waiting: int, lag: float) -> None:
        assert self.metrics is not None
        self._observed_at = self.clock()
        self.metrics.set("ragfault_traces_waiting_settle", waiting)
        self.metrics.set("ragfault_settle_lag_seconds", lag)

    def _nothing_unsettled(self) -> bool:
        """No trace whose last span arrived lately waits to be assembled (ready or not yet)."""
        with self._round:  # the cursor is shared with rounds asked for from other threads
            return not settling.any_waiting(self.cursor, self._recent(self.wall_clock()))

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
        """The traces ready now (re-opened ones too, however often they settled lately)."""
        return [(r[0], r[1]) for r in self._ready(now, limited=False)]

    def _ready(self, now: datetime | None = None, limited: bool = True) -> list[settling.Waiting]:
        """The ready traces a round settles: with ``limited``, those ``max_resettles`` allows (each
        re-settle it lets through is remembered)."""
        limit = self.resettles if limited else None
        sweep = now is not None or self.clock() - self._swept_at >= FULL_SWEEP_SECONDS
        now = now or self.wall_clock()
        started = self.clock()
        rows = settling.ready_traces(
            self.cursor,
            **self._complete_params(now),
            limit=self.batch_limit,
            recent=None if sweep else self._recent(now),
            keep=self._may_settle if limit is not None else None,
            spare=len(limit.deferred) if limit is not None else 0,
        )
        if sweep and len(rows) < self.batch_limit:
            self._swept_at = started  # (with a full batch, the next round looks at everything again)
        return rows

    def _may_settle(self, row: settling.Waiting) -> bool:
        """Whether this ready trace is settled in this round: a first settle always, a re-settle
        while the trace was settled again fewer than ``max_resettles`` times in the last minute
        (else it waits, and its deferral is counted once)."""
        limit = self.resettles
        if limit is None or not row.settled_before:
            return True
        now = self.clock()
        if limit.allows(row.trace_id, now):
            limit.record(row.trace_id, now)
            return True
        if row.trace_id not in limit.deferred:
            limit.deferred.add(row.trace_id)
            if self.metrics is not None:
                self.metrics.inc("ragfault_resettles_deferred_total")
            log.debug("trace %s re-opened too often: held back for up to a minute", row.trace_id)
        return False

    def run_once(self, now: datetime | None = None, force: bool = False) -> int:
        """Assemble every ready trace (all unassembled ones with ``force``); returns how many."""
        with self._round:
            return self._run_once(now, force)

    def _run_once(self, now: datetime | None, force: bool) -> int:
        found = settling.waiting_traces(self.cursor, self.batch_limit) if force else self._ready(now)
        if not found:
            return 0
        ready = [(r[0], r[1]) for r in found]
        ids = [t for t, _ in ready]
        last_received = {r[0]: r[3] for r in found}
        window = received_window([(r[2], r[3]) for r in found])
        steps, docs = load_trace_parts(self.cursor, ids, window)
        first = {r.trace_id for r in found if not r.settled_before}
        # GenAI content and other log records joined to their span (text, documents), by the span's own
        # service or a trusted one
        fills, logged = load_fills(self.cursor, ids, steps, window, self.content_sources, first, self.options)
        asm_rows: dict[str, list[Any]] = {k: [] for k in settling.ASSEMBLY_SCHEMA.names}
        ctx: dict[str, list[Any]] = {k: [] for k in settling.CONTEXT_SCHEMA.names}
        for trace_id, count in ready:
            searched = search_stages(steps[trace_id])  # surfaced and opened rows (search agents)
            opened = [d for d in searched if d.stage == "opened"]
            mine = logged.get(trace_id, [])  # documents the trace's log records gave its steps
            given = mine + searched if mine else searched
            a = assemble(
                steps[trace_id], docs[trace_id] + mine + opened if mine or opened else docs[trace_id]
            )
            asm_rows["trace_id"].append(trace_id)
            asm_rows["query_text"].append(a.query_text)
            asm_rows["query_norm"].append(normalize(a.query_text) or None)
            asm_rows["answer_text"].append(a.answer_text)
            asm_rows["answer_span_id"].append(a.answer_span_id)
            asm_rows["user_scope"].append(a.user_scope)
            asm_rows["assembled_spans"].append(count)
            for d in a.context + given if given else a.context:
                ctx["trace_id"].append(trace_id)
                ctx["received_at"].append(last_received[trace_id])  # inside the trace's window
                for k in DOC_FIELDS:
                    ctx[k].append(getattr(d, k))
        batch = settling.Settled.of(asm_rows, ctx, resettles=any(r.settled_before for r in found))
        settled_at = now or self.wall_clock()
        self.write(lambda tx: settling.write_settled(tx, batch, fills, window, settled_at))
        self.settled_total += len(ids)
        for listener in self.listeners:
            try:
                listener(ids)
            except Exception:
                log.exception("settle listener failed")
        return len(ids)
