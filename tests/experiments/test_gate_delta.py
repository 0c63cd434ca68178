"""Delta rules of the release gates: bounds on the paired difference from the baseline run, and
``significant = true``, which fails a bound only when the whole 95 % interval lies beyond it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ragfault import stats
from ragfault.compare import Side, metric_row
from ragfault.gate import Rule, measure


def rows(outcomes: list[bool], category: str = "policy") -> list[dict[str, Any]]:
    return [
        {"trace_id": f"t{i}", "case_id": f"c{i}", "start_time": "2026-01-01", "category": category,
         "root_cause": "ok" if ok else "unsupported_claims", "failing_layers": []}
        for i, ok in enumerate(outcomes)
    ]  # fmt: skip


def _ci(base: list[dict[str, Any]], run: list[dict[str, Any]]) -> tuple[float, float, float]:
    m = metric_row("ok_rate", None, Side.of(base), Side.of(run), None, resamples=10_000, seed=0)
    return m["delta"], m["ci_low"], m["ci_high"]


# 20 cases; the run loses 2 of them (delta -0.1, the interval includes 0) or 8 of them (it does not)
BASE = rows([True] * 20)
SMALL = rows([False, False] + [True] * 18)
LARGE = rows([False] * 8 + [True] * 12)


def test_the_intervals_are_what_the_cases_say() -> None:
    d, lo, hi = _ci(BASE, SMALL)
    assert d == pytest.approx(-0.1) and lo < 0 and hi == 0
    d, lo, hi = _ci(BASE, LARGE)
    assert d == pytest.approx(-0.4) and hi < 0
    # the gate's interval is the bootstrap of the per-case differences
    ci = stats.bootstrap_ci(
        [(1.0, 1.0, 0.0 if i < 8 else 1.0, 1.0) for i in range(20)], resamples=10_000, seed=0
    )
    assert ci is not None and (lo, hi) == pytest.approx((ci.low, ci.high))


def test_significant_rule_fails_only_when_the_interval_excludes_zero() -> None:
    rule = Rule(metric="ok_rate", min_delta=0, significant=True)
    assert measure(rule, SMALL, BASE).passed  # worse, but the interval reaches 0
    out = measure(rule, LARGE, BASE)
    assert not out.passed and out.value == pytest.approx(-0.4)
    assert "95% CI" in out.detail
    # the same bound on the point estimate fails on the small loss too
    assert not measure(Rule(metric="ok_rate", min_delta=0), SMALL, BASE).passed
    assert measure(Rule(metric="ok_rate", min_delta=-0.15), SMALL, BASE).passed
    # an upper bound: a significant rise fails max_delta = 0, a rise whose interval holds 0 does not
    assert not measure(Rule(metric="ok_rate", max_delta=0, significant=True), BASE, LARGE).passed
    assert measure(Rule(metric="ok_rate", max_delta=0, significant=True), BASE, SMALL).passed


def test_delta_rule_slices_and_needs_a_baseline() -> None:
    mixed_base = BASE + rows([True] * 5, "pricing")
    mixed_run = SMALL + rows([True] * 5, "pricing")
    assert measure(
        Rule(metric="ok_rate", min_delta=0, where={"category": "pricing"}), mixed_run, mixed_base
    ).passed
    assert not measure(
        Rule(metric="ok_rate", min_delta=0, where={"category": "policy"}), mixed_run, mixed_base
    ).passed
    with pytest.raises(Exception, match="baseline"):
        measure(Rule(metric="ok_rate", min_delta=0), SMALL, None)
    empty = measure(Rule(metric="ok_rate", min_delta=0, where={"category": "none"}), SMALL, BASE)
    assert not empty.passed and empty.value is None


def test_rule_validation() -> None:
    with pytest.raises(ValidationError, match="significant"):
        Rule(metric="ok_rate", min=0.5, significant=True)
    with pytest.raises(ValidationError, match="per-case metric"):
        Rule(metric="layer:stale_context", max_delta=0)
    Rule(metric="recall@5", min_delta=-0.05, significant=True)
    Rule(metric="follows_stale_rate", max=0.1)
