"""Which settled traces the judge tier sees: the sampler's decision, by the settings of
``evaluators.service.sampling_settings`` (config file table ``[sampling]``).

The cheap tier runs on every trace. The judge tier runs on a sample, decided per trace by a pure
function of the trace's facts and the settings, in this order:

1. an ``exclude`` rule that matches → ``filtered`` (health checks, synthetic traffic);
2. an always-evaluate trigger that fires → selected (negative user feedback, error status, empty
   retrieval, a stale or forbidden document in the cheap-tier verdicts just written, answer claims
   the lexical tier left undecided) — triggers override every rate;
3. the first ``sample`` rule that matches → its rate;
4. experiment traffic (a trace with a run id) → ``experiment_rate`` (default: all);
5. production traffic → ``production_rate``.

A rate is applied deterministically: a trace is in when ``bucket(trace_id) < rate``, where the bucket
is a keyed hash of the trace id mapped to [0, 1). Every instance with the same ``salt`` makes the
same decision, and a trace sampled at 10% is also in at 20%.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluators.service.sampling_settings import SamplingSettings, TriggerSettings


def bucket(trace_id: str, salt: str = "") -> float:
    """A number in [0, 1) fixed by the trace id (lowercase hex) and the salt; uniform over ids."""
    digest = hashlib.blake2b(trace_id.lower().encode(), digest_size=8, key=salt.encode()[:64]).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class TraceFacts:
    """What sampling reads about one trace."""

    trace_id: str
    service_name: str | None = None
    run_id: str | None = None
    route: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    error_count: int = 0
    empty_retrieval: bool = False
    stale: bool = False
    forbidden: bool = False
    negative_feedback: bool = False
    undecided: bool = False
    generation: int = 0

    def triggers(self, enabled: TriggerSettings) -> list[str]:
        fired = []
        if enabled.negative_feedback and self.negative_feedback:
            fired.append("negative_feedback")
        if enabled.error_status and self.error_count > 0:
            fired.append("error_status")
        if enabled.empty_retrieval and self.empty_retrieval:
            fired.append("empty_retrieval")
        if enabled.stale_document and self.stale:
            fired.append("stale_document")
        if enabled.forbidden_document and self.forbidden:
            fired.append("forbidden_document")
        if enabled.undecided_claims and self.undecided:
            fired.append("undecided_claims")
        return fired


@dataclass(frozen=True)
class Decision:
    selected: bool
    decision: str  # evaluated (once judged), sampled_out, filtered
    reason: str


def decide(facts: TraceFacts, settings: SamplingSettings) -> Decision:
    """The judge-tier decision for one trace (pure)."""
    rule = next((r for r in settings.rules if r.matches(facts)), None)
    if rule is not None and rule.action == "exclude":
        return Decision(False, "filtered", f"rule {rule.name}")
    fired = facts.triggers(settings.triggers)
    if fired:
        return Decision(True, "evaluated", "trigger:" + ",".join(fired))
    if rule is not None:
        rate, why = float(rule.rate or 0.0), f"rule {rule.name}"
    elif facts.run_id:
        rate, why = settings.experiment_rate, "experiment"
    else:
        rate, why = settings.production_rate, "production"
    b = bucket(facts.trace_id, settings.salt)
    if b < rate:
        return Decision(True, "evaluated", f"sampled: {why} rate {rate:g}")
    return Decision(False, "sampled_out", f"{why} rate {rate:g}")


def is_negative(settings: SamplingSettings, kind: str, value: float | None, label: str | None) -> bool:
    """The feedback policy: thumbs down, a score below the threshold, or a negative label."""
    if label is not None and label.strip().lower() in {x.lower() for x in settings.negative_labels}:
        return True
    if kind == "thumbs":
        return value is not None and value <= 0
    if kind == "score":
        return value is not None and value < settings.negative_score_below
    return False
