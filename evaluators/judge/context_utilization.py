"""context_utilization (RAGChecker): of the required facts the context supports, those the answer states.

value = facts supported by the context and stated in the answer / facts supported by the context.
N/A when the context supports no required fact (then the fault is before generation: see
``claim_recall``). Both judge calls are shared with ``claim_recall`` and ``judge_fact_coverage``
through the cache.
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.common import answer_sentences, context_sentences, details, guarded, required_facts
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "context_utilization"


@guarded(METRIC, at_answer=False)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    facts = required_facts(inp)
    if not facts:
        return [not_applicable(METRIC, "no required facts")]
    in_context = inp.judge.facts(facts, context_sentences(inp))
    in_answer = inp.judge.facts(facts, answer_sentences(inp))
    usable = [(c, a) for c, a in zip(in_context, in_answer, strict=True) if c.verdict == "supported"]
    used = [a for _, a in usable if a.verdict == "supported"]
    items = [
        {**a.as_dict(), "label": a.verdict, "in_context": c.verdict == "supported"}
        for c, a in zip(in_context, in_answer, strict=True)
    ]
    return [
        ratio(
            METRIC,
            len(used),
            len(usable),
            passed=len(used) == len(usable),
            na_reason="no required fact is supported by the context",
            details=details(inp.judge, items=items),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_context_utilization", version="1", fn=evaluate, tier="judge", needs_case=True,
    description="Context-supported required facts that the answer states (RAGChecker), by the LLM judge.",
)  # fmt: skip
