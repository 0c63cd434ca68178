"""The registry index live attribution searches (``evaluators.builtin._registry_index``): its terms
in English and Chinese, BM25 ranking against a reference computed by hand, and one index per
registry."""

from __future__ import annotations

import math
from datetime import datetime

from evaluators.builtin._registry_index import RegistryIndex, is_current, registry_index, terms_of
from evaluators.eval_input import KnowledgeBase
from evaluators.gold import KBDocument
from tests.attribution.data import KB, QUERY


def test_terms() -> None:
    # stems, identifiers, no stop words and no bare numbers
    assert terms_of("How long should I wait before retrying after error R-17?") == {
        "long", "wait", "retry", "error", "#r17",
    }  # fmt: skip
    assert terms_of("Logs are retained for 30 days.") == {"log", "retain", "day"}
    # CJK bigrams without function characters; a lone character (a unit after a number) is no term
    assert terms_of("年度会员买了第 20 天，还能退款吗？") == {"年度", "度会", "会员", "员买", "能退", "退款"}
    assert terms_of("ＡＢＣ-12 Ｌｏｇｓ") == {"#abc12", "log"}  # NFKC, case-folded


def test_bm25_ranking_matches_the_formula() -> None:
    docs = [(d["doc_id"], d["content"]) for d in KB]
    index = RegistryIndex(docs)
    q = terms_of(QUERY["zh-refund"])
    n = len(docs)
    lengths = {i: len(terms_of(t)) for i, t in docs}
    avg = sum(lengths.values()) / n

    def bm25(doc_id: str) -> float:
        dt = terms_of(dict(docs)[doc_id])
        out = 0.0
        for t in q & dt:
            df = sum(1 for _, text in docs if t in terms_of(text))
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            out += idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * lengths[doc_id] / avg))
        return out

    want = sorted(((i, bm25(i)) for i, _ in docs if bm25(i) > 0), key=lambda x: (-x[1], x[0]))
    got = index.search(q, k=10)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [round(s, 9) for _, s in got] == [round(s, 9) for _, s in want]
    assert got[0][0].startswith("refund-policy-")
    assert index.search(q, k=1) == got[:1]
    assert index.search({"unknown-term"}) == []
    # an identifier finds its document among all the others
    assert index.search(terms_of("what does R-17 mean"), k=1)[0][0] == "retry-v2"


def test_weighted_share_weighs_rare_terms_more() -> None:
    index = RegistryIndex([(d["doc_id"], d["content"]) for d in KB])
    sentence = terms_of("Logs are retained for 7 days and exported as JSON.")
    # "json" is in one document, "log" in three: missing json loses more than missing log
    assert index.weighted_share(sentence, sentence - {"json"}) < index.weighted_share(
        sentence, sentence - {"log"}
    )
    assert index.weighted_share(sentence, sentence) == 1.0
    assert index.weighted_share(frozenset(), sentence) == 0.0


def test_one_index_per_registry() -> None:
    kb = KnowledgeBase([KBDocument(**d) for d in KB])
    first = registry_index(kb)
    assert registry_index(kb) is first and len(first) == len(KB)
    other = KnowledgeBase([KBDocument(**d) for d in KB[:2]])
    assert len(registry_index(other)) == 2
    assert registry_index(KnowledgeBase()).search(terms_of("anything at all")) == []


def test_current_registry_rows() -> None:
    """A row is current when no successor already valid replaced it, it has not expired and it is
    valid already; superseded rows are never current without a time."""
    kb = KnowledgeBase([KBDocument(**d) for d in KB])
    row = kb.by_id
    sep, jun = datetime(2026, 9, 1), datetime(2025, 6, 1)
    assert is_current(kb, row["refund-policy-2026"], sep)
    assert not is_current(kb, row["refund-policy-2024"], sep)  # superseded, its successor valid
    assert is_current(kb, row["refund-policy-2024"], jun)
    assert not is_current(kb, row["refund-policy-2026"], jun)  # not valid yet
    assert not is_current(kb, row["retention-v1"], None) and is_current(kb, row["retention-v2"], None)
    orphan = KBDocument(doc_id="old", superseded_by="gone", valid_to=datetime(2026, 1, 1))
    assert is_current(kb, orphan, jun) and not is_current(kb, orphan, sep)  # successor unknown: its end
