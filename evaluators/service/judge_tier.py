"""The judge tier of the live scheduler: which traces of a written group are judged (the sampler,
``evaluators.service.sampling_decision``), a bounded queue in front of the judge runner, and the thread
that hands it batches. When the queue is full, or a trace waited longer than
``judge_max_wait_seconds``, the tier sheds it with ``over_budget`` / reason ``backlog``; every
decision is an ``eval_log`` row."""

from __future__ import annotations

import logging
import queue
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from collector.components import Context
from collector.store.base import Tx
from collector.store.reader import Window
from evaluators.service.eval_log import LogBuffer, write_log
from evaluators.service.sampling import WrittenFacts, load_facts
from evaluators.service.sampling_decision import decide
from evaluators.service.sampling_settings import SamplingSettings
from ragfault_core.clock import Clock

log = logging.getLogger("ragfault.evaluate")


@dataclass(frozen=True)
class JudgeItem:
    trace_id: str
    generation: int
    reason: str
    queued_at: float  # on the scheduler's clock (monotonic)


class JudgeTier:
    """Decides and runs the judge tier on its own thread (``judge``: ``evaluate(trace_ids) -> int``,
    or None when no judge is configured: selected traces are then logged ``filtered``)."""

    def __init__(
        self, ctx: Context, judge: Any, sampling: SamplingSettings, cursor: Tx, clock: Clock
    ) -> None:
        self.ctx = ctx
        self.judge = judge
        self.sampling = sampling
        self.cursor = cursor
        self.clock = clock
        self.queue: queue.Queue[JudgeItem] = queue.Queue(maxsize=sampling.judge_queue_max)
        self.busy = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ragfault-judge", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)

    def idle(self) -> bool:
        return self.queue.empty() and not self.busy

    def schedule(
        self,
        ids: list[str],
        buf: LogBuffer,
        hint: Window = None,
        written_since: datetime | None = None,
        written: Mapping[str, WrittenFacts] | None = None,
    ) -> None:
        """Decide the judge tier of these traces (their cheap verdicts are written): a decision row in
        ``buf`` for each trace not judged, the rest queued for the judge thread. ``written``: the
        facts their batches told (``evaluators.service.sampling.written_facts``), read back otherwise."""
        m = self.ctx.metrics
        now = self.clock.monotonic()
        for facts in load_facts(self.cursor, ids, self.sampling, hint, written_since, written):
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
                    self.queue.put_nowait(JudgeItem(facts.trace_id, facts.generation, d.reason, now))
                except queue.Full:
                    buf.add(
                        facts.trace_id, "judge", "over_budget",
                        f"backlog: judge queue full ({self.sampling.judge_queue_max} traces); {d.reason}",
                        facts.generation,
                    )  # fmt: skip
                    m.inc("ragfault_sampling_decisions_total", decision="over_budget")
        m.set("ragfault_judge_queue_traces", self.queue.qsize())

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                first = self.queue.get(timeout=0.5)  # (only how often it looks whether to stop)
            except queue.Empty:
                continue
            self.busy = True
            try:
                items = [first]
                while len(items) < self.sampling.judge_batch_size:
                    try:
                        items.append(self.queue.get_nowait())
                    except queue.Empty:
                        break
                self.judge_batch(items)
            except Exception:
                log.exception("judge round failed")
            finally:
                self.busy = False

    def judge_batch(self, items: list[JudgeItem]) -> None:
        m = self.ctx.metrics
        buf = LogBuffer()
        now = self.clock.monotonic()
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
            self.ctx.writer.call(lambda con: write_log(con, buf), timeout=300)
        m.set("ragfault_judge_queue_traces", self.queue.qsize())
