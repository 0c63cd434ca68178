"""judge_citation_support: does each cited passage support the sentence that cites it?

A sentence cites an id when it mentions it (``[doc-1]``, ``(doc-1)``…); an id no sentence mentions is
taken as cited by the whole answer. value = supported (sentence, citation) pairs / pairs judged. Ids
absent from the context are listed in ``details.missing`` and left to ``citation_validity``. N/A
without citations.
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.common import answer_span, answer_text, details, guarded
from evaluators.judge.judge import Sentence, split_sentences
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "judge_citation_support"


@guarded(METRIC)
def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    span = answer_span(inp)
    cited = inp.trace.citations
    if not cited:
        return [not_applicable(METRIC, "no citations", span)]
    answer = answer_text(inp)
    sentences = split_sentences(answer)
    items, missing = [], []
    for cid in cited:
        docs = [d for d in inp.trace.context_docs if cid in (d.doc_id, d.chunk_id)]
        if not docs:
            missing.append(cid)
            continue
        passage = [Sentence(s, cid) for d in docs for s in split_sentences(d.content or "")]
        citing = [s for s in sentences if cid in s] or [answer]
        for sentence in citing:
            v = inp.judge.citation(sentence, passage)
            items.append({**v.as_dict(), "citation": cid})
    supported = sum(1 for i in items if i["label"] == "supported")
    return [
        ratio(
            METRIC,
            supported,
            len(items),
            span_id=span,
            passed=supported == len(items),
            na_reason="no cited id is in the context",
            details=details(inp.judge, items=items, missing=missing),
        )
    ]


SPEC = EvaluatorSpec(
    name="judge_citation_support", version="1", fn=evaluate, tier="judge",
    description="Cited passages that support the sentence citing them, by the LLM judge.",
)  # fmt: skip
