"""What a trace without a gold case proves, with the registry, about four layers (read by the view
``live_attribution``; docs/architecture.md, Live traffic and Attribution order).

Without a reference nothing says what the evidence was, so each row claims a failure only when the
trace (and the knowledge-base registry) shows the evidence itself, and names it; when the evidence
is not strong enough the row passes ("nothing seen"), and when the trace lacks what the check needs
it is not applicable with the missing field named. Precision comes first: a claim must hold on
traffic nobody labelled.

Terms are the registry index's (``_registry_index.terms_of``: stemmed English words, CJK bigrams,
identifiers); "the question" is the user's question, its terms ``Q``. A registry document counts
only when it is current at the trace time (not superseded or expired, as ``freshness`` judges a
registry row) and visible to the caller (when the trace names the caller's scopes). A document
*holds* an answer claim (``_live_inputs.LiveTrace.holds``) when the claim checker (``lexical.check_claim``) finds a
sentence of it that supports the claim and it is about the claim's subject and action (the question terms the answer
sentence repeats, most of that sentence). A *failed* claim is one the claim checker finds contradicted
or unsupported by the context, as ``answer_support`` asks it (an undecided claim is neither); an *unsupported* one a failed claim no context
sentence contradicts either (the context says nothing of it). The view also asks the
answer-support tier (the judge where it ran) to agree that the answer failed.

- ``live_no_retrieval``: the trace retrieved nothing (no retrieval step, no candidates) and registry
  documents cover the question: each carries ``min_question_coverage`` of ``Q`` (at least
  ``min_shared_terms`` terms, every identifier of the question). Value = such documents. The view
  also requires ``retrieval_decision`` to say the retrieval was skipped (not untraced).
- ``live_candidate_miss``: retrieval ran, and a registry document no retrieval returned either
  holds an unsupported claim no candidate holds (the fact the answer needed was in the registry),
  or fills the part of the question the candidates leave open: it carries question terms no
  candidate carries (the gap), so that the candidates and it together carry
  ``min_combined_coverage`` of ``Q`` (a document that only shares the question's topic words, not
  what it asks, does not get there), and the answer does not state those terms (or states failed
  claims). The document must share ``min_shared_terms`` terms with the question.
  Value = such documents; ``label`` says what they rest on (``answer_claim``, ``question``).
- ``live_dropped``: a candidate that did not reach the final context (``rerank_cut`` by a reranker,
  or ``not_in_prompt``) either holds a failed claim, or — when the answer refused or states failed
  claims — fills ``min_gap_fill`` of the question terms the context leaves open.
  Value = cut candidates holding such evidence / cut candidates.
- ``live_over_refusal``: the answer is a refusal while a context document (or, for a context read
  from the prompt, three consecutive sentences of it) covers the question as above.

``passed`` is false when the layer is claimed; ``details.found`` names the documents, the claim or
the question terms, the deciding sentence and, for a drop, the step that cut the document. Traces
with a gold case get no rows: ``attribution`` speaks for them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evaluators.builtin._live_checks import candidate_miss, dropped, no_retrieval, over_refusal
from evaluators.builtin._live_inputs import LiveTrace
from evaluators.eval_input import EvalInput
from evaluators.lexical import DEFAULT_MIN_COVERAGE
from evaluators.metric import Metric
from evaluators.spec import EvaluatorSpec, Regexes


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_question_coverage: float = Field(
        0.6,
        gt=0,
        le=1,
        description="Share of the question's terms a document must carry to cover the question.",
    )
    min_shared_terms: int = Field(
        2, ge=1, description="Question terms a document must carry at least, whatever the shares."
    )
    min_gap_fill: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Share of the question terms the context leaves open that a cut candidate must carry.",
    )
    min_combined_coverage: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Share of the question's terms the candidates and a missed document must carry together.",
    )
    min_evidence_share: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Share of a claim's answer sentence (its terms counted, and weighted by registry idf) a document must carry to hold its fact.",
    )
    search_k: int = Field(10, ge=1, description="Registry documents looked at per question or claim.")
    min_coverage: float = Field(
        DEFAULT_MIN_COVERAGE, gt=0, le=1, description="Claim support threshold (as answer_support's)."
    )
    extra_refusal_patterns: Regexes = Field(
        (), description="Extra refusal/hedge patterns (as answer_support's)."
    )


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    if inp.case is not None:
        return []  # a trace with a gold case is attributed against it (the attribution view)
    t = LiveTrace(inp, config)
    return [no_retrieval(t), candidate_miss(t), dropped(t), over_refusal(t)]


SPEC = EvaluatorSpec(
    name="live_evidence",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("trace",),
    tier="cheap",
    needs_case=False,
    description="Without a gold case: no retrieval, candidate miss, drop before the context and over-refusal, "
    "claimed only on evidence the trace and the registry show.",
)
