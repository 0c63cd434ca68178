"""judge_fact_coverage: required facts of the gold case that the answer states, by the judge.

value = facts stated / required facts; N/A without required facts. Beside the lexical ``fact_coverage``.
"""

from __future__ import annotations

from evaluators.base import EvalInput, EvaluatorSpec, Metric, NoConfig, not_applicable, ratio
from evaluators.judge.common import answer_sentences, details, guarded, required_facts

METRIC = "judge_fact_coverage"


@guarded(METRIC, at_answer=False)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    facts = required_facts(inp)
    if not facts:
        return [not_applicable(METRIC, "no required facts")]
    verdicts = inp.judge.facts(facts, answer_sentences(inp))
    stated = sum(1 for v in verdicts if v.verdict == "supported")
    return [
        ratio(
            METRIC,
            stated,
            len(facts),
            passed=stated == len(facts),
            details=details(inp.judge, items=[v.as_dict() for v in verdicts]),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_fact_coverage", version="1", fn=evaluate, tier="judge", needs_case=True,
    description="Required facts the answer states, by the LLM judge.",
)  # fmt: skip
