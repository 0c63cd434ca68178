"""How the runner turns what evaluators return into ``evaluations`` rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.metric import Metric
from evaluators.service.runner import EVAL_COLUMNS, Runner, build_tables
from evaluators.spec import EvaluatorSpec, NoConfig
from tests.evaluators.evidence_builders import case, inp, rag

NOW = datetime(2026, 11, 1, 12, 0, 0)


def every_field(i: EvalInput, config: NoConfig) -> list[Metric]:
    return [
        Metric(
            metric="m",
            status="ok",
            value=0.25,
            numerator=1.0,
            denominator=4.0,
            span_id="ret",
            passed=False,
            label="lbl",
            reason="why",
            details={"k": [1, 2]},
        ),  # fmt: skip
        Metric("n", "not_applicable", reason="empty denominator"),
    ]


def not_metrics(i: EvalInput, config: NoConfig) -> list[Any]:
    return [Metric("fine"), {"metric": "oops"}]


SPECS = {
    "every": EvaluatorSpec(name="every", version="3", fn=every_field, description="test"),
    "wrong": EvaluatorSpec(name="wrong", version="1", fn=not_metrics, description="test"),
}


def rows() -> list[dict[str, Any]]:
    runner = Runner(SPECS, {"every": NoConfig(), "wrong": NoConfig()})
    trace = rag(candidates=["a", "b"], context=["a"], answer="A.")
    out = build_tables(runner, [inp(trace, case([{"doc_id": "a"}]))], {trace.trace_id: 0}, NOW)
    return out.evals.to_pylist()


def test_each_metric_field_lands_in_its_column() -> None:
    got = {r["metric"]: r for r in rows()}
    m = got["m"]
    assert list(m) == list(EVAL_COLUMNS)
    assert (m["trace_id"], m["span_id"], m["evaluator"], m["evaluator_version"], m["tier"]) == (
        "t" * 32, "ret", "every", "3", "cheap",
    )  # fmt: skip
    assert (m["value"], m["numerator"], m["denominator"], m["status"], m["reason"]) == (
        0.25,
        1.0,
        4.0,
        "ok",
        "why",
    )
    assert (m["passed"], m["label"], m["details"], m["generation"], m["evaluated_at"]) == (
        False, "lbl", '{"k":[1,2]}', 1, NOW,
    )  # fmt: skip
    n = got["n"]
    assert (n["status"], n["reason"], n["value"], n["span_id"], n["details"]) == (
        "not_applicable", "empty denominator", None, None, None,
    )  # fmt: skip


def test_an_evaluator_returning_something_else_gives_one_error_row() -> None:
    wrong = [r for r in rows() if r["evaluator"] == "wrong"]
    assert [(r["metric"], r["status"]) for r in wrong] == [("wrong", "error")]
    assert wrong[0]["reason"] == "TypeError: wrong returned a dict, not a Metric"
