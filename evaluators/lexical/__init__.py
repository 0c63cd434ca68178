"""The lexical tier (docs/architecture.md, Evaluators and metrics): sentences, claims, refusals and claim support without a model.

This package's root is the API an evaluator imports; its modules split the tier by concern, so
each can be read alone: ``chars``, ``sentence_split``, ``vocabulary``, ``patterns``, ``tokens``,
``analysis``, ``refusals``, ``claim_split`` and ``checking`` make the checker below; ``values``,
``dates``, ``units``, ``reading``, ``compare`` and ``claims`` the three-valued checker built on them.

Deterministic rules for English and Chinese text:

- ``sentences(text)``: split on ``. ! ? ;`` and ``。！？；`` and newlines; decimals (3.5), versions
  (v1.2), file names and common abbreviations (e.g., Dr., No. 5) do not end a sentence; list markers
  are stripped and fragments without any letter or CJK character are dropped.
- ``split_claims(text)``: sentences split further into clauses at clause boundaries (English
  ``, and`` / ``, but`` / ``but`` / ``whereas`` / ``while``, and a bare ``and`` when the right side
  carries its own verb; Chinese ``，；、``), each split kept only when both sides carry content.
  Refusal and hedge clauses, questions and question echoes are not claims.
- ``is_refusal(text)``: the answer has at least one refusal or hedge clause and no claim.
- ``support(claim, sentences, min_coverage)``: a claim is *supported* when one context sentence
  covers at least ``min_coverage`` of its content terms and matches every number (with its unit),
  date, identifier and negation of the claim, every period of a rate (``per hour``, ``a year``,
  ``daily``, 每月) and every named thing in Latin script (an acronym such as PDF, a capitalized or
  camel-case word past the first, such as Kubernetes or YubiKey). It is *contradicted* when the best sentence that
  conflicts with it — the same unit with another value, another date, an identifier with the same
  prefix and another number, or the opposite polarity on a shared term — still covers at least
  ``contradiction_coverage`` of its content terms; otherwise *unsupported*. Supported beats
  contradicted (a claim one context sentence states is faithful to the context even when another
  sentence conflicts with it); ties go to the higher coverage, then to the earlier sentence.
- ``fact_expressed(fact, aliases, answer)``: normalized containment of the text or an alias, else
  the fact is supported by a sentence of the answer under the rules above (numbers must match).

Content terms: English words lower-cased, stop words removed, lightly stemmed ("retrying" ~
"retry", "days" ~ "day"); Chinese CJK character bigrams (a one-character run is a unigram), never
across a negation cue, digits or punctuation, without bigrams holding a particle (的 了 吗 …).
Terms right after a negation cue are *negated*: a claim's negated term must be negated in the
sentence too, and a claim term the sentence only states negated is a polarity conflict.
"""

from __future__ import annotations

from evaluators.lexical.analysis import analyze, content_terms, quantities_of, quantity_set
from evaluators.lexical.checking import (
    DEFAULT_CONTRADICTION_COVERAGE,
    DEFAULT_MIN_COVERAGE,
    Label,
    Verdict,
    fact_expressed,
    support,
)
from evaluators.lexical.claim_split import clauses, is_refusal, split_claims
from evaluators.lexical.refusals import is_refusal_sentence
from evaluators.lexical.sentence_split import sentences
from evaluators.lexical.tokens import Analysis, Quantity

__all__ = [
    "Verdict",
    "Analysis",
    "Quantity",
    "Label",
    "analyze",
    "sentences",
    "clauses",
    "split_claims",
    "is_refusal",
    "is_refusal_sentence",
    "support",
    "fact_expressed",
    "content_terms",
    "quantities_of",
    "quantity_set",
    "DEFAULT_MIN_COVERAGE",
    "DEFAULT_CONTRADICTION_COVERAGE",
]
