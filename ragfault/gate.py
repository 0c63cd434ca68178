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

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from collector.config import explain
from collector.errors import ConfigError

MACRO = ("candidate_recall", "context_recall", "context_retention", "fact_coverage", "citation_validity")
RECALL_AT = re.compile(r"recall@[1-9][0-9]*")
RATES = ("answer_accuracy", "over_refusal_rate", "correct_refusal_rate")
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
        known = (
            self.metric in MACRO
            or RECALL_AT.fullmatch(self.metric)
            or self.metric in RATES
            or self.metric in ("answer_support", "ok_rate", "traces", "regressions", *EXPERIMENT)
            or self.metric.startswith(("layer:", "root_cause:"))
        )
        if not known:
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


def _latest_per_case(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (str(r.get("start_time") or ""), r["trace_id"])):
        out[r["case_id"]] = r
    return out


def _metric(row: dict[str, Any], name: str) -> float | None:
    """A per-trace metric of a case_results row; recall@k values sit in its ``recall_at`` object."""
    if RECALL_AT.fullmatch(name):
        at = row.get("recall_at")
        if isinstance(at, str):
            at = json.loads(at)
        value = (at or {}).get(name)
        return float(value) if value is not None else None
    value = row.get(name)
    return float(value) if value is not None else None


def measure(
    rule: Rule,
    rows: list[dict[str, Any]],
    baseline: list[dict[str, Any]] | None,
    extra: dict[str, list[dict[str, Any]]] | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """One rule over a run's case results (``extra``: the experiment rows its metric may read)."""
    if rule.is_delta or rule.metric in EXPERIMENT:
        from ragfault.experiments import gates

        if rule.is_delta:
            return gates.measure_delta(rule, rows, baseline, resamples=resamples, seed=seed)
        return gates.measure_experiment(rule, extra)
    rows = [r for r in rows if _in_slice(r, rule.where)]
    m = rule.metric
    num: float | None
    den: float | None
    detail = ""
    if m == "traces":
        num, den = float(len(rows)), 1.0
    elif m.startswith("layer:"):
        num, den = float(sum(1 for r in rows if m[6:] in (r["failing_layers"] or []))), 1.0
    elif m.startswith("root_cause:"):
        num, den = float(sum(1 for r in rows if r["root_cause"] == m[11:])), 1.0
    elif m == "ok_rate":
        num, den = float(sum(1 for r in rows if r["root_cause"] == "ok")), float(len(rows))
    elif m in MACRO or RECALL_AT.fullmatch(m):
        vals = [v for v in (_metric(r, m) for r in rows) if v is not None]
        num, den = float(sum(vals)), float(len(vals))
    elif m == "answer_support":
        num = float(sum(r["answer_support_num"] or 0 for r in rows if r["answer_support_den"]))
        den = float(sum(r["answer_support_den"] or 0 for r in rows if r["answer_support_den"]))
    elif m in RATES:
        cells = [r["answerability"] for r in rows if r.get("answerability")]
        answerable = [c for c in cells if c.endswith("_answerable") and not c.endswith("_unanswerable")]
        unanswerable = [c for c in cells if c.endswith("_unanswerable")]
        if m == "over_refusal_rate":
            num, den = float(answerable.count("refused_answerable")), float(len(answerable))
        elif m == "correct_refusal_rate":
            num, den = float(unanswerable.count("refused_unanswerable")), float(len(unanswerable))
        else:
            acc = [
                r
                for r in rows
                if r.get("answerability") == "answered_answerable" and r.get("fact_coverage") == 1
            ]
            num, den = float(len(acc)), float(len(answerable))
    elif m == "regressions":
        if baseline is None:
            raise ConfigError("rule 'regressions' needs a baseline run (rules `baseline` or --baseline)")
        base = _latest_per_case([r for r in baseline if _in_slice(r, rule.where)])
        now = _latest_per_case(rows)
        regressed = sorted(
            c
            for c, r in now.items()
            if c in base and base[c]["root_cause"] == "ok" and r["root_cause"] != "ok"
        )
        num, den = float(len(regressed)), 1.0
        detail = ", ".join(f"{c} ({now[c]['root_cause']})" for c in regressed)
    else:  # pragma: no cover - validated in Rule
        raise ConfigError(f"unknown metric {m}")
    count_like = m.startswith(("layer:", "root_cause:")) or m in ("traces", "regressions")
    if not rows and rule.metric != "regressions" or (not count_like and not den):
        return Outcome(
            rule, rule.if_empty == "pass", None, num, den, len(rows), "no applicable case in the slice"
        )
    value = num if count_like else num / den  # type: ignore[operator]
    ok = (rule.min is None or value >= rule.min) and (rule.max is None or value <= rule.max)
    if not detail and m.startswith("layer:"):
        detail = ", ".join(sorted(r["case_id"] for r in rows if m[6:] in (r["failing_layers"] or [])))
    return Outcome(rule, ok, value, num, den, len(rows), detail)
