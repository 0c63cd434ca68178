"""Identifying a document by its content (``evaluators.content_index``): the index gives exactly the
answer of comparing with every registry text in order, and ``KnowledgeBase.identify`` uses it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.content_index import GRAM, STEP, ContentIndex, first_by_scan
from evaluators.eval_input import KnowledgeBase
from evaluators.gold import KBDocument

# few letters, so that registry texts share many pieces and contain one another often
ALPHABETS = st.sampled_from(["ab", "abc", "abcdefgh", "年度会员退款天内"])
LENGTHS = [0, 3, GRAM - 1, GRAM, GRAM + 1, STEP, STEP + GRAM - 2, STEP + GRAM - 1, STEP + GRAM, 30, 60, 150]


@st.composite
def registry_and_probes(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    alphabet = draw(ALPHABETS)

    def text(length: int) -> str:
        return draw(st.text(alphabet=alphabet, min_size=length, max_size=length))

    texts = [text(draw(st.sampled_from(LENGTHS))) for _ in range(draw(st.integers(0, 25)))]
    probes = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["inside", "around", "random"]))
        if texts and kind == "inside":  # a piece of a registry text: found in it, or earlier
            t = draw(st.sampled_from(texts))
            a = draw(st.integers(0, len(t)))
            probes.append(t[a : draw(st.integers(a, len(t)))])
        elif texts and kind == "around":  # a registry text inside a longer text
            t = draw(st.sampled_from(texts))
            probes.append(text(draw(st.integers(0, 12))) + t + text(draw(st.integers(0, 12))))
        else:
            probes.append(text(draw(st.integers(1, 70))))
    return texts, [p for p in probes if p]


@settings(max_examples=400, deadline=None)
@given(registry_and_probes())
def test_the_index_finds_what_comparing_every_text_finds(case: tuple[list[str], list[str]]) -> None:
    texts, probes = case
    index = ContentIndex(texts)
    for probe in probes:
        assert index.first(probe) == first_by_scan(texts, probe), probe


def test_identify_names_the_first_registry_document_containing_the_text_or_inside_it() -> None:
    docs = [
        KBDocument(doc_id="short", content="Refunds."),  # 7 characters once normalized: never inside a text
        KBDocument(
            doc_id="policy-2024", content="Annual members may request a refund within 7 days of purchase."
        ),
        KBDocument(
            doc_id="policy-2026", content="Annual members may request a refund within 30 days of purchase."
        ),
        KBDocument(
            doc_id="policy-copy", content="ANNUAL MEMBERS may request a refund — within 30 days of purchase!"
        ),
        KBDocument(doc_id="shipping", content="运费和关税不予退还。"),
    ]
    kb = KnowledgeBase(docs)
    # a chunk of a registry document, normalized (case, punctuation, spaces)
    assert kb.identify("may request a REFUND within 30 days") == "policy-2026"  # not the later copy
    assert kb.identify("request a refund within 7 days") == "policy-2024"
    # a text holding a whole registry document (a chunk larger than the registered one)
    assert kb.identify("Shipping: 运费和关税不予退还。 Contact support.") == "shipping"
    assert kb.identify("No refunds. Refunds.") is None  # "refunds" is too short to be found inside
    assert kb.identify("Students may extend the trial.") is None
    # the same answers once remembered
    assert kb.identify("may request a refund within 30 days") == "policy-2026"


def test_the_first_registry_text_wins_wherever_it_sits_in_the_text() -> None:
    index = ContentIndex(["aaaaaaaa", "bbbbbbbb", "abababababababababababab"])
    assert index.first("aaaaaaaabbbbbbbb") == 0
    assert index.first("bbbbbbbbaaaaaaaa") == 0
    assert index.first("bbbbbbbbcccccccc") == 1
    assert index.first("xbabababababababababababx") is None  # longer than every text, inside none
    assert index.first("babababababababababa") == 2  # inside the third, found through its pieces
