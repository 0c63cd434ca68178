"""judge_refusal: the judge classifies the answer as refused, answered or clarify.

value 1 when refused, 0 otherwise; ``label`` the class. ``details`` carries the rule verdict of the
lexical tier when that module is installed, and the answerability cell when the trace has a gold case,
so the two classifiers can be compared row by row.
"""

from __future__ import annotations

from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.judge.common import answer_span, answer_text, details, guarded
from evaluators.metric import Metric, not_applicable
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "judge_refusal"


def _rule(answer: str) -> bool | None:
    try:
        from evaluators.lexical import is_refusal
    except ImportError:
        return None
    try:
        return bool(is_refusal(answer))
    except Exception:
        return None


@guarded(METRIC)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    span = answer_span(inp)
    answer = answer_text(inp)
    if not answer.strip():
        return [not_applicable(METRIC, "missing answer: the trace captured no answer", span)]
    out = inp.judge.refusal(inp.trace.query_text or "", answer)
    refused = out.label == "refused"
    extra: dict[str, Any] = {"reason": out.reason, "rule_refused": _rule(answer)}
    if inp.case is not None:
        extra["cell"] = (
            f"{'refused' if refused else 'answered'}_{'answerable' if inp.case.answerable else 'unanswerable'}"
        )
    return [
        Metric(
            METRIC,
            "ok",
            1.0 if refused else 0.0,
            span_id=span,
            label=out.label,
            details=details(inp.judge, **extra),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_refusal", version="1", fn=evaluate, tier="judge",
    description="Refusal classification by the LLM judge, beside the rule set.",
)  # fmt: skip
