"""The live evaluation scheduler: ``EvaluationService`` evaluates settled traces, the cheap tier on
each in rounds (in this process or in worker processes), the judge tier on a sample
(``evaluators.service.judge_tier``). ``evaluators.service.component`` describes the whole; this module is its loop.

Its intervals are read from a clock (``ragfault_core.clock``): a test passes one it moves by hand.
"""

from __future__ import annotations

import collections
import logging
import threading
import traceback
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from collector.components import Context
from collector.store import verdicts
from collector.store.base import Tx
from collector.store.lake.store import LakeStore
from collector.store.reader import Window, first_received_range
from collector.store.verdicts import TraceTables
from evaluators.service import feedback as feedback_mod
from evaluators.service.config import load_evaluation_settings
from evaluators.service.eval_log import LogBuffer, write_log
from evaluators.service.judge_tier import JudgeItem, JudgeTier
from evaluators.service.pool import EvalPool, default_workers
from evaluators.service.running import EvalTables, utcnow
from evaluators.service.sampling import WrittenFacts, written_facts
from evaluators.service.sampling_settings import load_sampling_settings
from evaluators.service.tier_runners import build_judge, build_runner
from ragfault_core.clock import Clock, SystemClock

log = logging.getLogger("ragfault.evaluate")

POOL_IDLE_SECONDS = 60.0  # the evaluation workers stop after this long without a long backlog
# A round goes to the workers when it holds more than a batch, or when more than a batch of traces
# was evaluated in this many seconds before it (steady traffic: many short rounds)
POOL_RATE_SECONDS = 10.0
# With workers, traces are picked in groups of GROUP_BATCHES x (workers + 1) batches: reading their
# feedback, the sampler's facts and writing eval_log cost mostly a fixed price per call (10-20 ms),
# paid once a group. A round takes up to ROUND_GROUPS groups, the next group picked while the workers
# still evaluate the last one; the pool runs dry only at the end of a round (rounds of one group left
# the workers idle while a group was logged and the next one read). Groups of one batch per worker
# drained a backlog a quarter slower.
GROUP_BATCHES = 4
ROUND_GROUPS = 4
IDLE_POLL_SECONDS = 30.0  # how often an idle evaluation loop looks for waiting traces without a wake
# ... and refreshes its gauges (a query after a pause costs the engine tens of milliseconds of CPU)
IDLE_TICK_SECONDS = 5.0
# The sampler reads the flags of a round's traces from the verdicts written since the round began;
# this much earlier, in case the clock is set back meanwhile.
WRITTEN_SINCE_MARGIN = timedelta(hours=1)

_METRICS = {
    "ragfault_evaluation_lag_seconds": (
        "gauge",
        "Now minus the settle time of the oldest trace waiting for evaluation.",
    ),
    "ragfault_traces_waiting_evaluation": ("gauge", "Settled traces waiting for the cheap tier."),
    "ragfault_judge_queue_traces": ("gauge", "Sampled traces waiting for the judge tier."),
    "ragfault_judge_lag_seconds": ("gauge", "Age of the oldest trace waiting for the judge."),
    "ragfault_sampling_decisions_total": ("counter", "Judge-tier decisions by decision (eval_log)."),
    "ragfault_judge_traces_total": ("counter", "Traces handed to the judge runner, by outcome."),
    "ragfault_judge_calls_total": ("gauge", "Judge HTTP calls recorded (judge_calls)."),
    "ragfault_judge_spend_usd_total": ("gauge", "Judge spend recorded in USD (judge_calls)."),
    "ragfault_feedback_total": ("counter", "Feedback rows stored, by source."),
    "ragfault_evaluation_failures_total": ("counter", "Cheap-tier batches that raised."),
    "ragfault_evaluation_pool_starts_total": (
        "counter",
        "Times the server started its evaluation worker processes (once, unless workers died).",
    ),
}


class EvaluationService:
    """Evaluates settled traces: the cheap tier on each, the judge tier on a sample, in threads of its own."""

    def __init__(self, ctx: Context, judge: Any = None, clock: Clock | None = None) -> None:
        self.ctx = ctx
        self.settings = ctx.table("evaluation", load_evaluation_settings)
        self.sampling = ctx.table("sampling", load_sampling_settings)
        self.runner = build_runner(ctx, self.settings)
        # the runner's cursor serves one thread at a time: the loop's rounds and the API's synchronous
        # calls (``evaluate_now``: a gold promotion, ``POST /api/v1/evaluate``) take turns on it
        self._runner_lock = threading.Lock()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.judge = (
            judge if judge is not None else build_judge(ctx, self.sampling, self.settings, self.clock)
        )
        self.cursor = ctx.store.cursor()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ragfault-evaluator", daemon=True)
        self.judge_tier = JudgeTier(ctx, self.judge, self.sampling, self.cursor, self.clock)
        self._busy = False
        self._stats_at = 0.0
        self._observed_at = 0.0
        workers = self.settings.workers
        self.workers = default_workers() if workers is None else workers
        self._pool: EvalPool | None = None
        self._pool_used_at = 0.0
        self._rounds: collections.deque[tuple[float, int]] = collections.deque()  # (monotonic end, traces)
        for name, (kind, text) in _METRICS.items():
            ctx.metrics.describe(name, kind, text)

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        if self.ctx.settler is not None:
            self.ctx.settler.listeners.append(lambda ids: self._wake.set())
        # on a lake: claims another collector left (it is gone, or they expired) wake the loop, which
        # skipped those traces, instead of the next idle poll
        if isinstance(self.ctx.store, LakeStore):
            self.ctx.store.claim_listeners.append(lambda kinds: self._wake.set())
        self._thread.start()
        self.judge_tier.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(30)
        self.judge_tier.stop()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        close = getattr(self.judge, "close", None)
        if callable(close):
            close()

    def wake(self) -> None:
        self._wake.set()

    def enqueue(self, trace_ids: list[str]) -> None:
        """Evaluate these traces again (reloaded gold cases, feedback): mark them waiting."""
        if not trace_ids:
            return
        ids = list(dict.fromkeys(trace_ids))
        self.ctx.writer.call(lambda con: verdicts.requeue(con, ids), timeout=120)
        self._wake.set()

    def idle(self) -> bool:
        """Nothing waiting for either tier (tests and the demo poll this)."""
        con = self.ctx.store.cursor()  # callers' threads: never share the loop's cursor
        try:
            n, _ = self.backlog(con)
        finally:
            con.close()
        return n == 0 and not self._busy and self.judge_tier.idle()

    # --- the cheap tier and sampling ------------------------------------------------------------

    def _loop(self) -> None:
        found_none_at: float | None = None  # when a round last found no trace waiting
        while not self._stop.is_set():
            woken = self.clock.wait(self._wake, 1.0 if found_none_at is None else IDLE_TICK_SECONDS)
            if woken:
                self._wake.clear()  # (cleared only when set: a wake right after a timeout is kept)
            # whatever makes a trace wait (settling it, a late span, a reloaded case, feedback)
            # wakes the loop: without a wake, a second after finding none, none is waiting. Looking
            # scans the traces table, so an idle loop looks only every IDLE_POLL_SECONDS.
            if (
                not woken
                and found_none_at is not None
                and self.clock.monotonic() - found_none_at < IDLE_POLL_SECONDS
            ):
                self._observe_and_retire()
                continue
            polled = not woken and found_none_at is not None  # the idle poll, not a wake-up
            found_none_at = None
            try:
                found = 0
                while not self._stop.is_set() and (n := self.run_once()) > 0:
                    found += n
                # whatever made them wait did not wake the loop (on a lake, also: traces another
                # collector settled and left)
                if polled and found:
                    log.info("evaluation: %d traces were found waiting without a wake-up", found)
                found_none_at = self.clock.monotonic()
            except Exception:
                log.exception("evaluation round failed")
                self.ctx.metrics.inc("ragfault_evaluation_failures_total")
                self.clock.wait(self._stop, 1.0)
            finally:
                self._busy = False
            self._observe_and_retire()

    def _observe_and_retire(self) -> None:
        """The loop's gauges and idle pool, never ending the loop: a store that failed (a full disk
        that invalidated it) is the server's to report; the loop keeps trying until it stops."""
        try:
            self.observe()
            self._retire_idle_pool()
        except Exception as exc:
            log.warning("evaluation gauges not refreshed: %s", str(exc).splitlines()[0] if str(exc) else exc)
            self.clock.wait(self._stop, 1.0)

    def backlog(self, con: Tx | None = None) -> tuple[int, datetime | None]:
        return verdicts.backlog(con or self.cursor)

    def observe(self) -> None:
        """Refresh the self-observation gauges."""
        self._observed_at = self.clock.monotonic()
        m = self.ctx.metrics
        n, oldest = self.backlog()
        m.set("ragfault_traces_waiting_evaluation", n)
        m.set("ragfault_evaluation_lag_seconds", (utcnow() - oldest).total_seconds() if oldest else 0.0)
        m.set("ragfault_judge_queue_traces", self.judge_tier.queue.qsize())
        if self.clock.monotonic() - self._stats_at > 5:
            self._stats_at = self.clock.monotonic()
            row = verdicts.judge_spend(self.cursor)  # None: no judge tables in this database
            if row:
                m.set("ragfault_judge_calls_total", float(row[0]))
                m.set("ragfault_judge_spend_usd_total", float(row[1]))

    def _pending(self, n: int) -> list[tuple[str, int, datetime | None]]:
        """The oldest ``n`` waiting traces, with the span count each was assembled with and the
        time its first span was received."""
        return verdicts.pending(self.cursor, n)

    def run_once(self) -> int:
        """Evaluate a round of the oldest waiting traces; returns how many.

        Without a pool (no workers, or a short backlog) a round is one batch. With one, a round
        picks up to ``ROUND_GROUPS`` groups of ``GROUP_BATCHES`` × (workers + 1) batches. A group is
        picked (the traces waiting then, minus those in flight) and its feedback read when a worker
        can take its first batch, so the workers do not wait for the previous group to be written;
        the judge's sample and ``eval_log`` are done for a group's worth of written traces at a
        time (what they cost is mostly a fixed price per call)."""
        size = self.settings.batch_size
        group = size * (GROUP_BATCHES * (self.workers + 1) if self.workers > 0 else 1)
        # every verdict this round writes is stamped after this (the margin: a clock set back)
        written_since = utcnow() - WRITTEN_SINCE_MARGIN
        first = self._pending(group)
        if not first:
            return 0
        self._busy = True
        pool = self._pool_for(len(first))
        if pool is None:
            take, groups = size, 1
        else:
            take, groups = group, ROUND_GROUPS
        picked: dict[str, int] = {}  # drawn, not yet written: trace id -> span count when drawn
        received: dict[str, datetime | None] = {}  # drawn: trace id -> first received (limits look-ups)
        written_: dict[str, int] = {}  # written, not yet logged
        facts: dict[str, WrittenFacts] = {}  # written, not yet logged: what the batch told the sampler
        done = 0

        def chunks() -> Iterator[list[str]]:
            rows = first
            for _ in range(groups):
                fresh = [r for r in rows if r[0] not in picked][:take]
                if not fresh or self._stop.is_set():
                    return
                picked.update((t, spans) for t, spans, _ in fresh)
                received.update((t, at) for t, _, at in fresh)
                ids = [t for t, _, _ in fresh]
                # before they are evaluated: feedback can re-queue a trace
                self.read_feedback(ids, first_received_range(received, ids))
                for i in range(0, len(ids), size):
                    yield ids[i : i + size]
                rows = self._pending(group + len(picked))

        def log_written() -> None:
            if not written_:
                return
            snap = dict(written_)
            written_.clear()
            known = {t: facts.pop(t) for t in snap if t in facts}
            buf = LogBuffer()
            self.schedule_judge(list(snap), buf, first_received_range(received, snap), written_since, known)
            self.ctx.writer.call(lambda con: write_log(con, buf, snap), timeout=300)

        def on_tables(tables: TraceTables, out: EvalTables) -> None:
            facts.update(written_facts(tables, out.evals, out.log, self.sampling))

        def on_written(ids: list[str]) -> None:
            nonlocal done
            for t in ids:
                if t in picked:
                    written_[t] = picked.pop(t)
                    done += 1
            if len(written_) >= take:
                log_written()
            if self.clock.monotonic() - self._observed_at > 1.0:
                self.observe()

        try:
            with self._runner_lock:
                self.runner.evaluate_chunks(
                    chunks(), pool, on_written=on_written, received=received, on_tables=on_tables
                )
            log_written()
        except Exception as exc:
            log.exception("cheap-tier evaluation of %d traces failed", len(picked))
            self.ctx.metrics.inc("ragfault_evaluation_failures_total")
            reason = traceback.format_exception_only(type(exc), exc)[-1].strip()[:500]
            log_written()  # their verdicts are stored: they get their judge decision
            failed, buf = dict(picked), LogBuffer()
            picked.clear()
            for tid in failed:
                buf.add(tid, "cheap", "error", reason, None)
            self.ctx.writer.call(lambda con: write_log(con, buf, failed), timeout=300)
            return done + len(failed)
        self.observe()
        self._rounds.append((self.clock.monotonic(), done))
        self.recent_traces()  # drops the rounds that fell out of the window
        return done

    def recent_traces(self) -> int:
        """Traces evaluated by the rounds of the last ``POOL_RATE_SECONDS``."""
        since = self.clock.monotonic() - POOL_RATE_SECONDS
        while self._rounds and self._rounds[0][0] < since:
            self._rounds.popleft()
        return sum(n for _, n in self._rounds)

    def _pool_for(self, n: int) -> EvalPool | None:
        """The worker pool (started on first use) when a round holds more than one batch, or more
        than a batch was evaluated in the last ``POOL_RATE_SECONDS``; else None (in-process)."""
        if self.workers <= 0 or (
            n <= self.settings.batch_size and self.recent_traces() + n <= self.settings.batch_size
        ):
            return None
        pool = self._pool
        if pool is not None and not pool.usable:
            return None  # workers kept dying: this server evaluates in-process from now on
        if pool is None:
            pool = self._pool = EvalPool(self.workers, self.runner.runner, self.runner.source_keys)
            self.ctx.metrics.inc("ragfault_evaluation_pool_starts_total")
        self._pool_used_at = self.clock.monotonic()
        return pool

    def _retire_idle_pool(self) -> None:
        """Stop the workers once no round has needed them for ``POOL_IDLE_SECONDS`` (each holds
        its own copy of the gold cases, the registry and the text caches)."""
        pool = self._pool
        if (
            pool is not None
            and pool.usable
            and self.clock.monotonic() - self._pool_used_at > POOL_IDLE_SECONDS
        ):
            self._pool = None
            pool.close()

    def read_feedback(self, ids: list[str], hint: Window = None) -> None:
        rows = feedback_mod.read_annotations(self.cursor, ids, self.sampling, hint)
        if not rows:
            return
        batch = set(ids)
        stored = self.ctx.writer.call(lambda con: feedback_mod.store_feedback(con, rows), timeout=120)
        if stored.inserted:
            self.ctx.metrics.inc("ragfault_feedback_total", stored.inserted, source="spans")
        if any(t not in batch for t in stored.requeued):
            self._wake.set()

    def schedule_judge(
        self,
        ids: list[str],
        buf: LogBuffer,
        hint: Window = None,
        written_since: datetime | None = None,
        written: Mapping[str, WrittenFacts] | None = None,
    ) -> None:
        """Decide the judge tier of these traces (their cheap verdicts are written): ``JudgeTier.schedule``."""
        self.judge_tier.schedule(ids, buf, hint, written_since, written)

    def judge_batch(self, items: list[JudgeItem]) -> None:
        self.judge_tier.judge_batch(items)

    # --- synchronous use (API) ------------------------------------------------------------------

    def evaluate_now(self, trace_ids: list[str], received: dict[str, datetime | None] | None = None) -> int:
        """Evaluate the cheap tier synchronously (API calls), in batches, in the server process
        (``received`` as for ``StoreRunner.evaluate_many``), between the loop's rounds."""
        with self._runner_lock:
            return self.runner.evaluate_many(trace_ids, self.settings.batch_size, received=received)
