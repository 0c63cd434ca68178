"""Gate rules measured on case_results rows: slices, denominators, any recall@k, empty slices."""

from __future__ import annotations

import pytest

from ragfault.gate import Rule, measure
from ragfault.gate_metrics import NAMED, PREFIXED, metric_of
from ragfault_core.errors import ConfigError


def row(case: str, cause: str, **kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "trace_id": f"t-{case}", "case_id": case, "category": "policy", "risk": "normal",
        "expected_behavior": "answer", "answerable": True, "root_cause": cause,
        "failing_layers": [] if cause == "ok" else [cause], "answerability": "answered_answerable",
        "recall_at": None, "answer_support_num": None, "answer_support_den": None, "fact_coverage": None,
        "start_time": "2026-01-01T00:00:00",
    }  # fmt: skip
    base.update(kw)
    return base


def test_recall_at_any_k_is_macro_over_cases_where_it_applies() -> None:
    rows = [
        row("a", "ok", recall_at='{"recall@2": 1.0, "recall@5": 1.0}'),
        row("b", "candidate_miss", recall_at='{"recall@2": 0.5, "recall@5": 1.0}'),
        row("c", "ok", recall_at=None),  # no evidence: not counted
    ]
    out = measure(Rule(metric="recall@2", min=0.8), rows, None)
    assert (out.numerator, out.denominator, out.value, out.passed) == (1.5, 2.0, 0.75, False)
    assert measure(Rule(metric="recall@5", min=0.8), rows, None).passed


def test_slice_rates_and_empty_slice() -> None:
    rows = [
        row("n1", "ok", risk="high", expected_behavior="refuse", answerable=False, answerability="refused_unanswerable"),
        row("n2", "answered_unanswerable", risk="high", expected_behavior="refuse", answerable=False,
            answerability="answered_unanswerable"),
        row("a1", "ok"),
    ]  # fmt: skip
    rule = Rule(
        metric="correct_refusal_rate", where={"risk": "high", "expected_behavior": "refuse"}, min=0.85
    )
    out = measure(rule, rows, None)
    assert (out.numerator, out.denominator, out.passed) == (1.0, 2.0, False)
    empty = Rule(metric="correct_refusal_rate", where={"category": "nothing-here"}, min=0.5)
    assert not measure(empty, rows, None).passed
    assert measure(empty.model_copy(update={"if_empty": "pass"}), rows, None).passed


def test_regressions_need_a_baseline_and_name_the_cases() -> None:
    base = [row("a", "ok"), row("b", "ok"), row("c", "stale_context")]
    now = [row("a", "ok"), row("b", "unsupported_claims"), row("c", "ok")]
    out = measure(Rule(metric="regressions", max=0), now, base)
    assert out.value == 1 and not out.passed and "b (unsupported_claims)" in out.detail
    with pytest.raises(ConfigError):
        measure(Rule(metric="regressions", max=0), now, None)


def test_unknown_metric_and_slice_column_are_refused() -> None:
    with pytest.raises(ValueError):
        Rule(metric="recall@0", min=1)
    with pytest.raises(ValueError):
        Rule(metric="ok_rate", where={"colour": "red"}, min=1)
    with pytest.raises(ValueError):
        Rule(metric="ok_rate")


def test_metrics_are_found_by_name_prefix_and_pattern() -> None:
    """The registry the validator and ``measure`` share: a metric is one of its entries or unknown."""
    assert metric_of("ok_rate") is NAMED["ok_rate"]
    assert metric_of("layer:permission_violation") is PREFIXED["layer:"]
    assert metric_of("root_cause:stale_context") is PREFIXED["root_cause:"]
    assert metric_of("recall@12") is metric_of("context_recall")  # both macro over cases
    assert metric_of("recall@0") is None and metric_of("layers:x") is None and metric_of("ok") is None
    counts = {name for name, m in NAMED.items() if m.count} | {p for p, m in PREFIXED.items() if m.count}
    assert counts == {"traces", "regressions", "layer:", "root_cause:"}


def test_a_count_is_measured_on_an_empty_rate_denominator_but_a_rate_is_not_applicable() -> None:
    rows = [row("a", "ok", answerability=None), row("b", "stale_context", answerability=None)]
    layer = measure(Rule(metric="layer:stale_context", max=0), rows, None)
    assert (layer.value, layer.passed, layer.detail) == (1.0, False, "b")
    rate = measure(Rule(metric="over_refusal_rate", max=0.1), rows, None)
    assert (rate.value, rate.denominator, rate.passed) == (None, 0.0, False)
    assert rate.detail == "no applicable case in the slice"
