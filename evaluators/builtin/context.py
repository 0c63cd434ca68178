"""Context-stage evidence metrics (docs/architecture.md, Evidence and matching): context recall and context retention.

- ``context_recall``: evidence units (an any_of group is one unit) in the final context / units.
  Not applicable without a gold case, without evidence, or when the trace has no context stage
  (neither explicit context documents nor the input of the answering LLM call): then nothing can be
  said about what the model saw.
- ``context_retention``: units in the candidates that also reached the context / units in the
  candidates (a unit found in the context but never among the candidates, e.g. through a tool,
  does not count in the numerator, so the value stays within [0, 1]). Not applicable when no unit
  is among the candidates, and, like recall, when the trace has no context stage.
  ``details.dropped`` names each dropped unit and the step that dropped it:
  ``rerank_cut`` (span of the first reranker whose input, or the candidates when it recorded no
  input, held the unit and whose output did not) or ``not_in_prompt`` (span of the answering LLM
  call: the unit was passed on but did not reach the prompt — token-budget truncation, or never
  passed). ``reason`` lists the dropping steps (e.g. ``rerank_cut``) when a unit was dropped.
``passed``: every unit in context (recall), no unit dropped (retention).
"""

from __future__ import annotations

from typing import Any

from evaluators.builtin import _trace_needs as needs
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig

NO_CONTEXT_STAGE = needs.reason(
    needs.ANSWER_LLM_INPUT,
    "no context stage: the trace has neither explicit context documents nor the input of the answering LLM call",
)


def _best_rank(inp: EvalInput, unit: int) -> dict[str, Any] | None:
    """Where a unit was first found among the candidates: step span and 1-based rank."""
    for step, docs in inp.trace.candidates_by_step:
        for i, d in enumerate(docs):
            if unit in inp.matching.units_of_doc(d):
                return {"span_id": step.span_id, "rank": i + 1}
    return None


def dropped_by(inp: EvalInput, unit: int) -> tuple[str, str | None]:
    """The step that dropped a unit that was among the candidates and is not in the context."""
    m = inp.matching
    for step in inp.trace.steps_of("rerank"):
        outputs = inp.trace.docs("reranked", step.span_id)
        if not outputs:
            continue  # an output that was not recorded says nothing about a cut
        inputs = inp.trace.docs("rerank_input", step.span_id)
        held = m.units_in(inputs) if inputs else m.in_candidates
        if unit in held and unit not in m.units_in(outputs):
            return "rerank_cut", step.span_id
    answer = inp.trace.answer_step
    return "not_in_prompt", answer.span_id if answer is not None else None


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    names = ("context_recall", "context_retention")
    if inp.case is None:
        return [not_applicable(n, "no gold case") for n in names]
    m = inp.matching
    units = m.units
    if not units:
        return [not_applicable(n, "no gold evidence") for n in names]
    if not m.has_context_stage:
        return [not_applicable(n, NO_CONTEXT_STAGE, missing_fields=[needs.ANSWER_LLM_INPUT]) for n in names]

    in_context = m.in_context
    in_cands = m.in_candidates
    missing = [m.unit(u).describe() for u in range(len(units)) if u not in in_context]
    out = [
        ratio(
            "context_recall",
            len(in_context),
            len(units),
            passed=len(in_context) == len(units),
            details={
                "missing": missing,
                "context_docs": len(inp.trace.context_docs),
                "explicit_context": inp.trace.has_explicit_context,
            },
        )
    ]

    if not in_cands:
        out.append(not_applicable("context_retention", "no evidence unit among the candidates"))
        return out
    if (in_cands - in_context) & needs.unverifiable_units(inp)[1]:
        # found among the candidates by id only, in documents without text: whether they reached
        # the prompt cannot be told
        out.append(needs.missing("context_retention", needs.DOCUMENT_TEXT))
        return out
    kept = in_cands & in_context
    dropped = []
    for u in sorted(in_cands - in_context):
        step, span_id = dropped_by(inp, u)
        entry: dict[str, Any] = {**m.unit(u).describe(), "step": step, "span_id": span_id}
        where = _best_rank(inp, u)
        if where is not None:
            entry["candidate_span_id"] = where["span_id"]
            entry["candidate_rank"] = where["rank"]
        dropped.append(entry)
    retention = ratio(
        "context_retention",
        len(kept),
        len(in_cands),
        passed=not dropped,
        details={"dropped": dropped, "retained": [m.unit(u).label for u in sorted(kept)]},
    )
    if dropped:  # the dropping steps, in order of first appearance: rerank_cut, not_in_prompt
        retention = retention._replace(reason=",".join(dict.fromkeys(d["step"] for d in dropped)))
    out.append(retention)
    return out


SPEC = EvaluatorSpec(
    name="context",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("trace",),
    tier="cheap",
    needs_case=True,
    description="Context recall and context retention (which step dropped each evidence unit).",
)
