"""Is the gold evidence in the knowledge-base registry at all? (layer ``evidence_not_in_kb``; docs/architecture.md, Attribution order)

``evidence_in_kb`` = evidence units (an any_of group is one unit, present when any alternative is)
present in the registry / units. An item is present when:
- it names a ``doc_id``: that id is a registry document (a quote that is not inside that document's
  content is reported in ``details.quote_mismatch`` but does not make the item absent);
- it has only a quote: the quote is inside some registry document's content (normalized text);
- it has only a ``chunk_id``: present when the chunk id is a registry id; otherwise the registry
  cannot tell, the item is *unverifiable*, and a unit made only of unverifiable items is left out of
  the denominator (listed in ``details.unverifiable``) rather than blamed on the knowledge base.
Not applicable without a gold case, without evidence, with an empty registry, or when no unit can
be checked. ``passed``: every checked unit present.
"""

from __future__ import annotations

from typing import Any

from evaluators.eval_input import EvalInput
from evaluators.gold import Evidence
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig
from evaluators.text import normalize_cached, normalize_doc

METRIC = "evidence_in_kb"


def _check(inp: EvalInput, ev: Evidence) -> tuple[bool | None, dict[str, Any]]:
    """(present, notes) of one evidence item; present None when the registry cannot tell."""
    kb = inp.kb
    notes: dict[str, Any] = {}
    if ev.doc_id:
        doc = kb.get(ev.doc_id)
        if doc is None:
            if ev.quote:
                other = kb.identify(ev.quote)
                if other:
                    notes["quote_found_in"] = other
            return False, notes
        if ev.quote and doc.content and normalize_cached(ev.quote) not in normalize_doc(doc.content):
            notes["quote_mismatch"] = ev.doc_id
        return True, notes
    if ev.quote:
        found = kb.identify(ev.quote)
        if found:
            notes["found_in"] = found
        return found is not None, notes
    if ev.chunk_id and kb.get(ev.chunk_id) is not None:
        return True, notes
    return None, notes


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    if inp.case is None:
        return [not_applicable(METRIC, "no gold case")]
    units = inp.matching.units
    if not units:
        return [not_applicable(METRIC, "no gold evidence")]
    if len(inp.kb) == 0:
        return [not_applicable(METRIC, "empty knowledge-base registry")]
    present: list[str] = []
    absent: list[dict[str, Any]] = []
    unverifiable: list[str] = []
    mismatches: list[str] = []
    for u in units:
        results = [_check(inp, ev) for ev in u.items]
        for _, notes in results:
            if "quote_mismatch" in notes:
                mismatches.append(notes["quote_mismatch"])
        verdicts = [r for r, _ in results]
        if any(v is True for v in verdicts):
            present.append(u.label)
        elif any(v is False for v in verdicts):
            entry: dict[str, Any] = u.describe()
            elsewhere = [n["quote_found_in"] for _, n in results if "quote_found_in" in n]
            if elsewhere:
                entry["quote_found_in"] = elsewhere
            absent.append(entry)
        else:
            unverifiable.append(u.label)
    checked = len(present) + len(absent)
    details = {
        "absent": absent,
        "present": present,
        "unverifiable": unverifiable,
        "quote_mismatch": mismatches,
    }
    return [
        ratio(
            METRIC,
            len(present),
            checked,
            passed=not absent,
            details=details,
            na_reason="no evidence unit can be checked against the registry (chunk ids only)",
        )
    ]


SPEC = EvaluatorSpec(
    name="evidence_kb",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("trace",),
    tier="cheap",
    needs_case=True,
    description="Share of gold evidence units whose document is in the knowledge-base registry.",
)
