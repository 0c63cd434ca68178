"""The metrics a gate rule can bound, as a registry: a metric's name (or its prefix, or a pattern
for a family such as ``recall@k``) maps to the function that tallies it over a slice of
``case_results`` rows.

A registry rather than a chain of name tests so that adding a metric is one function and one
entry, the rule validator and the measuring code read the same table, and a name can never be
accepted by one and unknown to the other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from queries.taxonomy import attribution_order, cause_names
from ragfault_core.errors import ConfigError

Rows = list[dict[str, Any]]

MACRO = ("candidate_recall", "context_recall", "context_retention", "fact_coverage", "citation_validity")
RECALL_AT = re.compile(r"recall@[1-9][0-9]*")
RATES = ("answer_accuracy", "over_refusal_rate", "correct_refusal_rate")


@dataclass(frozen=True)
class Tally:
    """A metric over a slice: a count is ``num`` (``den`` 1), a rate is ``num / den``; ``detail``
    names what was counted, for the report."""

    num: float
    den: float
    detail: str = ""


@dataclass(frozen=True)
class Metric:
    """One registered metric. ``count``: the value is the numerator itself, so an empty denominator
    does not make it inapplicable; ``on_empty_slice``: still measured when the run's slice has no
    row (regressions count cases of the baseline too)."""

    tally: Callable[[str, Rows, Rows | None], Tally]
    count: bool = False
    on_empty_slice: bool = False


def _value(row: dict[str, Any], name: str) -> float | None:
    """A per-trace metric of a case_results row; recall@k values sit in its ``recall_at`` object."""
    if RECALL_AT.fullmatch(name):
        at = row.get("recall_at")
        if isinstance(at, str):
            at = json.loads(at)
        value = (at or {}).get(name)
        return float(value) if value is not None else None
    value = row.get(name)
    return float(value) if value is not None else None


def _traces(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    return Tally(float(len(rows)), 1.0)


def _layer(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    layer = name.removeprefix("layer:")
    failing = [r["case_id"] for r in rows if layer in (r["failing_layers"] or [])]
    return Tally(float(len(failing)), 1.0, ", ".join(sorted(failing)))


def _root_cause(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    cause = name.removeprefix("root_cause:")
    return Tally(float(sum(1 for r in rows if r["root_cause"] == cause)), 1.0)


def _ok_rate(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    return Tally(float(sum(1 for r in rows if r["root_cause"] == "ok")), float(len(rows)))


def _macro(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    """Macro mean over the traces where the metric applies (a row without it is not counted)."""
    values = [v for v in (_value(r, name) for r in rows) if v is not None]
    return Tally(float(sum(values)), float(len(values)))


def _answer_support(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    """Micro over claims: supported claims of all traces over all their claims."""
    judged = [r for r in rows if r["answer_support_den"]]
    return Tally(
        float(sum(r["answer_support_num"] or 0 for r in judged)),
        float(sum(r["answer_support_den"] or 0 for r in judged)),
    )


def _answerability(rows: Rows) -> tuple[list[str], list[str]]:
    """The answerability cells of answerable and of unanswerable cases."""
    cells = [r["answerability"] for r in rows if r.get("answerability")]
    answerable = [c for c in cells if c.endswith("_answerable") and not c.endswith("_unanswerable")]
    return answerable, [c for c in cells if c.endswith("_unanswerable")]


def _over_refusal(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    answerable, _ = _answerability(rows)
    return Tally(float(answerable.count("refused_answerable")), float(len(answerable)))


def _correct_refusal(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    _, unanswerable = _answerability(rows)
    return Tally(float(unanswerable.count("refused_unanswerable")), float(len(unanswerable)))


def _answer_accuracy(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    """Answerable cases answered with every expected fact, over the answerable cases."""
    answerable, _ = _answerability(rows)
    right = [
        r for r in rows if r.get("answerability") == "answered_answerable" and r.get("fact_coverage") == 1
    ]
    return Tally(float(len(right)), float(len(answerable)))


def _latest_per_case(rows: Rows) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (str(r.get("start_time") or ""), r["trace_id"])):
        out[r["case_id"]] = r
    return out


def _regressions(name: str, rows: Rows, baseline: Rows | None) -> Tally:
    """Cases ok in the baseline's slice (latest trace per case) and failing now, named."""
    if baseline is None:
        raise ConfigError("rule 'regressions' needs a baseline run (rules `baseline` or --baseline)")
    base = _latest_per_case(baseline)
    now = _latest_per_case(rows)
    regressed = sorted(
        c for c, r in now.items() if c in base and base[c]["root_cause"] == "ok" and r["root_cause"] != "ok"
    )
    return Tally(float(len(regressed)), 1.0, ", ".join(f"{c} ({now[c]['root_cause']})" for c in regressed))


_MACRO_METRIC = Metric(_macro)
NAMED: dict[str, Metric] = {
    "traces": Metric(_traces, count=True),
    "ok_rate": Metric(_ok_rate),
    **{name: _MACRO_METRIC for name in MACRO},
    "answer_support": Metric(_answer_support),
    "answer_accuracy": Metric(_answer_accuracy),
    "over_refusal_rate": Metric(_over_refusal),
    "correct_refusal_rate": Metric(_correct_refusal),
    "regressions": Metric(_regressions, count=True, on_empty_slice=True),
}
PREFIXED: dict[str, Metric] = {
    "layer:": Metric(_layer, count=True),
    "root_cause:": Metric(_root_cause, count=True),
}
PATTERNS: tuple[tuple[re.Pattern[str], Metric], ...] = ((RECALL_AT, _MACRO_METRIC),)
# what follows a prefix, from the one table of root causes (``queries.taxonomy``): a misspelt layer
# would count nothing and pass every ``max`` bound, so it is an unknown metric instead
SUFFIXES: dict[str, Callable[[], tuple[str, ...]]] = {
    "layer:": cause_names,
    "root_cause:": attribution_order,
}


def metric_of(name: str) -> Metric | None:
    """The registered metric a rule's ``metric`` names: by name, then by prefix, then by pattern."""
    if name in NAMED:
        return NAMED[name]
    for prefix, metric in PREFIXED.items():
        if name.startswith(prefix):
            return metric if name.removeprefix(prefix) in SUFFIXES[prefix]() else None
    for pattern, metric in PATTERNS:
        if pattern.fullmatch(name):
            return metric
    return None
