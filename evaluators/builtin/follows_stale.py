"""Follows stale (docs/architecture.md, Experiments): does the answer state a value that only a stale version
of a document holds?

The stale versions of a trace are its stale candidates and context documents (``freshness``'s
``staleness``) and the registry documents superseded by one of its case's evidence documents (a
stale version the system never retrieved: an answer that states its value learnt it elsewhere).
The current versions are the fresh context documents and the case's evidence documents. A value is
a quantity of the lexical checker: a number with its unit (``7 天``, ``30 days``, ``$20``).

Metric ``follows_stale`` per trace: 1 when the answer states at least one value found in a stale
version and in no current one, else 0 (numerator the same, denominator 1, so a run's micro value is
the share of traces that follow a stale version); ``details`` list those values, the stale versions,
and whether a stale version was retrieved and reached the context. Not applicable without an
answer, or when the trace has no stale version at all. ``passed`` stays NULL: it is a flag, not an
attribution layer (``stale_context`` is that layer).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from evaluators import lexical
from evaluators.builtin._docs import distinct, doc_name, per_registry
from evaluators.builtin.freshness import staleness_memo
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import AnyOf, Evidence, KBDocument
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig


def _evidence_ids(inp: EvalInput) -> set[str]:
    out: set[str] = set()
    for item in inp.case.evidence if inp.case else ():
        for ev in item.any_of if isinstance(item, AnyOf) else [item]:
            if isinstance(ev, Evidence) and ev.doc_id:
                out.add(ev.doc_id)
    return out


def _superseded(kb: KnowledgeBase) -> dict[str, list[tuple[int, KBDocument]]]:
    """The registry documents with content that a successor supersedes, by successor id, each with
    its place in the registry."""
    out: dict[str, list[tuple[int, KBDocument]]] = {}
    for i, doc in enumerate(kb.by_id.values()):
        if doc.superseded_by and doc.content:
            out.setdefault(doc.superseded_by, []).append((i, doc))
    return out


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    trace = inp.trace
    evidence = _evidence_ids(inp)
    stale: dict[str, str] = {}  # name -> content
    current: dict[str, str] = {}
    retrieved_stale: set[str] = set()
    context_stale: set[str] = set()
    stale_of = staleness_memo(inp)
    for stage, docs in (
        ("candidate", distinct(inp, trace.candidates)),
        ("context", distinct(inp, trace.context_docs)),
    ):
        for d in docs:
            stale_or_fresh = stale_of(d)
            if stage == "context" or stale_or_fresh:
                kb_doc = inp.matching.kb_doc(d)
                text = d.content or (kb_doc.content if kb_doc is not None else None) or ""
                name = doc_name(inp, d)
                if stale_or_fresh:
                    stale[name] = text
                    (retrieved_stale if stage == "candidate" else context_stale).add(name)
                else:
                    current[name] = text
    for doc_id in sorted(evidence):
        kb_doc = inp.kb.get(doc_id)
        if kb_doc is not None and kb_doc.content:
            current.setdefault(doc_id, kb_doc.content)
    if evidence:
        index = per_registry(inp, ("follows_stale.superseded",), lambda: _superseded(inp.kb))
        found = [pair for doc_id in evidence for pair in index.get(doc_id, ())]
        found.sort(key=itemgetter(0))  # the registry's order, as a scan of it finds them
        for _, doc in found:
            if doc.doc_id not in current:
                stale.setdefault(doc.doc_id, doc.content or "")
    if not stale:
        return [not_applicable("follows_stale", "no stale version among the documents or of the evidence")]
    answer = trace.answer_text
    if not answer:
        return [not_applicable("follows_stale", "no answer captured")]
    cur_q: set[lexical.Quantity] = set()
    for text in current.values():
        cur_q |= lexical.quantity_set(text)
    # the answer's values no current version holds, in the answer's order
    stated = [q for q in lexical.quantities_of(answer) if q not in cur_q]
    followed: dict[str, list[str]] = {}
    if stated:
        for name, text in stale.items():
            held = lexical.quantity_set(text)
            only = [str(q) for q in stated if q in held]
            if only:
                followed[name] = only
    values = sorted({v for vs in followed.values() for v in vs})
    details: dict[str, Any] = {
        "values": values,
        "followed": followed,
        "stale_versions": sorted(stale),
        "stale_retrieved": bool(retrieved_stale),
        "stale_in_context": bool(context_stale),
    }
    return [ratio("follows_stale", 1 if values else 0, 1, details=details)]


SPEC = EvaluatorSpec(
    name="follows_stale",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("trace",),
    tier="cheap",
    needs_case=False,
    description="The answer states a value (number with its unit) found only in a stale version of a document.",
)
