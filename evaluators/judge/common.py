"""What the judge-tier evaluators share: the judge from the input, sentences of the context and the
answer, and turning the judge's refusals to work into rows (``skipped`` for budget, ``error`` for
failed calls) so that a judge problem is a verdict, never a lost batch."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.judge.client import JudgeFailed, JudgeSkipped
from evaluators.judge.judge import Judge, Sentence, split_sentences
from evaluators.metric import Metric, not_applicable, ratio


def skipped(metric: str, reason: str, span_id: str | None = None) -> Metric:
    return Metric(metric, "skipped", span_id=span_id, reason=reason)


Fn = Callable[[EvalInput, Any], list[Metric]]


def guarded(*metrics: str, at_answer: bool = True) -> Callable[[Fn], Fn]:
    """Run ``fn`` with a judge; without one, or when the judge may not or could not answer, every
    metric of the evaluator is a ``skipped`` / ``error`` row with the reason (on the answer step when
    ``at_answer``, else at trace level)."""

    def deco(fn: Fn) -> Fn:
        @wraps(fn)
        def run(inp: EvalInput, config: Any) -> list[Metric]:
            span = answer_span(inp) if at_answer else None
            if not isinstance(inp.judge, Judge):
                return [skipped(m, "no judge configured", span) for m in metrics]
            try:
                return fn(inp, config)
            except JudgeSkipped as exc:
                return [skipped(m, exc.reason, span) for m in metrics]
            except JudgeFailed as exc:
                return [Metric(m, "error", span_id=span, reason=str(exc)[:500]) for m in metrics]

        return run

    return deco


def answer_span(inp: EvalInput) -> str | None:
    step = inp.trace.answer_step
    return step.span_id if step is not None else inp.trace.answer_span_id


def answer_text(inp: EvalInput) -> str:
    t = inp.trace
    if t.answer_text:
        return t.answer_text
    step = t.answer_step
    return (step.output_text or "") if step is not None else ""


def context_sentences(inp: EvalInput) -> list[Sentence]:
    """The final context's sentences in context order, each with the document it came from."""
    out: list[Sentence] = []
    for d in inp.trace.context_docs:
        doc_id = d.doc_id or inp.kb.identify(d.content)
        out.extend(Sentence(s, doc_id) for s in split_sentences(d.content or ""))
    return out


def answer_sentences(inp: EvalInput) -> list[Sentence]:
    return [Sentence(s) for s in split_sentences(answer_text(inp))]


def required_facts(inp: EvalInput) -> list[tuple[str, str]]:
    if inp.case is None:
        return []
    return [(f.id, f.text) for f in inp.case.required_facts]


def details(judge: Judge, **values: Any) -> dict[str, Any]:
    return {**values, "judge": judge.version}


def facts_supported(inp: EvalInput, metric: str, sentences: list[Sentence]) -> list[Metric]:
    """Required facts the judge finds supported by ``sentences`` / required facts (N/A without facts)."""
    facts = required_facts(inp)
    if not facts:
        return [not_applicable(metric, "no required facts")]
    verdicts = inp.judge.facts(facts, sentences)
    supported = sum(1 for v in verdicts if v.verdict == "supported")
    return [
        ratio(
            metric,
            supported,
            len(facts),
            passed=supported == len(facts),
            details=details(inp.judge, items=[v.as_dict() for v in verdicts]),
        )
    ]
