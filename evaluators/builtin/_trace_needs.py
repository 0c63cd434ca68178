"""What the layers need from a trace, and how to tell a trace that lacks it (docs/architecture.md, Attribution order: insufficient_trace).

A layer that cannot be checked is not a layer that passed. The evaluators below ask these helpers
whether the trace holds what their verdict needs; when it does not, their row is ``not_applicable``
with a reason that names the missing field (``missing <field>: <why>``), and the ``sufficiency``
evaluator lists every missing field, which attribution turns into ``insufficient_trace``.

The fields (the same names as ``ragfault doctor`` and ``GET /api/v1/coverage`` use):

- ``answer``: the final answer (the root's output or the answering LLM's output).
- ``answer_llm_input``: the input of the LLM call that produced the answer; without it (and without
  explicit context documents) nothing says what the model saw, so no context can be derived.
- ``document_text``: the text of the retrieved documents; a document with neither text nor a
  registry entry cannot be matched to a quote, nor found in the prompt.
- ``retrieval_step``: the app retrieved (the answering LLM's prompt holds evidence or registry text,
  or the app named its context documents) but traced no retrieval step.
- ``retrieval_output``: a retrieval step ran but its output was not recorded (no documents and no
  output value: content tracing off, an instrumentor that records only the query). Such a step is
  not an empty retrieval: what it returned is unknown, so a unit missing from the candidates may
  have been among its documents.
"""

from __future__ import annotations

from evaluators.builtin._answer import answer_text
from evaluators.builtin._recorded import output_unrecorded, unrecorded_retrievals
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable
from evaluators.text import normalize_doc
from evaluators.trace_view import StepDoc

ANSWER = "answer"
ANSWER_LLM_INPUT = "answer_llm_input"
DOCUMENT_TEXT = "document_text"
RETRIEVAL_STEP = "retrieval_step"
RETRIEVAL_OUTPUT = "retrieval_output"

__all__ = ["output_unrecorded", "unrecorded_retrievals"]  # (re-exported: the field's predicates)

# the layers each missing field leaves unchecked (attribution order)
UNCHECKED: dict[str, tuple[str, ...]] = {
    RETRIEVAL_STEP: ("no_retrieval", "candidate_miss", "dropped_before_context", "invalid_citation"),
    DOCUMENT_TEXT: ("candidate_miss", "dropped_before_context"),
    RETRIEVAL_OUTPUT: ("candidate_miss", "dropped_before_context", "invalid_citation"),
    ANSWER_LLM_INPUT: (
        "no_retrieval", "stale_context", "candidate_miss", "dropped_before_context", "over_refusal",
        "incomplete_answer", "invalid_citation",
    ),
    ANSWER: (
        "answered_unanswerable", "over_refusal", "unsupported_claims", "incomplete_answer", "invalid_citation",
    ),
}  # fmt: skip

WHY = {
    ANSWER: "the trace captured no answer (no output of the root span or of the answering LLM call)",
    ANSWER_LLM_INPUT: (
        "the trace has neither explicit context documents nor the input of the answering LLM call, "
        "so nothing says what the model saw"
    ),
    DOCUMENT_TEXT: "retrieved documents carry neither text nor an id the knowledge-base registry knows",
    RETRIEVAL_STEP: "the answering LLM's prompt holds retrieved text, but no retrieval step was traced",
    RETRIEVAL_OUTPUT: "a retrieval step ran, but the documents it returned were not recorded",
}

# why candidate recall cannot be told when nothing retrieved and nothing the model saw was traced
NO_RETRIEVAL_SEEN = (
    "no retrieval was traced and neither the answering LLM's input nor context documents were, so "
    "whether the evidence was retrieved cannot be told"
)

# registry text shorter than this found in a prompt is no sign of a retrieval (a title, a phrase)
MIN_RETRIEVED_TEXT = 24


def reason(field: str, why: str | None = None) -> str:
    """The reason of a row that a missing field made not applicable."""
    return f"missing {field}: {why or WHY[field]}"


def missing(metric: str, field: str, span_id: str | None = None, why: str | None = None) -> Metric:
    """A ``not_applicable`` row naming the missing field (also in ``details.missing_fields``)."""
    return not_applicable(metric, reason(field, why), span_id, missing_fields=[field])


def has_answer(inp: EvalInput) -> bool:
    return bool(answer_text(inp).strip())


def has_context_stage(inp: EvalInput) -> bool:
    """Explicit context documents, or the input of the answering LLM call."""
    return bool(inp.matching.has_context_stage)


def opaque(inp: EvalInput, doc: StepDoc) -> bool:
    """A document with neither text nor a registry entry that has text."""
    return not inp.matching.content_norm(doc)


def opaque_candidates(inp: EvalInput) -> list[StepDoc]:
    key = "opaque_candidates"
    found = inp._cache.get(key)
    if found is None:
        found = inp._cache[key] = [d for d in inp.trace.candidates if opaque(inp, d)]
    return found


def unverifiable_units(inp: EvalInput) -> tuple[set[int], set[int]]:
    """Evidence units whose candidate and context verdicts hang on documents without text:
    (not found among the candidates while some are opaque, found among the candidates only in
    opaque documents and missing from a derived context)."""
    key = "unverifiable_units"
    found = inp._cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    m = inp.matching
    if not opaque_candidates(inp) or not m.units:
        found = (set(), set())
    else:
        all_units = {u.index for u in m.units}
        by_text = m.units_in([d for d in inp.trace.candidates if not opaque(inp, d)])
        by_id_only = m.in_candidates - by_text
        derived = not inp.trace.has_explicit_context
        found = (all_units - m.in_candidates, (by_id_only - m.in_context) if derived else set())
    inp._cache[key] = found
    return found


def unrecorded_why(inp: EvalInput) -> str:
    """``WHY[RETRIEVAL_OUTPUT]`` with the steps named."""
    steps = unrecorded_retrievals(inp)
    names = ", ".join(f"{s.name or 'retrieval'} ({s.span_id})" for s in steps[:3])
    more = f" and {len(steps) - 3} more" if len(steps) > 3 else ""
    return f"{len(steps)} retrieval step(s) ran without recording the documents they returned: {names}{more}"


def untraced_retrieval(inp: EvalInput) -> str | None:
    """Why the trace looks like it retrieved without tracing it, or None.

    No retrieval step, no tool that returned documents, no opened document, and yet: the app named
    its context documents explicitly, or the answering LLM's prompt holds a gold evidence quote, or
    the text of a registry document (at least ``MIN_RETRIEVED_TEXT`` characters).
    """
    key = "untraced_retrieval"
    if key in inp._cache:
        return inp._cache[key]  # type: ignore[no-any-return]
    found = _untraced(inp)
    inp._cache[key] = found
    return found


def _untraced(inp: EvalInput) -> str | None:
    trace = inp.trace
    if trace.candidates or trace.retrieval_steps:
        return None
    if trace.has_explicit_context:
        return "the app named its context documents, but no retrieval step was traced"
    prompt = trace.prompt_norm
    if not prompt:
        return None
    if inp.matching.quotes_in_prompt:
        return "the answering LLM's prompt holds gold evidence, but no retrieval step was traced"
    step = trace.answer_step
    kb_id = inp.kb.identify(step.input_text) if step is not None and step.input_text else None
    doc = inp.kb.get(kb_id)
    if doc is not None and doc.content:
        text = normalize_doc(doc.content)
        if len(text) >= MIN_RETRIEVED_TEXT and text in prompt:
            return f"the answering LLM's prompt holds registry document {kb_id}, but no retrieval step was traced"
    return None
