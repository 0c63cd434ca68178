"""Unknown is not empty: which retrieval steps did not record what they returned (docs/architecture.md,
Conventions and readers).

A retrieval that returned nothing records it (an empty document list, an output value ``[]``; the
readers keep that as the step's output); one whose output was not recorded at all (content
tracing off, an instrumentor that records only the query) carries neither documents nor an output
value. What such a step returned is unknown: the layers that read candidates must not take it for
an empty retrieval (``evaluators.builtin._trace_needs``, field ``retrieval_output``), and a context
derived from the known candidates is then only part of what the prompt held
(``evaluators.builtin._answer``).
"""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.trace_view import StepInfo


def output_unrecorded(inp: EvalInput, step: StepInfo) -> bool:
    """A retrieval step that recorded neither documents nor an output value: what it returned is
    unknown (an empty retrieval records its empty output, e.g. ``[]``; readers keep it)."""
    if step.output_text or step.tool_result:
        return False
    return not (inp.trace.docs("candidate", step.span_id) or inp.trace.docs("reranked", step.span_id))


def unrecorded_retrievals(inp: EvalInput) -> list[StepInfo]:
    """The retrieval steps whose output was not recorded (``output_unrecorded``), in start order."""
    key = "unrecorded_retrievals"
    found = inp._cache.get(key)
    if found is None:
        found = inp._cache[key] = [s for s in inp.trace.retrieval_steps if output_unrecorded(inp, s)]
    return found
