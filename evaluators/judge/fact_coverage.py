"""judge_fact_coverage: required facts of the gold case that the answer states, by the judge.

value = facts stated / required facts; N/A without required facts. Beside the lexical ``fact_coverage``.
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.common import answer_sentences, facts_supported, guarded
from evaluators.metric import Metric
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "judge_fact_coverage"


@guarded(METRIC, at_answer=False)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    return facts_supported(inp, METRIC, answer_sentences(inp))


SPEC = EvaluatorSpec(
    name="judge_fact_coverage", version="1", fn=evaluate, tier="judge", needs_case=True,
    description="Required facts the answer states, by the LLM judge.",
)  # fmt: skip
