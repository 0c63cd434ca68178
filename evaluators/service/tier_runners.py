"""The two runners the evaluation service drives, built from a component's context: the cheap
tier's ``StoreRunner`` (every installed evaluator of the tier, configured by ``[evaluation]``) and
the judge runner (``[sampling] judge_factory``, by default ``evaluators.judge.service``'s, or none
when the judge is not installed)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from collector.components import Context
from evaluators.service.config import EvaluationSettings, evaluator_configs, load_evaluation_settings
from evaluators.service.registry import discover
from evaluators.service.running import Runner
from evaluators.service.sampling_settings import SamplingSettings
from evaluators.service.store_runner import StoreRunner
from ragfault_core.clock import Clock


def build_runner(ctx: Context, settings: EvaluationSettings | None = None) -> StoreRunner:
    settings = settings or ctx.table("evaluation", load_evaluation_settings)
    specs = discover()
    configs = evaluator_configs(settings, specs)
    return StoreRunner(
        ctx.store.cursor(),
        lambda fn: ctx.writer.call(fn, timeout=300),
        Runner(specs, configs, tier="cheap"),
        ctx.settings.source_keys,
        ctx.metrics,
    )


def build_judge(
    ctx: Context, sampling: SamplingSettings, evaluation: EvaluationSettings, clock: Clock | None = None
) -> Any:
    """The judge runner (``evaluate(trace_ids) -> int``) or None when no judge is configured. A
    factory that takes a ``clock`` keyword is given the service's, so that the judge's pacing and
    retries run on the same clock as the service (a test's manual clock included)."""
    if sampling.judge_factory:
        module, _, attr = sampling.judge_factory.partition(":")
        factory = getattr(importlib.import_module(module), attr or "build_judge_runner")
    else:
        try:
            from evaluators.judge.service import build_judge_runner as factory  # type: ignore[no-redef,unused-ignore]
        except ImportError:
            return None
    if clock is not None and "clock" in inspect.signature(factory).parameters:
        return factory(ctx, clock=clock)
    return factory(ctx)  # each factory reads its own table (``ctx.table``)
