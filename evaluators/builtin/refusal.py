"""Refusal detection and the answerable × answered/refused table (docs/architecture.md, Evaluators and metrics).

- ``refusal`` (trace): value 1 when the answer refuses, 0 when it answers; label ``refused`` or
  ``answered``. An answer refuses when it is made only of refusal and hedge sentences ("I don't
  know", "The documents do not say…", "不清楚", "资料里没有…", "建议咨询人工客服") — the lexical rules
  of ``evaluators.lexical.is_refusal`` plus the configured extra patterns — or only of questions
  back to the user (a clarifying question answers nothing; details say ``kind: clarification``).
  An answer with a real claim and a polite hedge answers. Needs no gold case.
- ``answerability`` (trace, with a gold case): label ``answered_answerable``, ``refused_answerable``,
  ``refused_unanswerable`` or ``answered_unanswerable``. A case whose expected behavior is
  ``refuse`` or ``clarify`` is on the unanswerable side; ``answer`` and ``correct_premise`` (the
  answer exists and should correct the premise) on the answerable side. ``passed`` for the correct
  cells (answered_answerable, refused_unanswerable); the layers ``over_refusal`` and
  ``answered_unanswerable`` read the label.
Both are not applicable when the trace has no answer (empty or missing).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import answer_text
from evaluators.eval_input import EvalInput
from evaluators.lexical import is_refusal, sentences, split_claims
from evaluators.metric import Metric, not_applicable
from evaluators.spec import EvaluatorSpec, Regexes


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    extra_patterns: Regexes = Field(
        (), description="Extra refusal/hedge regular expressions (case-insensitive), matched per sentence."
    )
    clarification_is_refusal: bool = Field(
        True, description="Count an answer made only of questions to the user as not answering."
    )


def classify(answer: str, config: Config) -> str:
    """``refusal``, ``clarification`` or ``answer``."""
    if is_refusal(answer, config.extra_patterns):
        return "refusal"
    if config.clarification_is_refusal and not split_claims(answer, config.extra_patterns):
        sents = sentences(answer)
        if sents and all(s.rstrip().endswith(("?", "？")) for s in sents):
            return "clarification"
    return "answer"


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    answer = answer_text(inp)
    if not answer.strip():
        return [needs.missing("refusal", needs.ANSWER), needs.missing("answerability", needs.ANSWER)]
    kind = classify(answer, config)
    refused = kind != "answer"
    label = "refused" if refused else "answered"
    claims = len(split_claims(answer, config.extra_patterns))
    out = [
        Metric(
            "refusal",
            value=1.0 if refused else 0.0,
            numerator=1.0 if refused else 0.0,
            denominator=1.0,
            label=label,
            details={"kind": kind, "claims": claims},
        )
    ]
    case = inp.case
    if case is None:
        out.append(not_applicable("answerability", "no gold case"))
        return out
    unanswerable = case.expected_behavior in ("refuse", "clarify")
    side = "unanswerable" if unanswerable else "answerable"
    cell = f"{label}_{side}"
    out.append(
        Metric(
            "answerability",
            value=1.0 if refused else 0.0,
            numerator=1.0 if refused else 0.0,
            denominator=1.0,
            passed=cell in ("answered_answerable", "refused_unanswerable"),
            label=cell,
            details={
                "kind": kind,
                "expected_behavior": case.expected_behavior,
                "answerable": case.answerable,
                "category": case.category,
                "claims": claims,
            },
        )
    )
    return out


SPEC = EvaluatorSpec(
    name="refusal",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("trace",),
    tier="cheap",
    needs_case=False,
    description="Refusal detection (English and Chinese rules) and the answerable × answered/refused cell.",
)
