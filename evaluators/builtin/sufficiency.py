"""Whether the trace holds what the layers need (docs/architecture.md, Attribution order: root cause ``insufficient_trace``).

``trace_sufficiency`` (trace): the fields the layers need that the trace carries / the fields they
need; ``passed`` when none is missing. A failed row makes attribution name ``insufficient_trace``
when no real layer failed: a trace that cannot tell is never ``ok``. The fields
(``evaluators.builtin._trace_needs``):

- ``answer``: always needed.
- ``answer_llm_input``: needed unless the app sent its context documents explicitly.
- ``retrieval_step``: needed when the trace retrieved without tracing it (the answering LLM's prompt
  holds gold evidence or registry text, or the app named its context, and no retrieval step ran).
- ``retrieval_output``: needed when a retrieval step recorded neither documents nor an output value
  and a gold evidence unit was not found among the recorded candidates (without a gold case:
  whenever such a step ran). The step is no empty retrieval; what it returned is unknown.
- ``document_text``: needed when a gold evidence unit was not found among the candidates (or a
  unit found there only by id was not found in a derived context) while some candidates carry
  neither text nor a registry entry: whether the evidence was among them cannot be told.
  Without a gold case, when any candidate is such a document.

Details: ``missing_fields`` (in the order above), ``unchecked_layers`` (per missing field, the
layers it leaves unchecked) and ``why`` (per missing field).
"""

from __future__ import annotations

from typing import Any

from evaluators.builtin import _trace_needs as needs
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, ratio
from evaluators.spec import EvaluatorSpec, NoConfig

METRIC = "trace_sufficiency"


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    needed: list[str] = [needs.ANSWER]
    missing: list[str] = []
    why: dict[str, str] = {}
    if not needs.has_answer(inp):
        missing.append(needs.ANSWER)
    if not inp.trace.has_explicit_context:
        needed.append(needs.ANSWER_LLM_INPUT)
        if not needs.has_context_stage(inp):
            missing.append(needs.ANSWER_LLM_INPUT)
    untraced = needs.untraced_retrieval(inp)
    if untraced:
        needed.append(needs.RETRIEVAL_STEP)
        missing.append(needs.RETRIEVAL_STEP)
        why[needs.RETRIEVAL_STEP] = untraced
    unrecorded = needs.unrecorded_retrievals(inp)
    if unrecorded and (inp.case is None or _unit_not_found(inp)):
        needed.append(needs.RETRIEVAL_OUTPUT)
        missing.append(needs.RETRIEVAL_OUTPUT)
        why[needs.RETRIEVAL_OUTPUT] = needs.unrecorded_why(inp)
    opaque = needs.opaque_candidates(inp)
    if opaque:
        if inp.case is None:
            unclear = True
        else:
            not_found, not_in_context = needs.unverifiable_units(inp)
            unclear = bool(not_found or not_in_context)
        if unclear:
            needed.append(needs.DOCUMENT_TEXT)
            missing.append(needs.DOCUMENT_TEXT)
            why[needs.DOCUMENT_TEXT] = (
                f"{len(opaque)} of {len(inp.trace.candidates)} candidates carry neither text nor an id "
                "the knowledge-base registry knows"
            )
    order = [
        needs.ANSWER, needs.ANSWER_LLM_INPUT, needs.RETRIEVAL_STEP, needs.RETRIEVAL_OUTPUT, needs.DOCUMENT_TEXT,
    ]  # fmt: skip
    missing.sort(key=order.index)
    details: dict[str, Any] = {
        "missing_fields": missing,
        "needed_fields": sorted(needed, key=order.index),
        "unchecked_layers": {f: list(needs.UNCHECKED[f]) for f in missing},
        "why": {f: why.get(f, needs.WHY[f]) for f in missing},
    }
    return [
        ratio(
            METRIC,
            len(needed) - len(missing),
            len(needed),
            passed=not missing,
            details=details,
            label="insufficient" if missing else "sufficient",
        )
    ]


def _unit_not_found(inp: EvalInput) -> bool:
    """A gold evidence unit is missing from the recorded candidates."""
    m = inp.matching
    return bool(m.units) and len(m.in_candidates) < len(m.units)


SPEC = EvaluatorSpec(
    name="sufficiency",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("trace",),
    tier="cheap",
    needs_case=False,
    description="Whether the trace carries what the layers need (answer, the answering LLM's input, "
    "document text, the retrieval step); names the missing fields.",
)
