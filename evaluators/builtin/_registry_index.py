"""A BM25 index over the knowledge-base registry, for the questions of live traces
(docs/architecture.md, Live traffic).

Live attribution asks the registry "which documents match this question?" (did the app skip a
search the registry could have answered, did its retrieval miss a document the registry has). The
registry already lives in memory beside the evaluators (``evaluators.base.KnowledgeBase``), so the
index is built there too, once per registry, on its first question: DuckDB's full-text extension
is not bundled and cannot be installed without network, and an evaluator may not query the store.

Terms (``terms_of``): stemmed English words, CJK bigrams and identifiers (``#r17``), the same for
documents, questions and claims, so a match and the coverage checks that follow it speak of the
same terms, in English and in Chinese. They are the index's own, not the lexical checker's
analysis: that one also reads numbers, dates and negation, and costs five times as much a
document. Term frequency is binary (registry passages are short, and the checks that follow count
distinct terms); a document's length is its number of distinct terms. Postings are numpy arrays
and a question's scores are summed in numpy: a template-like registry, where most words of a
question are in a fifth of the documents, costs no more than a varied one.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
import weakref
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import numpy as np

from evaluators.builtin._docs import as_time
from evaluators.eval_input import KnowledgeBase
from evaluators.gold import KBDocument

K1 = 1.2
B = 0.75


# common English words that say nothing about what a passage is about (question words included)
_STOP = frozenset(
    """
    a about after again all also am an and any are as at be because been before being between both but
    by can could did do does doing during each either else even ever every few for from further had has
    have having he her here his how however i if in into is it its just let like may me might more most
    much must my now of off on once only or other our out over own per please same shall she should so
    some such than that the their them then there these they this those though through to too under
    until up upon us very via was we were what when where whether which while who whom whose why will
    with within would yet you your get gets got one ones tell know want need
    """.split()  # noqa: SIM905
)
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKENS = re.compile(rf"[a-z]+(?:[-_]?[0-9]+[a-z0-9]*)?|[0-9]+[-_]?[a-z]+[a-z0-9]*|[{_CJK}]+")
# CJK function characters: a bigram holding one says little (吗, 了), or spans two words (还能退 -> 能退)
_PARTICLES = frozenset("的了吗呢吧啊呀嘛么着是第还在和与或及吧")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light English stemmer (plurals, -ed, -ing, -ies), enough to match "retried" to "retry"."""
    n = len(word)
    if n <= 3:
        return word
    if word.endswith(("ies", "ied")) and n > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and n > 5:
        word = word[:-3]
    elif word.endswith("ed") and n > 4:
        word = word[:-2]
    elif word.endswith("es") and n > 4 and (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
        return word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    else:
        return word[:-1] if word.endswith("e") and n > 4 else word
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


CACHED_TEXT = 4096  # longer texts are not cached: a few thousand of them would hold too much memory


def terms_of(text: str) -> frozenset[str]:
    """The index terms of a text: stemmed English words without stop words, CJK bigrams (without
    function characters; a lone character is no term: after a number it is most often a unit),
    identifiers such as ``R-17`` as ``#r17``; numbers alone are not terms (a question's "day 20"
    names no document). Cached up to ``CACHED_TEXT`` characters: questions, sentences and documents
    come back trace after trace."""
    return _cached_terms(text) if len(text) <= CACHED_TEXT else _terms(text)


@lru_cache(maxsize=16384)
def _cached_terms(text: str) -> frozenset[str]:
    return _terms(text)


def _terms(text: str) -> frozenset[str]:
    out: set[str] = set()
    for tok in _TOKENS.findall(unicodedata.normalize("NFKC", text).casefold()):
        c = tok[0]
        if c >= "\u3400":
            for i in range(len(tok) - 1):
                g = tok[i : i + 2]
                if g[0] not in _PARTICLES and g[1] not in _PARTICLES:
                    out.add(g)
        elif not tok.isalpha():  # letters with digits: an identifier (the pattern allows no other)
            out.add("#" + tok.replace("-", "").replace("_", ""))
        elif tok not in _STOP and len(tok) > 1:
            out.add(_stem(tok))
    return frozenset(out)


class RegistryIndex:
    """An inverted index of registry documents (doc id -> its title and content), ranked by BM25."""

    def __init__(self, docs: Iterable[tuple[str, str]]) -> None:
        self.doc_ids: list[str] = []
        self._texts: list[str] = []
        postings: dict[str, list[int]] = {}
        lengths: list[int] = []
        for doc_id, text in docs:
            found = terms_of(text)
            n = len(self.doc_ids)
            self.doc_ids.append(doc_id)
            self._texts.append(text)
            lengths.append(len(found))
            for t in found:
                p = postings.get(t)
                if p is None:
                    postings[t] = [n]
                else:
                    p.append(n)
        self._postings = {t: np.array(p, dtype=np.int32) for t, p in postings.items()}
        n = len(self.doc_ids)
        avg = (sum(lengths) / n) if n else 1.0
        # BM25's per-document factor with tf = 1: (k1 + 1) / (1 + k1 * (1 - b + b * len / avg))
        self._norm = (K1 + 1) / (1 + K1 * (1 - B + B * (np.array(lengths, dtype=np.float64) / avg)))
        self._position = {d: i for i, d in enumerate(self.doc_ids)}

    def __len__(self) -> int:
        return len(self.doc_ids)

    def df(self, term: str) -> int:
        """How many documents carry the term."""
        p = self._postings.get(term)
        return len(p) if p is not None else 0

    def idf(self, term: str) -> float:
        n, df = len(self.doc_ids), self.df(term)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def weighted_share(self, terms: frozenset[str], have: frozenset[str]) -> float:
        """The share of ``terms`` found in ``have``, each term weighted by its idf (a term no document
        carries weighs most): the words that tell documents apart count, the template words they
        share count little. 0 for no terms."""
        total = got = 0.0
        for t in terms:
            w = self.idf(t)
            total += w
            if t in have:
                got += w
        return got / total if total else 0.0

    def search(self, terms: Iterable[str], k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` best documents for the terms, best first, as (doc id, BM25 score); ties by
        registry order. Scores are summed in numpy (a term in half of 100,000 documents costs a
        fraction of a millisecond)."""
        postings = [(p, self.idf(t)) for t in set(terms) if (p := self._postings.get(t)) is not None]
        if not postings:
            return []
        scores = np.zeros(len(self.doc_ids))
        for p, w in postings:
            scores[p] += w * self._norm[p]  # a term's postings hold each document once
        hit = np.flatnonzero(scores)
        if len(hit) > k:
            hit = hit[np.argpartition(-scores[hit], k - 1)[:k]]
        order = sorted(hit.tolist(), key=lambda d: (-scores[d], d))
        return [(self.doc_ids[d], float(scores[d])) for d in order]

    def terms(self, doc_id: str) -> frozenset[str]:
        """The index terms of an indexed document (empty when it is not indexed)."""
        i = self._position.get(doc_id)
        return terms_of(self._texts[i]) if i is not None else frozenset()


def is_current(kb: KnowledgeBase, doc: KBDocument, as_of: Any) -> bool:
    """Whether a registry row is current at ``as_of``: not superseded by a successor already valid,
    not expired, already valid (the rules ``freshness.staleness`` applies to a registry row, asked
    of the row itself, not through ``Matching``, which knows step documents). Without a time, a
    superseded row is not current."""
    t = as_time(as_of)
    valid_from, valid_to = as_time(doc.valid_from), as_time(doc.valid_to)
    if doc.superseded_by:
        succ = kb.get(doc.superseded_by)
        if t is None:
            return False
        if succ is not None:
            succ_from = as_time(succ.valid_from)
            if succ_from is None or succ_from <= t:
                return False
        elif valid_to is None or valid_to <= t:
            return False
    if t is None:
        return True
    return not ((valid_to is not None and valid_to <= t) or (valid_from is not None and valid_from > t))


_INDEXES: weakref.WeakKeyDictionary[KnowledgeBase, RegistryIndex] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def registry_index(kb: KnowledgeBase) -> RegistryIndex:
    """The index of a registry, built on first use and kept as long as the registry is (a registry
    is replaced, not changed, when the knowledge base is loaded again)."""
    found = _INDEXES.get(kb)
    if found is not None:
        return found
    with _LOCK:
        found = _INDEXES.get(kb)
        if found is None:
            found = _INDEXES[kb] = build_index(kb)
    return found


def build_index(kb: KnowledgeBase) -> RegistryIndex:
    """A new index of a registry's documents (title and content of each), owned by the caller:
    ``registry_index`` keeps one per registry; a caller that must free its own builds it here."""
    docs = ((d.doc_id, " ".join(x for x in (d.title, d.content) if x)) for d in kb.by_id.values())
    return RegistryIndex((i, t) for i, t in docs if t.strip())
