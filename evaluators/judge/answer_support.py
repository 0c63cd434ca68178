"""judge_answer_support: the judge splits the answer into claims and labels each one supported,
contradicted or unsupported by the final context (the deciding sentence kept).

value = supported claims / claims; contradicted and unsupported are counted apart in ``details``. An
answer without claims (a refusal) is not applicable. ``label``: supported (every claim), contradicted
(any claim), else unsupported. Sits beside the lexical ``answer_support`` row, never replaces it.
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.common import answer_span, answer_text, context_sentences, details, guarded
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "judge_answer_support"


@guarded(METRIC)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    span = answer_span(inp)
    answer = answer_text(inp)
    if not answer.strip():
        return [not_applicable(METRIC, "missing answer: the trace captured no answer", span)]
    claims = inp.judge.claims(inp.trace.query_text or "", answer, context_sentences(inp))
    counts = {
        v: sum(1 for c in claims if c.verdict == v) for v in ("supported", "contradicted", "unsupported")
    }
    label = (
        "supported"
        if counts["supported"] == len(claims)
        else ("contradicted" if counts["contradicted"] else "unsupported")
    )
    return [
        ratio(
            METRIC,
            counts["supported"],
            len(claims),
            span_id=span,
            passed=counts["supported"] == len(claims),
            label=label if claims else None,
            na_reason="no claims",
            details=details(inp.judge, **counts, items=[c.as_dict() for c in claims]),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_answer_support", version="1", fn=evaluate, tier="judge",
    description="Claims of the answer supported by the final context, labelled by the LLM judge.",
)  # fmt: skip
