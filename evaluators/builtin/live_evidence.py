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
*holds* an answer claim (``_Trace.holds``) when the claim checker (``lexical.check_claim``) finds a
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

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evaluators.base import EvalInput, EvaluatorSpec, Metric, Regexes, StepDoc, not_applicable, ratio
from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import answer_text, context_sentences, doc_content, query_text
from evaluators.builtin._docs import doc_key, doc_name
from evaluators.builtin._registry_index import RegistryIndex, is_current, registry_index, terms_of
from evaluators.lexical import DEFAULT_MIN_COVERAGE, is_refusal, sentences, split_claims
from evaluators.lexical.claims import check_claim
from evaluators.text import normalize


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


class _Trace:
    """What every rule reads, worked out once a trace."""

    def __init__(self, inp: EvalInput, config: Config) -> None:
        self.inp = inp
        self.config = config
        self.question = query_text(inp)
        self.q = terms_of(self.question) if self.question.strip() else frozenset()
        self.ids = frozenset(t for t in self.q if t.startswith("#"))
        self.answer = answer_text(inp)
        self.a = terms_of(self.answer) if self.answer.strip() else frozenset()
        self.refused = bool(self.answer.strip()) and is_refusal(self.answer, config.extra_refusal_patterns)
        self.ctx = context_sentences(inp)
        self.saw = self.ctx.source in ("context", "prompt")  # what the model saw is known
        self.answer_sentences = sentences(self.answer) if self.answer.strip() else []
        self.claims = split_claims(self.answer, config.extra_refusal_patterns) if self.answer.strip() else []
        # claims no context sentence supports (``failed``: looked for among the cut candidates), and
        # among them those the context says nothing of (``unsupported``: looked for in the registry;
        # a claim the context contradicts was generated against what the model saw, and a registry
        # document stating it is no sign that retrieval missed it)
        self.failed: list[str] = []
        self.unsupported: list[str] = []
        if self.saw:
            for c in self.claims:
                label = check_claim(c, self.ctx.sentences, config.min_coverage, ignore=self.question).label
                if label in ("contradicted", "unsupported"):  # undecided: no claim either way
                    self.failed.append(c)
                    if label == "unsupported":
                        self.unsupported.append(c)
        self._index: RegistryIndex | None = None
        self._retrieved_claims: dict[str, list[tuple[StepDoc, str]]] | None = None
        self._units: dict[str, frozenset[str]] = {}

    @property
    def index(self) -> RegistryIndex:
        if self._index is None:
            self._index = registry_index(self.inp.kb)
        return self._index

    @property
    def retrieved_claims(self) -> dict[str, list[tuple[StepDoc, str]]]:
        """The failed claims some candidate holds (``holds``), with each candidate holding it
        and the sentence: their fact was retrieved, so retrieval did not miss it (it may have been
        dropped before the prompt)."""
        if self._retrieved_claims is None:
            found: dict[str, list[tuple[StepDoc, str]]] = {}
            docs = [(d, doc_content(self.inp, d)) for d in self.inp.trace.candidates] if self.failed else []
            for claim in self.failed:
                for d, text in docs:
                    sentence = self.holds(claim, text) if text else None
                    if sentence is not None:
                        found.setdefault(claim, []).append((d, sentence))
            self._retrieved_claims = found
        return self._retrieved_claims

    def covers(self, terms: frozenset[str]) -> tuple[float, frozenset[str]] | None:
        """(coverage, shared terms) when ``terms`` cover the question, else None."""
        shared = self.q & terms
        if len(shared) < self.config.min_shared_terms or not self.ids <= terms:
            return None
        cov = len(shared) / len(self.q)
        return (cov, shared) if cov >= self.config.min_question_coverage else None

    def usable(self, kb_id: str) -> bool:
        """A registry document the app should have found: current at the trace time and visible."""
        doc = self.inp.kb.get(kb_id)
        if doc is None:
            return False
        scopes = self.inp.user_scope
        if scopes is not None and doc.acl is not None and not set(scopes) & set(doc.acl):
            return False
        return is_current(self.inp.kb, doc, self.inp.as_of)

    def holds(self, claim: str, text: str) -> str | None:
        """The sentence of ``text`` that holds the claim, or None. Three tests: the sentence carries
        every question term that the claim's answer sentence repeats (the subject a clause may leave
        to its sentence, "经销商 ..., 超过 45 小时不支持 ..."); it carries ``min_evidence_share`` of
        that sentence's terms, counted both plainly and weighted by their registry idf (a subject
        common in the registry weighs little, yet it is what the claim is about); and the lexical
        checker finds a sentence supporting the claim with the question's words counted. The first
        two keep out a
        document about another subject or action that shares the claim's number and template
        ("Resellers may extend the trial within 45 weeks" for "New accounts may ..."); they are set
        operations, so the lexical check runs only on the few documents that pass them."""
        unit = self._unit_terms(claim)
        if not self._carries(unit, terms_of(text)):  # the whole text first: set operations only
            return None
        sents = sentences(text)
        v = check_claim(claim, sents, self.config.min_coverage)
        if v.label != "supported" or v.index is None:
            return None
        sentence = sents[v.index]  # the whole sentence, not only the clause that decided
        return sentence if self._carries(unit, terms_of(sentence)) else None

    def _carries(self, unit: frozenset[str], have: frozenset[str]) -> bool:
        share = self.config.min_evidence_share
        return (
            unit & self.q <= have
            and len(unit & have) >= share * len(unit)
            and self.index.weighted_share(unit, have) >= share
        )

    def _unit_terms(self, claim: str) -> frozenset[str]:
        found = self._units.get(claim)
        if found is None:
            found = self._units[claim] = terms_of(self.answer_sentence(claim))
        return found

    def answer_sentence(self, claim: str) -> str:
        """The sentence of the answer that holds the claim (a clause may leave its subject to the
        sentence: "..., 超过 45 天不支持退款"), else the claim."""
        norm = normalize(claim)
        for s in self.answer_sentences:
            if norm and norm in normalize(s):
                return s
        return claim


def _flag(metric: str, found: list[dict[str, Any]], **details: Any) -> Metric:
    n = float(len(found))
    return Metric(metric, value=n, numerator=n, passed=not found, label=_via(found),
                  details={"found": found, **details})  # fmt: skip


def _via(found: list[dict[str, Any]]) -> str | None:
    """What the findings rest on: ``answer_claim``, ``question`` or both (``answer_claim+question``);
    the view asks the answer-support tier to agree on a claim."""
    return "+".join(sorted({f["via"] for f in found if "via" in f})) or None


def no_retrieval(t: _Trace) -> Metric:
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


def _returned(t: _Trace) -> list[StepDoc]:
    """Every document a retrieval returned: candidates, the context, and what a search agent's
    searches listed without opening (``surfaced``: a document it had and left is ``not_opened``, a
    layer that needs a reference, not a candidate miss)."""
    trace = t.inp.trace
    return [*trace.candidates, *trace.context_docs, *trace.docs("surfaced")]


def _retrieved_ids(t: _Trace) -> set[str]:
    inp = t.inp
    out: set[str] = set()
    for d in _returned(t):
        out.update(x for x in (inp.matching.kb_id(d), d.doc_id, d.chunk_id) if x)
    return out


def candidate_miss(t: _Trace) -> Metric:
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


def _cut(t: _Trace) -> list[StepDoc]:
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


def _cut_by(t: _Trace, doc: StepDoc) -> tuple[str, str | None]:
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


def dropped(t: _Trace) -> Metric:
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


def over_refusal(t: _Trace) -> Metric:
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


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    if inp.case is not None:
        return []  # a trace with a gold case is attributed against it (the attribution view)
    t = _Trace(inp, config)
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
