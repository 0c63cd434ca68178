"""The root causes of attribution, in one table: each cause's name, the layer of the pipeline it
blames, its place in the attribution order, whether live attribution (no gold case) can name it,
the metrics behind it and what it means (docs/architecture.md, Attribution order).

The views stay plain SQL a user can read and change: ``attribution.sql`` and
``live_attribution.sql`` list their layers in this order, and the statements that sort by cause
(``root_causes.sql``, the dashboard's, the report's and triage's) spell the order as a list literal.
Python reads the table itself: the web UI's cause lists, the triage promotion's accepted causes and
the gate's ``layer:`` and ``root_cause:`` metrics. ``tests/attribution/test_taxonomy.py`` checks
that every one of those places agrees with this table, so the order is changed here and there
together or the suite fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OK = "ok"
"""attribution's outcome when nothing failed and the trace could tell."""
NONE_SEEN = "none_seen"
"""live_attribution's outcome when nothing failed: without a reference, never ``ok``."""


@dataclass(frozen=True, slots=True)
class Cause:
    """One failing layer that can be a trace's root cause. ``live``: live_attribution can prove it
    without a gold case (the others need a reference: evidence, facts, answerability)."""

    name: str
    layer: str
    live: bool
    metrics: tuple[str, ...]
    description: str


CAUSES: tuple[Cause, ...] = (
    Cause("permission_violation", "access", True, ("permission_violations",),
          "a document outside the user scope reached the candidates"),
    Cause("no_retrieval", "retrieval", True, ("retrieval_decision",),
          "the case must retrieve and no retrieval step ran"),
    Cause("evidence_not_in_kb", "knowledge_base", False, ("evidence_in_kb",),
          "required evidence is absent from the knowledge-base registry"),
    Cause("stale_context", "freshness", True, ("stale_context",),
          "a stale document reached the final context"),
    Cause("candidate_miss", "retrieval", True, ("candidate_recall",),
          "required evidence is missing from the candidates"),
    Cause("not_opened", "retrieval", False, ("evidence_opened",),
          "a search agent's results surfaced the evidence but the agent never opened it"),
    Cause("dropped_before_context", "context", True, ("context_retention",),
          "evidence among the candidates is not in the final context"),
    Cause("answered_unanswerable", "generation", False, ("answerability",),
          "no answer exists and the system answered"),
    Cause("over_refusal", "generation", True, ("answerability",),
          "answerable, evidence in context, and the system refused"),
    Cause("unsupported_claims", "generation", True, ("answer_support", "judge_answer_support"),
          "the answer states claims the context does not support"),
    Cause("incomplete_answer", "generation", False, ("facts_missing_in_context",),
          "required facts are missing from the answer although in context"),
    Cause("invalid_citation", "citation", True, ("citation_validity", "judge_citation_support"),
          "a citation points outside the context or does not support its sentence"),
    Cause("insufficient_trace", "trace", True, ("trace_sufficiency",),
          "no layer above failed, but some could not be checked: the trace lacks what they need"),
)  # fmt: skip
"""Every cause, in the attribution order: the root cause is the first failing one."""

LAYERS: tuple[str, ...] = tuple(dict.fromkeys(c.layer for c in CAUSES))
"""The layers the causes blame, in the order their first cause comes."""


def cause_names() -> tuple[str, ...]:
    """The failing layers attribution can name, in order (``failing_layers`` holds these)."""
    return tuple(c.name for c in CAUSES)


def attribution_order() -> tuple[str, ...]:
    """The ``root_cause`` values of ``attribution`` in order: every cause, then ``ok``."""
    return (*cause_names(), OK)


def live_order() -> tuple[str, ...]:
    """The ``root_cause`` values of ``live_attribution`` in order: the causes live traffic can
    prove, then ``none_seen``."""
    return (*(c.name for c in CAUSES if c.live), NONE_SEEN)


# the same names as a type, for request models that accept a root cause (a Literal must be spelt out;
# the taxonomy test holds it equal to ``attribution_order()``)
RootCause = Literal[
    "permission_violation", "no_retrieval", "evidence_not_in_kb", "stale_context", "candidate_miss",
    "not_opened", "dropped_before_context", "answered_unanswerable", "over_refusal", "unsupported_claims",
    "incomplete_answer", "invalid_citation", "insufficient_trace", "ok",
]  # fmt: skip


def cause(name: str) -> Cause:
    """The cause of this name; ``KeyError`` naming the known ones when there is none."""
    for c in CAUSES:
        if c.name == name:
            return c
    raise KeyError(f"no root cause {name!r}; the causes are: {', '.join(cause_names())}")
