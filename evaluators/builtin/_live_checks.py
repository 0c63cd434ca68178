"""The four rules of ``live_evidence`` (the module's docstring says what each claims), each a row
from what ``LiveTrace`` worked out for the trace."""

from __future__ import annotations

from typing import Any

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import doc_content
from evaluators.builtin._docs import doc_key, doc_name
from evaluators.builtin._live_inputs import LiveTrace
from evaluators.builtin._registry_index import terms_of
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.trace_view import StepDoc


def _flag(metric: str, found: list[dict[str, Any]], **details: Any) -> Metric:
    n = float(len(found))
    return Metric(metric, value=n, numerator=n, passed=not found, label=_via(found),
                  details={"found": found, **details})  # fmt: skip


def _via(found: list[dict[str, Any]]) -> str | None:
    """What the findings rest on: ``answer_claim``, ``question`` or both (``answer_claim+question``);
    the view asks the answer-support tier to agree on a claim."""
    return "+".join(sorted({f["via"] for f in found if "via" in f})) or None


def no_retrieval(t: LiveTrace) -> Metric:
    metric = "live_no_retrieval"
    trace = t.inp.trace
    if trace.candidates or trace.retrieval_steps:
        return not_applicable(metric, "retrieval ran")
    if len(t.q) < t.config.min_shared_terms:
        return not_applicable(metric, "no question to match")
    if not len(t.inp.kb):
        return not_applicable(metric, "empty registry")
    found = []
    for doc_id, score in t.index.search(t.q, t.config.search_k):
        hit = t.covers(t.index.terms(doc_id))
        if hit is not None and t.usable(doc_id):
            found.append({"doc_id": doc_id, "score": round(score, 3), "coverage": round(hit[0], 3),
                          "terms": sorted(hit[1])})  # fmt: skip
    return _flag(metric, found, question=t.question)


def _open(q: frozenset[str], term_sets: list[frozenset[str]]) -> frozenset[str]:
    """The question terms none of the term sets carries (the part of the question left open)."""
    return frozenset(x for x in q if not any(x in ts for ts in term_sets))


def _returned(t: LiveTrace) -> list[StepDoc]:
    """Every document a retrieval returned: candidates, the context, and what a search agent's
    searches listed without opening (``surfaced``: a document it had and left is ``not_opened``, a
    layer that needs a reference, not a candidate miss)."""
    trace = t.inp.trace
    return [*trace.candidates, *trace.context_docs, *trace.docs("surfaced")]


def _retrieved_ids(t: LiveTrace) -> set[str]:
    inp = t.inp
    out: set[str] = set()
    for d in _returned(t):
        out.update(x for x in (inp.matching.kb_id(d), d.doc_id, d.chunk_id) if x)
    return out


def candidate_miss(t: LiveTrace) -> Metric:
    metric = "live_candidate_miss"
    inp, cfg = t.inp, t.config
    cands = inp.trace.candidates
    if not cands:
        return not_applicable(metric, "no retrieval ran")
    if not len(inp.kb):
        return not_applicable(metric, "empty registry")
    if not all(doc_content(inp, d) for d in cands):
        # a candidate without text may hold what the registry document holds: nothing can be said
        return needs.missing(metric, needs.DOCUMENT_TEXT)
    texts = [doc_content(inp, d) for d in _returned(t)]
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    retrieved: set[str] | None = None  # worked out on the first document to check (most traces have none)

    def missed(doc_id: str) -> bool:
        nonlocal retrieved
        if retrieved is None:
            retrieved = _retrieved_ids(t)
        return doc_id not in retrieved and doc_id not in seen and t.usable(doc_id)

    retrieved_claims = t.retrieved_claims
    for claim in t.unsupported:  # the fact the answer needed, in a document no retrieval returned
        if claim in retrieved_claims:
            continue
        for doc_id, score in t.index.search(terms_of(claim) | t.q, cfg.search_k):
            dterms = t.index.terms(doc_id)
            if len(t.q & dterms) < cfg.min_shared_terms or not missed(doc_id):
                continue
            doc = inp.kb.get(doc_id)
            sentence = t.holds(claim, (doc.content or "") if doc else "")
            if sentence is not None:
                seen.add(doc_id)
                found.append({"doc_id": doc_id, "via": "answer_claim", "claim": claim, "sentence": sentence,
                              "score": round(score, 3)})  # fmt: skip
                break
    gap = _open(t.q, [terms_of(x) for x in texts if x])
    if gap:  # the part of the question retrieval left open, in a document it did not return
        covered = t.q - gap
        for doc_id, score in t.index.search(t.q, cfg.search_k):
            dterms = t.index.terms(doc_id)
            filled = gap & dterms
            if (
                filled
                and len(t.q & dterms) >= cfg.min_shared_terms
                and len(covered | filled) / len(t.q) >= cfg.min_combined_coverage
                and (filled - t.a or t.failed)
                and missed(doc_id)
            ):
                seen.add(doc_id)
                found.append({"doc_id": doc_id, "via": "question", "gap": sorted(gap), "filled": sorted(filled),
                              "score": round(score, 3)})  # fmt: skip
    return _flag(metric, found, question=t.question)


def _cut(t: LiveTrace) -> list[StepDoc]:
    """Candidates that did not reach the final context (distinct, in rank order)."""
    inp = t.inp
    kept = {doc_key(inp, d) for d in inp.trace.context_docs}
    prompt = inp.trace.prompt_norm if not inp.trace.has_explicit_context else ""
    out, seen = [], set()
    for d in inp.trace.candidates:
        k = doc_key(inp, d)
        if k in kept or k in seen:
            continue
        seen.add(k)
        norm = inp.matching.content_norm(d)
        if not norm or (prompt and norm in prompt):
            continue  # no text to judge by, or it is in the prompt after all
        out.append(d)
    return out


def _cut_by(t: LiveTrace, doc: StepDoc) -> tuple[str, str | None]:
    """The step that cut a candidate: the first reranker whose input held it and whose recorded
    output did not, else the answering LLM call (it never reached the prompt)."""
    inp = t.inp
    key = doc_key(inp, doc)
    for step in inp.trace.steps_of("rerank"):
        outputs = inp.trace.docs("reranked", step.span_id)
        if not outputs:
            continue
        inputs = inp.trace.docs("rerank_input", step.span_id) or inp.trace.candidates
        if key in {doc_key(inp, d) for d in inputs} and key not in {doc_key(inp, d) for d in outputs}:
            return "rerank_cut", step.span_id
    answer = inp.trace.answer_step
    return "not_in_prompt", answer.span_id if answer is not None else None


def dropped(t: LiveTrace) -> Metric:
    metric = "live_dropped"
    inp, cfg = t.inp, t.config
    if not inp.trace.candidates:
        return not_applicable(metric, "no retrieval ran")
    if not t.saw:
        return needs.missing(metric, needs.ANSWER_LLM_INPUT)
    cut = _cut(t)
    if not cut:
        return ratio(metric, 0, 0, na_reason="no candidate was cut before the prompt")
    gap = _open(t.q, [terms_of(x) for x in t.ctx.sentences])
    failed = t.refused or bool(t.failed)
    held = {id(d): (claim, sentence) for claim, docs in t.retrieved_claims.items() for d, sentence in docs}
    found: list[dict[str, Any]] = []
    for d in cut:
        text = doc_content(inp, d)
        entry: dict[str, Any] | None = None
        if id(d) in held:  # it holds a fact of the answer that the context does not
            entry = {"via": "answer_claim", "claim": held[id(d)][0], "sentence": held[id(d)][1]}
        elif failed and gap:
            dterms = terms_of(text)
            filled = gap & dterms
            if len(t.q & dterms) >= cfg.min_shared_terms and len(filled) / len(gap) >= cfg.min_gap_fill:
                entry = {"via": "question", "gap": sorted(gap), "filled": sorted(filled)}
        if entry is not None:
            step, span_id = _cut_by(t, d)
            found.append({"doc_id": doc_name(inp, d), "step": step, "span_id": span_id,
                          "candidate_span_id": d.span_id, "candidate_rank": d.position + 1, **entry})  # fmt: skip
    return ratio(metric, len(found), len(cut), passed=not found, label=_via(found),
                 details={"found": found, "cut": len(cut)})  # fmt: skip


def over_refusal(t: LiveTrace) -> Metric:
    metric = "live_over_refusal"
    inp = t.inp
    if not t.answer.strip():
        return needs.missing(metric, needs.ANSWER)
    if not t.refused:
        return not_applicable(metric, "answered")
    if not t.saw:
        return needs.missing(metric, needs.ANSWER_LLM_INPUT)
    if len(t.q) < t.config.min_shared_terms:
        return not_applicable(metric, "no question to match")
    pieces: list[tuple[str | None, str]] = []
    if t.ctx.source == "context":
        pieces = [(doc_name(inp, d), doc_content(inp, d)) for d in inp.trace.context_docs]
    else:
        s = t.ctx.sentences
        pieces = [(None, " ".join(s[i : i + 3])) for i in range(max(1, len(s) - 2))]
    found = []
    for name, text in pieces:
        hit = t.covers(terms_of(text)) if text else None
        if hit is not None:
            found.append(
                {"doc_id": name, "text": text[:300], "coverage": round(hit[0], 3), "terms": sorted(hit[1])}
            )
    return _flag(metric, found[:3], question=t.question, answer=t.answer[:300])
