"""Duplicates (docs/architecture.md, Evaluators and metrics): candidates that repeat one already ranked higher in the same step.

``duplicate_candidates`` per retrieval step: candidates whose chunk id, or whose normalized content
(NFKC, case-folded, whitespace and punctuation removed), equals that of a candidate ranked higher
in the same step / candidates. Two chunks of one source document are not duplicates (the document
id is shared by design); a candidate without chunk id and content is never a duplicate.
The trace row is micro over the steps (sum of repeats / sum of candidates); a document that two
retrieval steps both return is not a repeat there, it is counted in ``details.cross_step_repeats``.
A flag: ``passed`` stays NULL. Not applicable without a retrieval step or with no candidates.
"""

from __future__ import annotations

from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig
from evaluators.text import normalize_doc
from evaluators.trace_view import StepDoc

METRIC = "duplicate_candidates"


def _keys(doc: StepDoc) -> list[tuple[str, str]]:
    keys = []
    if doc.chunk_id:
        keys.append(("chunk_id", doc.chunk_id))
    norm = normalize_doc(doc.content)
    if norm:
        keys.append(("content", norm))
    return keys


def repeats(docs: list[StepDoc], keys_of: list[list[tuple[str, str]]] | None = None) -> list[dict[str, Any]]:
    """Each candidate that repeats a higher-ranked one: its rank, the rank it repeats, and how."""
    first: dict[tuple[str, str], int] = {}
    out = []
    for rank, d in enumerate(docs, start=1):
        keys = keys_of[rank - 1] if keys_of is not None else _keys(d)
        hit = next(((k, first[k]) for k in keys if k in first), None)
        if hit is not None:
            entry = {"rank": rank, "repeats_rank": hit[1], "by": hit[0][0]}
            if d.chunk_id or d.doc_id:
                entry["id"] = d.chunk_id or d.doc_id
            out.append(entry)
        for k in keys:
            first.setdefault(k, rank)
    return out


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    steps = inp.trace.candidates_by_step
    if not steps:
        return [not_applicable(METRIC, "no retrieval step")]
    out: list[Metric] = []
    total_rep = total = 0
    seen_by_step: dict[tuple[str, str], str] = {}
    cross = 0
    for step, docs in steps:
        keys_of = [_keys(d) for d in docs]
        reps = repeats(docs, keys_of)
        total_rep += len(reps)
        total += len(docs)
        out.append(
            ratio(
                METRIC,
                len(reps),
                len(docs),
                span_id=step.span_id,
                details={"repeats": reps},
                na_reason="no candidates",
            )
        )
        sid = step.span_id
        cross += sum(1 for keys in keys_of if any(seen_by_step.get(k, sid) != sid for k in keys))
        for keys in keys_of:
            for k in keys:
                seen_by_step.setdefault(k, sid)
    out.append(
        ratio(
            METRIC,
            total_rep,
            total,
            label="micro over retrieval steps",
            details={"steps": len(steps), "cross_step_repeats": cross},
            na_reason="no candidates",
        )
    )
    return out


SPEC = EvaluatorSpec(
    name="duplicates",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("retrieval", "trace"),
    tier="cheap",
    needs_case=False,
    description="Share of candidates repeating a chunk or content ranked higher in the same step.",
)
