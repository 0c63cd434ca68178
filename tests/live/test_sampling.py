"""Sampling decisions: deterministic by trace id, at the configured rate, overridden by triggers."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest
from pydantic import ValidationError

from evaluators.service.sampling_decision import TraceFacts, bucket, decide, is_negative
from evaluators.service.sampling_settings import SamplingRule, SamplingSettings

N = 10_000


def trace_ids(n: int = N, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.getrandbits(128):032x}" for _ in range(n)]


def within_bounds(k: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    """k successes of n are within `sigmas` binomial standard deviations of n·p."""
    return abs(k - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("rate", [0.01, 0.1, 0.5, 0.9])
def test_production_rate_within_binomial_bounds(rate: float) -> None:
    settings = SamplingSettings(production_rate=rate)
    k = sum(decide(TraceFacts(t), settings).selected for t in trace_ids())
    assert within_bounds(k, N, rate), (k, N * rate)


def test_rate_bounds_check_can_fail() -> None:
    # the bound is tight enough to notice a sampler running at the wrong rate
    settings = SamplingSettings(production_rate=0.12)
    k = sum(decide(TraceFacts(t), settings).selected for t in trace_ids())
    assert not within_bounds(k, N, 0.10)


def test_same_decision_in_another_process() -> None:
    ids = trace_ids(200, seed=3)
    here = [round(bucket(t, "s1"), 12) for t in ids]
    code = (
        "import sys, json; from evaluators.service.sampling_decision import bucket; "
        "print(json.dumps([round(bucket(t, 's1'), 12) for t in json.load(sys.stdin)]))"
    )
    import json

    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(ids),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        cwd=str(__import__("pathlib").Path(__file__).parents[2]),
    )
    assert json.loads(out.stdout) == here
    assert bucket(ids[0], "s1") != bucket(ids[0], "s2")  # the salt draws a different sample


def test_samples_are_nested_across_rates() -> None:
    low = {t for t in trace_ids() if decide(TraceFacts(t), SamplingSettings(production_rate=0.1)).selected}
    high = {t for t in trace_ids() if decide(TraceFacts(t), SamplingSettings(production_rate=0.2)).selected}
    assert low < high


def test_experiment_traffic_is_evaluated_in_full() -> None:
    settings = SamplingSettings(production_rate=0.0)
    ids = trace_ids(2000)
    assert all(decide(TraceFacts(t, run_id="run-1"), settings).selected for t in ids)
    assert not any(decide(TraceFacts(t), settings).selected for t in ids)


def test_rules_by_service_route_run_and_attribute() -> None:
    settings = SamplingSettings(
        production_rate=0.0,
        rules=(
            SamplingRule(name="health", route="GET /health*", action="exclude"),
            SamplingRule(name="vip", attributes={"tenant": "vip-*"}, rate=1.0),
            SamplingRule(name="checkout", service="checkout", rate=0.3),
            SamplingRule(name="nightly", run="nightly-*", rate=0.0),
        ),
    )
    ids = trace_ids()
    k = sum(decide(TraceFacts(t, service_name="checkout"), settings).selected for t in ids)
    assert within_bounds(k, N, 0.3)
    assert decide(TraceFacts(ids[0], route="GET /healthz"), settings).decision == "filtered"
    assert decide(TraceFacts(ids[0], attributes={"tenant": "vip-acme"}), settings).selected
    assert not decide(TraceFacts(ids[0], attributes={"tenant": "free"}), settings).selected
    assert not any(decide(TraceFacts(t, run_id="nightly-7"), settings).selected for t in ids[:500])


def test_triggers_override_sampling() -> None:
    settings = SamplingSettings(
        production_rate=0.0, rules=(SamplingRule(name="none", service="*", rate=0.0),)
    )
    ids = trace_ids(500)
    for facts in (
        lambda t: TraceFacts(t, service_name="a", error_count=1),
        lambda t: TraceFacts(t, service_name="a", empty_retrieval=True),
        lambda t: TraceFacts(t, service_name="a", stale=True),
        lambda t: TraceFacts(t, service_name="a", forbidden=True),
        lambda t: TraceFacts(t, service_name="a", negative_feedback=True),
    ):
        decisions = [decide(facts(t), settings) for t in ids]
        assert all(d.selected and d.reason.startswith("trigger:") for d in decisions)
    assert not decide(TraceFacts(ids[0], service_name="a"), settings).selected
    # a trigger can be switched off
    off = SamplingSettings(production_rate=0.0, triggers={"error_status": False})
    assert not decide(TraceFacts(ids[0], error_count=3), off).selected
    # an exclusion filter is stronger than a trigger
    excl = SamplingSettings(rules=(SamplingRule(name="synthetic", service="synthetic", action="exclude"),))
    assert decide(TraceFacts(ids[0], service_name="synthetic", error_count=1), excl).decision == "filtered"


def test_negative_feedback_policy() -> None:
    s = SamplingSettings()
    assert is_negative(s, "thumbs", 0.0, "thumbs_down")
    assert not is_negative(s, "thumbs", 1.0, "thumbs_up")
    assert is_negative(s, "score", 0.2, None) and not is_negative(s, "score", 0.9, None)
    assert is_negative(s, "label", None, "Hallucinated")
    assert not is_negative(s, "comment", None, None)


def test_settings_refuse_unknown_keys() -> None:
    with pytest.raises(ValidationError):
        SamplingSettings(production_rte=0.1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SamplingRule(name="x", service="a")  # a sample rule without a rate
