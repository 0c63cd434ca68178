"""What every rule of ``live_evidence`` reads about a trace, worked out once a trace
(``LiveTrace``): the question's and the answer's terms, whether the answer refused, what the model
saw, the answer's claims the context does not support, and the registry index; and whether a
document holds a claim (``LiveTrace.holds``) or covers the question (``LiveTrace.covers``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluators.builtin._answer import answer_text, context_sentences, doc_content, query_text
from evaluators.builtin._registry_index import RegistryIndex, is_current, registry_index, terms_of
from evaluators.eval_input import EvalInput
from evaluators.lexical import is_refusal, sentences, split_claims
from evaluators.lexical.claims import check_claim
from evaluators.text import normalize
from evaluators.trace_view import StepDoc

if TYPE_CHECKING:
    from evaluators.builtin.live_evidence import Config


class LiveTrace:
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
