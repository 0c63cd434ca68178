"""The judge tier over stored traces: what the scheduler calls for sampled traces.

``build_judge_runner(runtime_or_store, settings)`` returns a ``JudgeRunner`` (``evaluate(trace_ids) ->
int``) or None when no ``[judge]`` table is configured. It evaluates the judge-tier evaluators with
the cheap tier's ``StoreRunner`` (rows of distinct metric names, so the lexical rows stay), giving
each input the ``Judge``; traces are judged ``concurrency`` at a time. After each batch it writes, in
one job on the writing connection: new cache entries, every call record, the judge's per-item
verdicts (for calibration), the judge version, and ``over_budget`` lines in ``eval_log``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple
from datetime import datetime, timedelta
from typing import Any

import httpx

from collector.store import judging
from collector.store.base import Tx
from evaluators.eval_input import EvalInput
from evaluators.judge.client import Budget, CallRecord, JudgeClient
from evaluators.judge.judge import Judge, JudgeCache
from evaluators.judge.settings import JudgeSettings, load_judge_settings
from evaluators.metric import Metric
from evaluators.service.config import EvaluationSettings, evaluator_configs, load_evaluation_settings
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner, WriteFn, utcnow
from evaluators.spec import EvaluatorSpec
from ragfault_core.clock import Clock
from ragfault_core.textnorm import normalize

log = logging.getLogger("ragfault.judge")

Results = list[tuple[EvaluatorSpec, Metric]]


class _Prefetched(Runner):
    """A Runner whose results were computed ahead, in parallel; ``run_grouped`` (and so ``run``) hands
    them out."""

    def __init__(self, inner: Runner) -> None:
        self.specs, self.configs, self.tier = inner.specs, inner.configs, inner.tier
        self.inner = inner
        self.results: dict[int, Results] = {}

    def run_grouped(self, inp: EvalInput) -> list[tuple[EvaluatorSpec, list[Metric]]]:
        found = self.results.pop(id(inp), None)
        if found is None:
            return self.inner.run_grouped(inp)
        grouped: list[tuple[EvaluatorSpec, list[Metric]]] = []
        for spec, metric in found:
            if grouped and grouped[-1][0] is spec:
                grouped[-1][1].append(metric)
            else:
                grouped.append((spec, [metric]))
        return grouped


class _JudgeStoreRunner(StoreRunner):
    def __init__(self, *args: Any, judge: Judge, concurrency: int, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.judge = judge
        self.concurrency = concurrency
        self.last: list[tuple[EvalInput, Results]] = []

    def plain_inputs(self, trace_ids: list[str]) -> list[EvalInput]:
        inputs = self._load(trace_ids, prepare=False)[0]  # without judging them (``prepare`` does)
        for inp in inputs:
            inp.judge = self.judge
        return inputs

    def judge_all(self, inputs: list[EvalInput]) -> list[tuple[EvalInput, Results]]:
        runner = self.runner.inner if isinstance(self.runner, _Prefetched) else self.runner
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="ragfault-judge") as pool:
            results = list(pool.map(runner.run, inputs))
        return list(zip(inputs, results, strict=True))

    def prepare(self, inputs: list[EvalInput]) -> list[EvalInput]:
        for inp in inputs:
            inp.judge = self.judge
        self.last = self.judge_all(inputs)
        assert isinstance(self.runner, _Prefetched)
        self.runner.results = {id(i): r for i, r in self.last}
        return inputs


def verdict_rows(
    pairs: list[tuple[EvalInput, Results]], judge: Judge, source: str, now: datetime
) -> list[tuple[Any, ...]]:
    """The judge's label per trace-level metric and per claim / fact, for calibration."""
    v = judge.version
    rows: list[tuple[Any, ...]] = []
    for inp, results in pairs:
        tid = inp.trace.trace_id
        for _, m in results:
            if m.status != "ok":
                continue
            label = m.label or ("pass" if m.passed else "fail")
            rows.append(
                (
                    tid,
                    m.span_id,
                    m.metric,
                    None,
                    None,
                    label,
                    m.value,
                    v["model"],
                    v["prompt_version"],
                    source,
                    now,
                )
            )
            for item in (m.details or {}).get("items", []):
                claim = item.get("claim")
                if claim:
                    rows.append(
                        (
                            tid,
                            m.span_id,
                            m.metric,
                            claim,
                            normalize(claim),
                            item["label"],
                            None,
                            v["model"],
                            v["prompt_version"],
                            source,
                            now,
                        )
                    )
    return rows


class JudgeRunner:
    """Judges stored traces: ``evaluate(trace_ids) -> int``; ``rescore_anchors()`` for a new version."""

    def __init__(
        self,
        cursor: Tx,
        write: WriteFn,
        settings: JudgeSettings,
        evaluation: EvaluationSettings | None = None,
        *,
        specs: dict[str, EvaluatorSpec] | None = None,
        source_keys: tuple[str, ...] = (),
        metrics: Any = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.write = write
        self.metrics = metrics
        self._calls: list[CallRecord] = []
        self._lock = threading.Lock()
        specs = specs if specs is not None else discover()
        configs = evaluator_configs(evaluation or EvaluationSettings(), specs)
        self.budget = Budget(settings.tokens_per_hour, settings.budget_usd_per_hour)
        for at, tokens, cost in judging.recent_spend(cursor, utcnow() - timedelta(hours=1)):
            self.budget.add(tokens, cost, at=at)
        self.client = JudgeClient(
            settings,
            record=self._record,
            budget=self.budget,
            sleep=sleep,
            transport=transport,
            clock=clock,
        )
        self.cache = JudgeCache(judging.cache_handle(cursor))
        self.judge = Judge(settings, self.client, self.cache)
        self.cursor = cursor
        self.store_runner = _JudgeStoreRunner(
            cursor,
            write,
            _Prefetched(Runner(specs, configs, tier="judge")),
            source_keys,
            metrics,
            judge=self.judge,
            concurrency=settings.concurrency,
        )
        self._anchors_checked = False

    def _record(self, rec: CallRecord) -> None:
        with self._lock:
            self._calls.append(rec)
        if self.metrics is not None:
            self.metrics.inc("ragfault_judge_calls_total", status=rec.status)

    @property
    def specs(self) -> dict[str, EvaluatorSpec]:
        return self.store_runner.runner.specs

    def evaluate(self, trace_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(trace_ids))
        if not ids or not self.specs:
            return 0
        if self.settings.rescore_anchors and not self._anchors_checked:
            self._anchors_checked = True
            try:
                self.rescore_anchors(only_if_new=True)
            except Exception:
                log.exception("re-scoring the anchor set failed")
        n = self.store_runner.evaluate(ids)
        pairs, self.store_runner.last = self.store_runner.last, []
        self.flush(pairs, "run")
        return n

    def rescore_anchors(self, only_if_new: bool = False) -> int:
        """Judge the anchor traces (human-labelled, ``anchor``) with this judge version; their verdicts go
        to ``judge_verdicts`` (source ``anchor``), not to ``evaluations``. Returns traces scored."""
        v = self.judge.version
        if only_if_new:
            if judging.anchors_scored(self.cursor, v["model"], v["prompt_version"]):
                return 0
        ids = judging.anchor_traces(self.cursor)
        if not ids:
            return 0
        inputs = self.store_runner.plain_inputs(ids)
        pairs = self.store_runner.judge_all(inputs)
        self.flush(pairs, "anchor")
        return len(inputs)

    def flush(self, pairs: list[tuple[EvalInput, Results]], source: str) -> None:
        now = utcnow()
        cache_rows = self.cache.drain()
        with self._lock:
            calls, self._calls = self._calls, []
        verdicts = verdict_rows(pairs, self.judge, source, now)
        over = sorted(
            {
                inp.trace.trace_id
                for inp, res in pairs
                for _, m in res
                if m.status == "skipped" and m.reason == "budget"
            }
        )
        v = self.judge.version

        def job(con: Tx) -> None:
            judging.write_run(
                con,
                cache_rows=cache_rows,
                calls=[astuple(c) for c in calls],
                verdicts=verdicts,
                model=v["model"],
                prompt_version=v["prompt_version"],
                anchors=source == "anchor",
                over_budget=over,
                now=now,
            )

        self.write(job)

    def close(self) -> None:
        self.client.close()


def build_judge_runner(
    runtime_or_store: Any,
    settings: JudgeSettings | None = None,
    *,
    evaluation: EvaluationSettings | None = None,
    specs: dict[str, EvaluatorSpec] | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] | None = None,
    clock: Clock | None = None,
) -> JudgeRunner | None:
    """A judge runner over a server ``Runtime`` or a ``LocalStore``; None when no judge is configured.

    ``settings`` default to the ``[judge]`` table of the runtime's settings tree (``Runtime.table``).
    ``clock`` paces the judge's calls and retries (the machine's clock unless a test passes its own).
    """
    if settings is None:
        settings = runtime_or_store.table("judge", load_judge_settings)
    if settings is None:
        return None
    if evaluation is None:
        evaluation = runtime_or_store.table("evaluation", load_evaluation_settings)
    if hasattr(runtime_or_store, "writer"):  # a server Runtime: writes go through the writer thread
        write: WriteFn = lambda fn: runtime_or_store.writer.call(fn, timeout=300)  # noqa: E731
    else:  # a LocalStore
        write = runtime_or_store.write
    return JudgeRunner(
        runtime_or_store.store.cursor(),
        write,
        settings,
        evaluation,
        specs=specs,
        source_keys=getattr(getattr(runtime_or_store, "settings", None), "source_keys", ()) or (),
        metrics=getattr(runtime_or_store, "metrics", None),
        transport=transport,
        sleep=sleep,
        clock=clock,
    )
