"""What an evaluator returns: ``Metric`` rows, and the helpers that build them by the status rules
(docs/architecture.md, Evaluators and metrics): a metric with an empty denominator is
``not_applicable`` — never 0, never 1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

Status = Literal["ok", "not_applicable", "error", "skipped"]


class Metric(NamedTuple):
    """One row of ``evaluations`` as an evaluator returns it (the runner adds ids and versions).

    Immutable. A tuple rather than a dataclass: a trace yields dozens of these, and the runner lays
    a batch's rows out as columns by transposing them (``zip(*metrics)``) in C."""

    metric: str
    status: Status = "ok"
    value: float | None = None
    numerator: float | None = None
    denominator: float | None = None
    span_id: str | None = None
    passed: bool | None = None
    label: str | None = None
    reason: str | None = None
    details: dict[str, Any] | None = None


def ratio(
    metric: str,
    numerator: float,
    denominator: float,
    *,
    span_id: str | None = None,
    passed: bool | None = None,
    label: str | None = None,
    details: dict[str, Any] | None = None,
    na_reason: str = "empty denominator",
) -> Metric:
    """A ratio metric; ``not_applicable`` (value NULL) when the denominator is 0."""
    # every field given, in order: built by tuple.__new__ (Metric's own __new__ is a Python function)
    fields: tuple[Any, ...]
    if not denominator:
        fields = (
            metric,
            "not_applicable",
            None,
            numerator,
            denominator,
            span_id,
            None,
            label,
            na_reason,
            details,
        )
    else:
        fields = (
            metric,
            "ok",
            numerator / denominator,
            numerator,
            denominator,
            span_id,
            passed,
            label,
            None,
            details,
        )
    return _new_metric(Metric, fields)  # type: ignore[no-any-return]


_new_metric: Callable[..., Any] = tuple.__new__


def not_applicable(metric: str, reason: str, span_id: str | None = None, **details: Any) -> Metric:
    return Metric(metric, "not_applicable", span_id=span_id, reason=reason, details=details or None)
