"""claim_recall (RAGChecker): required facts the final context supports / required facts.

Low claim recall puts the fault before generation (retrieval or the knowledge base); read it with
``context_utilization``. N/A without required facts.
"""

from __future__ import annotations

from evaluators.base import EvalInput, EvaluatorSpec, Metric, NoConfig, not_applicable, ratio
from evaluators.judge.common import context_sentences, details, guarded, required_facts

METRIC = "claim_recall"


@guarded(METRIC, at_answer=False)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    facts = required_facts(inp)
    if not facts:
        return [not_applicable(METRIC, "no required facts")]
    verdicts = inp.judge.facts(facts, context_sentences(inp))
    supported = sum(1 for v in verdicts if v.verdict == "supported")
    return [
        ratio(
            METRIC,
            supported,
            len(facts),
            passed=supported == len(facts),
            details=details(inp.judge, items=[v.as_dict() for v in verdicts]),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_claim_recall", version="1", fn=evaluate, tier="judge", needs_case=True,
    description="Required facts supported by the final context (RAGChecker claim recall), by the LLM judge.",
)  # fmt: skip
