"""Citation validity (docs/architecture.md, Evaluators and metrics): the ids an answer cites must be in the context the model saw.

``citation_validity`` on the answering LLM step: cited ids found in the context / cited ids;
``passed`` when all are. Cited ids: the ``ragfault.answer.citations`` attribute of any step, plus
bracket markers in the answer (``[retry-v2]``, ``【retry-v2】``) that name a document the trace or the
registry knows (so "[1]" or "[sic]" count only when such a document exists). A cited id is in the
context when a context document answers to it: its chunk id, its document id, the registry id it
was identified as, or a source id in its metadata (a chunk cited by its source document id). When
the trace does not show what the model saw (no context documents and no LLM input), the candidates
stand in. Not applicable without citations, and, naming the missing field, when an id cited outside
a derived context may have come from a retrieval the trace did not trace (``retrieval_step``) or whose
output it did not record (``retrieval_output``). Details: the valid and the invalid ids.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import answer_text, source_ids
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec

_MARKER = re.compile(
    r"[\[【]\s*([^\[\]【】\s,;，；]{1,120}(?:\s*[,;，；]\s*[^\[\]【】\s,;，；]{1,120})*)\s*[\]】]"
)


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_markers: bool = Field(True, description="Read [doc-id] markers in the answer as citations.")


def _markers(answer: str) -> list[str]:
    out: list[str] = []
    for m in _MARKER.finditer(answer):
        for part in re.split(r"\s*[,;，；]\s*", m.group(1)):
            if part and part not in out:
                out.append(part)
    return out


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    trace = inp.trace
    step = trace.answer_step
    sid = step.span_id if step is not None else None
    if trace.context_docs or inp.matching.has_context_stage:
        context = trace.context_docs
        stage = "context"
    else:
        context = trace.candidates
        stage = "candidates"
    cited: list[str] = list(trace.citations)
    from_markers: list[str] = []
    markers = _markers(answer_text(inp)) if config.answer_markers else []
    if not cited and not markers:
        return [not_applicable("citation_validity", "no citations", span_id=sid)]
    context_ids: set[str] = set()
    for d in context:
        context_ids |= source_ids(inp, d)
    if markers:
        # a marker counts when a document of the trace or the registry knows it; the ids of every
        # document are gathered only for a marker that neither the context nor the registry knows
        known: set[str] | None = None
        for m in markers:
            if m in cited:
                continue
            if m not in context_ids and inp.kb.get(m) is None:
                if known is None:
                    known = set()
                    for d in trace.documents:
                        known |= source_ids(inp, d)
                if m not in known:
                    continue
            cited.append(m)
            from_markers.append(m)
    if not cited:
        return [not_applicable("citation_validity", "no citations", span_id=sid)]
    valid = [c for c in cited if c in context_ids]
    invalid = [c for c in cited if c not in context_ids]
    if invalid and not trace.has_explicit_context:
        # the context was derived from the documents the trace recorded; a retrieval it did not
        # trace, or whose output it did not record, may have put the cited document in the prompt
        untraced = needs.untraced_retrieval(inp)
        if untraced:
            return [needs.missing("citation_validity", needs.RETRIEVAL_STEP, sid, untraced)]
        if needs.unrecorded_retrievals(inp):
            return [
                needs.missing("citation_validity", needs.RETRIEVAL_OUTPUT, sid, needs.unrecorded_why(inp))
            ]
        if not needs.has_context_stage(inp):
            # no context documents and no input of the answering call: nothing says what the
            # model saw, so a cited document cannot be called outside it
            return [needs.missing("citation_validity", needs.ANSWER_LLM_INPUT, sid)]
    return [
        ratio(
            "citation_validity",
            len(valid),
            len(cited),
            span_id=sid,
            passed=not invalid,
            details={
                "valid": valid,
                "invalid": invalid,
                "from_answer_markers": from_markers,
                "checked_against": stage,
            },
        )
    ]


SPEC = EvaluatorSpec(
    name="citations",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("llm",),
    tier="cheap",
    needs_case=False,
    description="Cited document ids must be among the documents in the model's context.",
)
