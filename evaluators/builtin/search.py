"""Deep-search agents: evidence surfaced but never opened (stages ``surfaced`` and
``opened``; layer ``not_opened``: docs/architecture.md, Attribution order).

``evidence_opened`` (trace, with a gold case): evidence units a search surfaced that the agent then
had the text of (it opened the result, or retrieved the document otherwise: the unit is among the
candidates) / evidence units a search surfaced. ``passed`` when every surfaced unit was opened.
A unit is surfaced when a ``surfaced`` document matches it (by id or url, as any step document:
docs/architecture.md, Evidence and matching) or one of its quotes is inside a result's title or snippet. Not applicable without a
gold case, without evidence, when no search listed results (``surfaced``), or when no unit was
surfaced. Details: ``not_opened`` (each unit with the search span and 1-based rank it was listed
at) and ``opened``.

How it relates to ``candidate_miss``: an opened document is a candidate, so evidence that was
opened is found among the candidates; evidence only surfaced is not a candidate, but it is no
retrieval miss either — the search found it and the agent did not read it — so ``candidate_recall``
does not fail for it (its value still counts it as not found) and this row fails instead.
"""

from __future__ import annotations

from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig
from evaluators.text import normalize, normalize_cached

METRIC = "evidence_opened"


def surfaced_units(inp: EvalInput) -> dict[int, dict[str, Any]]:
    """Each evidence unit a search listed, with the first search span and rank that listed it."""
    key = "surfaced_units"
    found = inp._cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    found = {}
    m = inp.matching
    docs = inp.trace.docs("surfaced")
    if docs and m.units:
        quotes = [
            (u.index, normalize_cached(e.quote))
            for u in m.units
            for e in u.items
            if e.quote and normalize_cached(e.quote)
        ]
        for d in docs:
            units = set(m.units_of_doc(d))
            if quotes and d.metadata:
                listed = normalize(" ".join(str(d.metadata.get(k) or "") for k in ("title", "snippet")))
                units |= {u for u, q in quotes if listed and q in listed}
            for u in units:
                found.setdefault(u, {"span_id": d.span_id, "rank": d.position + 1, "doc_id": d.doc_id})
    inp._cache[key] = found
    return found


def surfaced_not_opened(inp: EvalInput) -> set[int]:
    """Units a search surfaced that are not among the candidates (never opened nor retrieved)."""
    return set(surfaced_units(inp)) - inp.matching.in_candidates


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    if inp.case is None:
        return [not_applicable(METRIC, "no gold case")]
    m = inp.matching
    if not m.units:
        return [not_applicable(METRIC, "no gold evidence")]
    if not inp.trace.docs("surfaced"):
        return [not_applicable(METRIC, "no search results surfaced")]
    surfaced = surfaced_units(inp)
    if not surfaced:
        return [not_applicable(METRIC, "no evidence unit surfaced")]
    missing = surfaced_not_opened(inp)
    opened = sorted(set(surfaced) - missing)
    return [
        ratio(
            METRIC,
            len(opened),
            len(surfaced),
            passed=not missing,
            details={
                "not_opened": [{**m.unit(u).describe(), **surfaced[u]} for u in sorted(missing)],
                "opened": [m.unit(u).label for u in opened],
            },
        )
    ]


SPEC = EvaluatorSpec(
    name="search",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("trace",),
    tier="cheap",
    needs_case=True,
    description="Search agents: evidence a search listed (surfaced) that the agent opened / evidence surfaced.",
)
