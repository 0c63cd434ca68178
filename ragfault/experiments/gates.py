"""Gate rules over experiments: bounds on the paired difference from the baseline run (with
``significant``), and the closed-book, conflict-sample and knowledge-base-change metrics."""

from __future__ import annotations

from typing import Any

from ragfault.compare import Side, metric_row
from ragfault.gate import EXPERIMENT, Outcome, Rule, _in_slice
from ragfault_core.errors import ConfigError


def measure_delta(
    rule: Rule,
    rows: list[dict[str, Any]],
    baseline: list[dict[str, Any]] | None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """The paired difference of the rule's metric from the baseline run over the slice, and its
    interval. With ``significant``, a bound fails only when the whole interval lies beyond it."""
    if baseline is None:
        raise ConfigError(f"rule {rule.title!r} needs a baseline run (rules `baseline` or --baseline)")
    base = Side.of(r for r in baseline if _in_slice(r, rule.where))
    now = Side.of(r for r in rows if _in_slice(r, rule.where))
    mr = metric_row(rule.metric, None, base, now, None, resamples=resamples, seed=seed)
    delta, low, high = mr["delta"], mr["ci_low"], mr["ci_high"]
    if delta is None:
        return Outcome(
            rule, rule.if_empty == "pass", None, None, None, mr["n"], "no case paired with the baseline"
        )
    detail = (f"{mr['baseline']:.4g} -> {mr['run']:.4g}; paired n={mr['n']}, "
              f"95% CI [{low:+.4g}, {high:+.4g}]")  # fmt: skip
    below, above = (high, low) if rule.significant else (delta, delta)
    ok = (rule.min_delta is None or below >= rule.min_delta) and (
        rule.max_delta is None or above <= rule.max_delta
    )
    ok = ok and (rule.min is None or delta >= rule.min) and (rule.max is None or delta <= rule.max)
    return Outcome(rule, ok, delta, None, None, mr["n"], detail)


def measure_experiment(rule: Rule, extra: dict[str, list[dict[str, Any]]] | None) -> Outcome:
    """``retrieval_hurt`` and ``affected_not_rerun`` count cases; ``parametric_share`` and
    ``follows_stale_rate`` are rates with their denominators (pairs with a known outcome; cases whose
    stale version reached the context)."""
    m = rule.metric
    rows = [r for r in (extra or {}).get(EXPERIMENT[m], []) if _in_slice(r, rule.where)]
    count_like = m in ("retrieval_hurt", "affected_not_rerun")
    if m == "retrieval_hurt":
        hurt = sorted(r["case_id"] for r in rows if r["outcome"] == "hurt")
        num, den, detail = float(len(hurt)), 1.0, ", ".join(hurt)
    elif m == "parametric_share":
        known = [r for r in rows if r["outcome"] != "unknown"]
        num, den = float(sum(1 for r in known if r["outcome"] == "parametric")), float(len(known))
        flagged = ", ".join(sorted(r["case_id"] for r in known if r.get("flagged")))
        detail = f"flagged (strong reliance): {flagged}" if flagged else ""
    elif m == "follows_stale_rate":
        reached = [r for r in rows if r["stale_in_context"]]
        num, den = float(sum(1 for r in reached if r["follows_stale"])), float(len(reached))
        detail = ", ".join(sorted(r["case_id"] for r in reached if r["follows_stale"]))
    else:  # affected_not_rerun
        waiting = sorted({r["case_id"] for r in rows if not r["rerun"]})
        num, den, detail = float(len(waiting)), 1.0, ", ".join(waiting)
    if not count_like and not den:
        return Outcome(
            rule, rule.if_empty == "pass", None, num, den, len(rows), "no applicable case in the slice"
        )
    value = num if count_like else num / den
    ok = (rule.min is None or value >= rule.min) and (rule.max is None or value <= rule.max)
    return Outcome(rule, ok, value, num, den, len(rows), detail)
