"""Release gates: rules over a run's per-case results, evaluated per slice, for CI.

A rules file (TOML)::

    run = "candidate"          # the run under test (--run overrides)
    baseline = "baseline"      # the run regressions are counted against (--baseline overrides)

    [[rule]]
    name = "no permission violations"
    metric = "layer:permission_violation"   # traces failing that layer
    max = 0

    [[rule]]
    metric = "correct_refusal_rate"
    where = { risk = "high", expected_behavior = "refuse" }
    min = 0.85

    [[rule]]
    metric = "recall@5"
    min = 0.75

    [[rule]]
    metric = "regressions"                   # cases ok in the baseline, failing now
    max = 0

    [[rule]]
    metric = "answer_accuracy"               # the paired difference against the baseline run
    min_delta = 0
    significant = true                       # fail only when the whole 95 % interval is below 0

Metrics: ``layer:<layer>`` and ``root_cause:<cause>`` (trace counts), ``ok_rate``, ``traces``,
``recall@k`` (any configured k), ``candidate_recall``, ``context_recall``, ``context_retention``, ``fact_coverage``,
``citation_validity`` (macro over traces where they apply), ``answer_support`` (micro over claims),
``answer_accuracy``, ``over_refusal_rate``, ``correct_refusal_rate``, ``regressions``; from the
closed-book twin of the run: ``retrieval_hurt`` (cases right without retrieval, wrong with it) and
``parametric_share``; from conflict samples: ``follows_stale_rate``; from knowledge-base changes:
``affected_not_rerun`` (cases whose latest verdict predates a change to a document they depend on).
``min_delta`` / ``max_delta`` bound the paired difference from the baseline run (``ragfault
compare``); with ``significant = true`` a bound fails only when the whole 95 % bootstrap interval lies
beyond it (for a bound of 0: when the interval excludes zero).
``where`` filters on case columns (category, risk, expected_behavior, answerable, dataset, promoted)
with a value or a list of values. ``where = { promoted = true }`` is the cases promoted from live
traces (``ragfault gold promote``): ``metric = "ok_rate"``, ``min = 1`` requires every one to pass.
A rule whose slice has no applicable case fails unless ``if_empty = "pass"``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragfault.gate_metrics import MACRO, RATES, RECALL_AT, SUFFIXES, metric_of
from ragfault_core.errors import ConfigError
from ragfault_core.settings import explain

__all__ = [
    "DELTA", "EXPERIMENT", "MACRO", "RATES", "RECALL_AT", "SLICE_COLUMNS", "Outcome", "Rule", "Rules", "load_rules",
    "measure",
]  # fmt: skip

SLICE_COLUMNS = ("category", "risk", "expected_behavior", "answerable", "dataset", "promoted")
DELTA = ("ok_rate", "answer_support", *MACRO, *RATES)
# metrics over experiment rows (``measure``'s ``extra``), with the kind of rows each reads
EXPERIMENT = {"retrieval_hurt": "closed_book", "parametric_share": "closed_book",
              "follows_stale_rate": "conflicts", "affected_not_rerun": "affected"}  # fmt: skip


class Rule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str
    name: str | None = None
    where: dict[str, Any] = Field(default_factory=dict)
    min: float | None = None
    max: float | None = None
    min_delta: float | None = None
    max_delta: float | None = None
    significant: bool = False
    if_empty: Literal["fail", "pass"] = "fail"

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if self.min is None and self.max is None and not self.is_delta:
            raise ValueError("a rule needs min, max, min_delta or max_delta")
        prefix = next((p for p in SUFFIXES if self.metric.startswith(p)), None)
        if prefix is not None and metric_of(self.metric) is None:
            known = ", ".join(SUFFIXES[prefix]())
            raise ValueError(f"unknown metric {self.metric!r}: {prefix} takes one of {known}")
        if metric_of(self.metric) is None and self.metric not in EXPERIMENT:
            allowed = [*MACRO, "recall@K", *RATES, "answer_support", "ok_rate", "traces", "regressions",
                       *EXPERIMENT, "layer:<layer>", "root_cause:<root cause>"]  # fmt: skip
            raise ValueError(f"unknown metric {self.metric!r}; the metrics are: {', '.join(allowed)}")
        if self.is_delta and not (self.metric in DELTA or RECALL_AT.fullmatch(self.metric)):
            raise ValueError(f"min_delta/max_delta need a per-case metric ({', '.join(DELTA)}, recall@k)")
        if self.significant and not self.is_delta:
            raise ValueError("significant = true needs min_delta or max_delta")
        bad = set(self.where) - set(SLICE_COLUMNS)
        if bad:
            raise ValueError(f"where: unknown columns {sorted(bad)}; use {list(SLICE_COLUMNS)}")
        return self

    @property
    def is_delta(self) -> bool:
        return self.min_delta is not None or self.max_delta is not None

    @property
    def title(self) -> str:
        if self.name:
            return self.name
        ops = {"min": ">=", "max": "<=", "min_delta": "delta >=", "max_delta": "delta <="}
        cond = " ".join(f"{op} {getattr(self, k):g}" for k, op in ops.items() if getattr(self, k) is not None)
        if self.significant:
            cond += " (significant)"
        where = ", ".join(f"{k}={v}" for k, v in self.where.items())
        return f"{self.metric} {cond}" + (f" [{where}]" if where else "")


class Rules(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str | None = None
    baseline: str | None = None
    resamples: int = Field(10_000, ge=1, le=1_000_000, description="bootstrap resamples of delta rules")
    seed: int = 0
    rule: list[Rule] = Field(..., min_length=1)


def load_rules(path: str | Path) -> Rules:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read rules {path}: {exc}") from exc
    try:
        return Rules(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid rules {path}: {explain(exc)}") from exc


@dataclass
class Outcome:
    rule: Rule
    passed: bool
    value: float | None
    numerator: float | None
    denominator: float | None
    cases: int
    detail: str = ""


def _in_slice(row: dict[str, Any], where: dict[str, Any]) -> bool:
    for k, v in where.items():
        allowed = v if isinstance(v, list) else [v]
        if row.get(k) not in allowed:
            return False
    return True


def measure(
    rule: Rule,
    rows: list[dict[str, Any]],
    baseline: list[dict[str, Any]] | None,
    extra: dict[str, list[dict[str, Any]]] | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """One rule over a run's case results (``extra``: the experiment rows its metric may read).

    The metric's registered function tallies the slice; a rate whose denominator is empty (or a
    slice with no case at all) is "not applicable", which fails unless ``if_empty = "pass"``."""
    if rule.is_delta or rule.metric in EXPERIMENT:
        from ragfault.experiments import gates

        if rule.is_delta:
            return gates.measure_delta(rule, rows, baseline, resamples=resamples, seed=seed)
        return gates.measure_experiment(rule, extra)
    metric = metric_of(rule.metric)
    if metric is None:  # pragma: no cover - validated in Rule
        raise ConfigError(f"unknown metric {rule.metric}")
    rows = [r for r in rows if _in_slice(r, rule.where)]
    base = None if baseline is None else [r for r in baseline if _in_slice(r, rule.where)]
    tally = metric.tally(rule.metric, rows, base)
    if not rows and not metric.on_empty_slice or (not metric.count and not tally.den):
        return Outcome(
            rule,
            rule.if_empty == "pass",
            None,
            tally.num,
            tally.den,
            len(rows),
            "no applicable case in the slice",
        )
    value = tally.num if metric.count else tally.num / tally.den
    ok = (rule.min is None or value >= rule.min) and (rule.max is None or value <= rule.max)
    return Outcome(rule, ok, value, tally.num, tally.den, len(rows), tally.detail)
