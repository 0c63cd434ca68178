"""Evaluation inside a running server: the scheduler that evaluates settled traces, and the API
for loading gold cases and the knowledge base and for re-running evaluators.

The backlog is the database, not memory: a trace is waiting while it is settled and its
``evaluated_spans`` differs from ``assembled_spans`` (a late span re-settles it and so re-queues it;
feedback or a reloaded gold case re-queue it by clearing ``evaluated_spans``). The scheduler takes the
oldest waiting traces in batches of ``[evaluation] batch_size``, so memory stays bounded however far
behind it is, and ``/metrics`` shows the lag (now − settle time of the oldest waiting trace).

While more than one batch is waiting, a round takes up to ``ROUND_GROUPS`` groups of
``GROUP_BATCHES`` × (workers + 1) batches, each group picked when a worker can take its first batch
(``[evaluation] workers``, default one a core, at most 4), and evaluates them side by side in worker
processes (``evaluators.pool``, started the first time it is needed), with the rows identical to
in-process evaluation. Steady traffic goes to the workers too: a short backlog is evaluated in the
server process only while fewer than a batch of traces were evaluated in the last
``POOL_RATE_SECONDS``, so a quiet server runs no extra processes. Besides using more cores, this
keeps the evaluators off the server's GIL, which the receivers and the writer need (a steady 400
traces a second, settled a few hundred a round and evaluated in the server process, held its ingest
to about 375 in ``bench/sustain.py``), and the workers run at a lower CPU priority, so storing spans
goes first when the machine cannot keep up with both. The workers stop after ``POOL_IDLE_SECONDS``
without that much work.

Per group of traces picked: read annotations from the spans into ``feedback`` → run the cheap tier
on every trace, batch by batch → once they are written, decide the judge tier per trace
(``evaluators.sampling``) → hand the sample to the judge thread through a bounded queue. When the
queue is full, or a trace waited longer than ``judge_max_wait_seconds``, the judge tier sheds it
with ``over_budget`` / reason ``backlog``. Every decision is an ``eval_log`` row (evaluator NULL), so
``SELECT * FROM eval_status WHERE trace_id = …`` says why a trace has no judge score.

``register`` is called by ``ragfault.server.build`` to add these to the collector.
"""

from __future__ import annotations

import collections
import importlib
import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import anyio
import duckdb
import pyarrow as pa
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from collector.config import settings_table
from collector.receivers.otlp_http import check_bearer
from collector.store.reader import Window, first_received_range
from collector.store.tx import transaction
from evaluators import feedback as feedback_mod
from evaluators.config import EvaluationSettings, evaluator_configs, load_evaluation_settings
from evaluators.loading import store_gold, store_kb, traces_for_cases
from evaluators.pool import EvalPool, default_workers
from evaluators.registry import discover
from evaluators.runner import LOG_SCHEMA, Runner, StoreRunner, utcnow
from evaluators.sampling import SamplingSettings, decide, load_facts, load_sampling_settings

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

_PENDING = (
    "SELECT trace_id, assembled_spans, first_received_at FROM traces WHERE settled_at IS NOT NULL "
    "AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans) ORDER BY settled_at LIMIT $n"
)
_BACKLOG = (
    "SELECT count(*), min(settled_at) FROM traces WHERE settled_at IS NOT NULL "
    "AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)"
)

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


def build_runner(runtime: Any, settings: EvaluationSettings | None = None) -> StoreRunner:
    settings = settings or settings_table(runtime, "evaluation", load_evaluation_settings)
    specs = discover()
    configs = evaluator_configs(settings, specs)
    return StoreRunner(
        runtime.store.cursor(),
        lambda fn: runtime.writer.call(fn, timeout=300),
        Runner(specs, configs, tier="cheap"),
        runtime.settings.source_keys,
        runtime.metrics,
    )


def build_judge(runtime: Any, sampling: SamplingSettings, evaluation: EvaluationSettings) -> Any:
    """The judge runner (``evaluate(trace_ids) -> int``) or None when no judge is configured."""
    if sampling.judge_factory:
        module, _, attr = sampling.judge_factory.partition(":")
        factory = getattr(importlib.import_module(module), attr or "build_judge_runner")
    else:
        try:
            from evaluators.judge.service import build_judge_runner as factory  # type: ignore[no-redef,unused-ignore]
        except ImportError:
            return None
    return factory(runtime)  # each factory reads its own table of the config file


@dataclass(frozen=True)
class JudgeItem:
    trace_id: str
    generation: int
    reason: str
    queued_at: float  # monotonic


class LogBuffer:
    """eval_log rows collected during a round, written in one job."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {f.name: [] for f in LOG_SCHEMA}

    def add(
        self, trace_id: str, tier: str, decision: str, reason: str | None, generation: int | None
    ) -> None:
        for k, v in zip(
            ("trace_id", "tier", "evaluator", "decision", "reason", "generation", "logged_at"),
            (trace_id, tier, None, decision, reason, generation, utcnow()),
            strict=True,
        ):
            self.cols[k].append(v)

    def __len__(self) -> int:
        return len(self.cols["trace_id"])

    def table(self) -> pa.Table:
        return pa.table([pa.array(self.cols[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)


def _write_log(con: duckdb.DuckDBPyConnection, buf: LogBuffer, done: dict[str, int] | None = None) -> None:
    """eval_log rows and (optionally) the span counts the cheap tier saw, in one transaction."""
    con.register("_slog", buf.table())
    try:
        with transaction(con):
            con.execute("INSERT INTO eval_log SELECT * FROM _slog")
            if done:
                con.register(
                    "_sdone",
                    pa.table({"trace_id": list(done), "n": pa.array(list(done.values()), pa.int64())}),
                )
                # the count loaded, not the current one: a span that settled meanwhile re-queues the trace
                con.execute(
                    "UPDATE traces SET evaluated_spans = d.n FROM _sdone d WHERE traces.trace_id = d.trace_id"
                )
    finally:
        con.unregister("_slog")
        if done:
            con.unregister("_sdone")


class EvaluationService:
    """Evaluates settled traces: the cheap tier on each, the judge tier on a sample, in threads of its own."""

    def __init__(self, runtime: Any, judge: Any = None) -> None:
        self.runtime = runtime
        self.settings = settings_table(runtime, "evaluation", load_evaluation_settings)
        self.sampling = settings_table(runtime, "sampling", load_sampling_settings)
        self.runner = build_runner(runtime, self.settings)
        self.judge = judge if judge is not None else build_judge(runtime, self.sampling, self.settings)
        self.cursor = runtime.store.cursor()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._judge_q: queue.Queue[JudgeItem] = queue.Queue(maxsize=self.sampling.judge_queue_max)
        self._thread = threading.Thread(target=self._loop, name="ragfault-evaluator", daemon=True)
        self._judge_thread = threading.Thread(target=self._judge_loop, name="ragfault-judge", daemon=True)
        self._busy = False
        self._judge_busy = False
        self._stats_at = 0.0
        self._observed_at = 0.0
        workers = self.settings.workers
        self.workers = default_workers() if workers is None else workers
        self._pool: EvalPool | None = None
        self._pool_used_at = 0.0
        self._rounds: collections.deque[tuple[float, int]] = collections.deque()  # (monotonic end, traces)
        for name, (kind, text) in _METRICS.items():
            runtime.metrics.describe(name, kind, text)
        runtime.evaluation = self

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self.runtime.settler.listeners.append(lambda ids: self._wake.set())
        self._thread.start()
        self._judge_thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(30)
        self._judge_thread.join(30)
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
        self.runtime.writer.call(
            lambda con: con.execute(
                "UPDATE traces SET evaluated_spans = NULL WHERE trace_id IN (SELECT unnest($t)) "
                "AND settled_at IS NOT NULL",
                {"t": ids},
            ),
            timeout=120,
        )
        self._wake.set()

    def idle(self) -> bool:
        """Nothing waiting for either tier (tests and the demo poll this)."""
        con = self.runtime.store.cursor()  # callers' threads: never share the loop's cursor
        try:
            n, _ = self.backlog(con)
        finally:
            con.close()
        return n == 0 and not self._busy and self._judge_q.empty() and not self._judge_busy

    # --- the cheap tier and sampling ------------------------------------------------------------

    def _loop(self) -> None:
        found_none_at: float | None = None  # when a round last found no trace waiting
        while not self._stop.is_set():
            woken = self._wake.wait(1.0 if found_none_at is None else IDLE_TICK_SECONDS)
            if woken:
                self._wake.clear()  # (cleared only when set: a wake right after a timeout is kept)
            # whatever makes a trace wait (settling it, a late span, a reloaded case, feedback)
            # wakes the loop: without a wake, a second after finding none, none is waiting. Looking
            # scans the traces table, so an idle loop looks only every IDLE_POLL_SECONDS.
            if (
                not woken
                and found_none_at is not None
                and time.monotonic() - found_none_at < IDLE_POLL_SECONDS
            ):
                self.observe()
                self._retire_idle_pool()
                continue
            found_none_at = None
            try:
                while not self._stop.is_set() and self.run_once() > 0:
                    pass
                found_none_at = time.monotonic()
            except Exception:
                log.exception("evaluation round failed")
                self.runtime.metrics.inc("ragfault_evaluation_failures_total")
                self._stop.wait(1.0)
            finally:
                self._busy = False
            self.observe()
            self._retire_idle_pool()

    def backlog(self, con: duckdb.DuckDBPyConnection | None = None) -> tuple[int, datetime | None]:
        row = (con or self.cursor).execute(_BACKLOG).fetchall()[0]
        return (int(row[0]), row[1]) if row else (0, None)

    def observe(self) -> None:
        """Refresh the self-observation gauges."""
        self._observed_at = time.monotonic()
        m = self.runtime.metrics
        n, oldest = self.backlog()
        m.set("ragfault_traces_waiting_evaluation", n)
        m.set("ragfault_evaluation_lag_seconds", (utcnow() - oldest).total_seconds() if oldest else 0.0)
        m.set("ragfault_judge_queue_traces", self._judge_q.qsize())
        if time.monotonic() - self._stats_at > 5:
            self._stats_at = time.monotonic()
            try:
                row = self.cursor.execute(
                    "SELECT count(*), coalesce(sum(cost_usd), 0) FROM judge_calls"
                ).fetchall()[0]
            except duckdb.Error:
                row = None  # no judge tables in this database
            if row:
                m.set("ragfault_judge_calls_total", float(row[0]))
                m.set("ragfault_judge_spend_usd_total", float(row[1]))

    def _pending(self, n: int) -> list[tuple[str, int, datetime | None]]:
        """The oldest ``n`` waiting traces, with the span count each was assembled with and the
        time its first span was received."""
        return [(r[0], int(r[1] or 0), r[2]) for r in self.cursor.execute(_PENDING, {"n": n}).fetchall()]

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
            buf = LogBuffer()
            self.schedule_judge(list(snap), buf, first_received_range(received, snap), written_since)
            self.runtime.writer.call(lambda con: _write_log(con, buf, snap), timeout=300)

        def on_written(ids: list[str]) -> None:
            nonlocal done
            for t in ids:
                if t in picked:
                    written_[t] = picked.pop(t)
                    done += 1
            if len(written_) >= take:
                log_written()
            if time.monotonic() - self._observed_at > 1.0:
                self.observe()

        try:
            self.runner.evaluate_chunks(chunks(), pool, on_written=on_written, received=received)
            log_written()
        except Exception as exc:
            log.exception("cheap-tier evaluation of %d traces failed", len(picked))
            self.runtime.metrics.inc("ragfault_evaluation_failures_total")
            reason = traceback.format_exception_only(type(exc), exc)[-1].strip()[:500]
            log_written()  # their verdicts are stored: they get their judge decision
            failed, buf = dict(picked), LogBuffer()
            picked.clear()
            for tid in failed:
                buf.add(tid, "cheap", "error", reason, None)
            self.runtime.writer.call(lambda con: _write_log(con, buf, failed), timeout=300)
            return done + len(failed)
        self.observe()
        self._rounds.append((time.monotonic(), done))
        self.recent_traces()  # drops the rounds that fell out of the window
        return done

    def recent_traces(self) -> int:
        """Traces evaluated by the rounds of the last ``POOL_RATE_SECONDS``."""
        since = time.monotonic() - POOL_RATE_SECONDS
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
            self.runtime.metrics.inc("ragfault_evaluation_pool_starts_total")
        self._pool_used_at = time.monotonic()
        return pool

    def _retire_idle_pool(self) -> None:
        """Stop the workers once no round has needed them for ``POOL_IDLE_SECONDS`` (each holds
        its own copy of the gold cases, the registry and the text caches)."""
        pool = self._pool
        if pool is not None and pool.usable and time.monotonic() - self._pool_used_at > POOL_IDLE_SECONDS:
            self._pool = None
            pool.close()

    def read_feedback(self, ids: list[str], hint: Window = None) -> None:
        rows = feedback_mod.read_annotations(self.cursor, ids, self.sampling, hint)
        if not rows:
            return
        batch = set(ids)
        stored = self.runtime.writer.call(lambda con: feedback_mod.store_feedback(con, rows), timeout=120)
        if stored.inserted:
            self.runtime.metrics.inc("ragfault_feedback_total", stored.inserted, source="spans")
        if any(t not in batch for t in stored.requeued):
            self._wake.set()

    def schedule_judge(
        self, ids: list[str], buf: LogBuffer, hint: Window = None, written_since: datetime | None = None
    ) -> None:
        m = self.runtime.metrics
        now = time.monotonic()
        for facts in load_facts(self.cursor, ids, self.sampling, hint, written_since):
            d = decide(facts, self.sampling)
            if not d.selected:
                buf.add(facts.trace_id, "judge", d.decision, d.reason, facts.generation)
                m.inc("ragfault_sampling_decisions_total", decision=d.decision)
            elif self.judge is None:
                buf.add(
                    facts.trace_id, "judge", "filtered", f"no judge configured ({d.reason})", facts.generation
                )
                m.inc("ragfault_sampling_decisions_total", decision="filtered")
            else:
                try:
                    self._judge_q.put_nowait(JudgeItem(facts.trace_id, facts.generation, d.reason, now))
                except queue.Full:
                    buf.add(
                        facts.trace_id, "judge", "over_budget",
                        f"backlog: judge queue full ({self.sampling.judge_queue_max} traces); {d.reason}",
                        facts.generation,
                    )  # fmt: skip
                    m.inc("ragfault_sampling_decisions_total", decision="over_budget")
        m.set("ragfault_judge_queue_traces", self._judge_q.qsize())

    # --- the judge tier -------------------------------------------------------------------------

    def _judge_loop(self) -> None:
        while not self._stop.is_set():
            try:
                first = self._judge_q.get(timeout=0.5)
            except queue.Empty:
                continue
            self._judge_busy = True
            try:
                items = [first]
                while len(items) < self.sampling.judge_batch_size:
                    try:
                        items.append(self._judge_q.get_nowait())
                    except queue.Empty:
                        break
                self.judge_batch(items)
            except Exception:
                log.exception("judge round failed")
            finally:
                self._judge_busy = False

    def judge_batch(self, items: list[JudgeItem]) -> None:
        m = self.runtime.metrics
        buf = LogBuffer()
        now = time.monotonic()
        fresh = []
        for it in items:
            waited = now - it.queued_at
            if waited > self.sampling.judge_max_wait_seconds:
                buf.add(
                    it.trace_id, "judge", "over_budget",
                    f"backlog: waited {waited:.0f} s > {self.sampling.judge_max_wait_seconds:g} s; {it.reason}",
                    it.generation,
                )  # fmt: skip
                m.inc("ragfault_sampling_decisions_total", decision="over_budget")
            else:
                fresh.append(it)
        m.set("ragfault_judge_lag_seconds", max((now - it.queued_at for it in items), default=0.0))
        if fresh:
            try:
                self.judge.evaluate([it.trace_id for it in fresh])
            except Exception as exc:
                log.exception("judge tier failed on %d traces", len(fresh))
                reason = traceback.format_exception_only(type(exc), exc)[-1].strip()[:500]
                for it in fresh:
                    buf.add(it.trace_id, "judge", "error", reason, it.generation)
                m.inc("ragfault_sampling_decisions_total", len(fresh), decision="error")
                m.inc("ragfault_judge_traces_total", len(fresh), outcome="error")
            else:
                for it in fresh:
                    buf.add(it.trace_id, "judge", "evaluated", it.reason, it.generation)
                m.inc("ragfault_sampling_decisions_total", len(fresh), decision="evaluated")
                m.inc("ragfault_judge_traces_total", len(fresh), outcome="evaluated")
        if len(buf):
            self.runtime.writer.call(lambda con: _write_log(con, buf), timeout=300)
        m.set("ragfault_judge_queue_traces", self._judge_q.qsize())

    # --- synchronous use (API) ------------------------------------------------------------------

    def evaluate_now(self, trace_ids: list[str], received: dict[str, datetime | None] | None = None) -> int:
        """Evaluate the cheap tier synchronously (API calls), in batches, in the server process
        (``received`` as for ``StoreRunner.evaluate_many``)."""
        return self.runner.evaluate_many(trace_ids, self.settings.batch_size, received=received)


class EvaluateRequest(BaseModel):
    trace_ids: list[str] | None = Field(
        None, description="These traces; else every settled trace matching the filters."
    )
    run_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(100_000, gt=0)


def router(runtime: Any) -> APIRouter:
    def auth(request: Request) -> None:
        check_bearer(request, runtime.settings.api_token)

    r = APIRouter(prefix="/api/v1", dependencies=[Depends(auth)])

    def write(fn: Any) -> Any:
        return runtime.writer.call(fn, timeout=300)

    def reevaluate(case_ids: list[str]) -> int:
        svc = getattr(runtime, "evaluation", None)
        if svc is None:
            return 0
        con = runtime.store.cursor()
        try:
            ids = traces_for_cases(con, case_ids)
        finally:
            con.close()
        if ids:
            svc.enqueue(ids)
        return len(ids)

    @r.post("/gold", summary="Load gold cases (JSONL body); re-evaluates traces of reloaded cases")
    async def load_gold(request: Request, dataset: str | None = None) -> dict[str, Any]:
        body = await request.body()
        ids = await anyio.to_thread.run_sync(lambda: store_gold(write, body, dataset or "api"))
        queued = await anyio.to_thread.run_sync(reevaluate, ids)
        return {"loaded": len(ids), "reevaluating": queued}

    @r.post("/kb", summary="Load knowledge-base documents (JSONL body)")
    async def load_kb(request: Request) -> dict[str, Any]:
        body = await request.body()
        ids = await anyio.to_thread.run_sync(lambda: store_kb(write, body))
        return {"loaded": len(ids)}

    @r.post("/evaluate", summary="Re-run the cheap-tier evaluators over stored traces")
    async def evaluate(body: EvaluateRequest) -> dict[str, Any]:
        svc = runtime.evaluation

        def work() -> int:
            if body.trace_ids is not None:
                return int(svc.evaluate_now(body.trace_ids))
            con = runtime.store.cursor()
            try:
                received = select_traces_received(con, body.run_id, body.since, body.until, body.limit)
            finally:
                con.close()
            return int(svc.evaluate_now(list(received), received))

        return {"evaluated": await anyio.to_thread.run_sync(work)}

    return r


def select_traces_received(
    con: Any, run_id: str | None, since: datetime | None, until: datetime | None, limit: int
) -> dict[str, datetime | None]:
    """The settled traces matching the filters, oldest first, each with its ``first_received_at``
    (for ``StoreRunner.evaluate_many``'s ``received``)."""
    rows = con.execute(
        "SELECT trace_id, first_received_at FROM traces WHERE settled_at IS NOT NULL "
        "AND ($run_id IS NULL OR run_id = $run_id) AND ($since IS NULL OR start_time >= $since) "
        "AND ($until IS NULL OR start_time < $until) ORDER BY first_received_at, trace_id LIMIT $limit",
        {"run_id": run_id, "since": since, "until": until, "limit": limit},
    ).fetchall()
    return dict(rows)


def register(routers: list[Any], extensions: list[Callable[[Any], Any]]) -> None:
    routers.append(router)
    routers.append(feedback_mod.router)
    extensions.append(EvaluationService)
