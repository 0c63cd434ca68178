"""claim_recall (RAGChecker): required facts the final context supports / required facts.

Low claim recall puts the fault before generation (retrieval or the knowledge base); read it with
``context_utilization``. N/A without required facts.
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.common import context_sentences, facts_supported, guarded
from evaluators.metric import Metric
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "claim_recall"


@guarded(METRIC, at_answer=False)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    return facts_supported(inp, METRIC, context_sentences(inp))


SPEC = EvaluatorSpec(
    name="judge_claim_recall", version="1", fn=evaluate, tier="judge", needs_case=True,
    description="Required facts supported by the final context (RAGChecker claim recall), by the LLM judge.",
)  # fmt: skip
