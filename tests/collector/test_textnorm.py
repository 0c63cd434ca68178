"""The fast comparison form (``ragfault_core.textnorm.normalize``) equals the reference normalization everywhere."""

from __future__ import annotations

import random
import unicodedata

import pytest

from ragfault_core.textnorm import _SIMPLE_RANGES, normalize, normalize_doc
from ragfault_core.textnorm import reference_normalize as reference

SAMPLES = [
    "",
    "Annual members may request a refund within 30 days of purchase.",
    "Error R-17: wait 30s (not 3s) -- see retry_policy_v2.md!",
    "年度会员在购买后 7 天内可以申请退款，超过 7 天不支持申请退款。",
    "资料中没有答案时请说明不清楚；数字、日期和编号必须与资料一致！（ＡＢＣ－１２３）",
    "“Smart quotes” — and an ellipsis… in ＦＵＬＬＷＩＤＴＨ　text",
    "Café déjà vu: e\u0301 composed with a combining accent",
    "Straße ΣΊΣΥΦΟΣ ﬁ ligature ① ½ ㎏",
    "e\u3001\u0301 punctuation between a letter and a combining mark",
    "한국어 텍스트와 日本語のテキスト、カタカナ ｶﾀｶﾅ",
    "tabs\tand\nnew\r\nlines and under_scores",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_samples_match_reference(text: str) -> None:
    assert normalize(text) == reference(text)


def test_none_is_empty() -> None:
    assert normalize(None) == ""
    assert reference(None) == ""


@pytest.mark.parametrize("text", SAMPLES[1:])
def test_cached_document_form_is_the_same(text: str) -> None:
    assert normalize_doc(text) == reference(text)
    assert normalize_doc(text) == reference(text)  # the second time from the cache


def test_simple_ranges_have_no_combining_or_composing_characters() -> None:
    # the per-character table is only exact when no character of these ranges interacts with a neighbour
    for a, b in _SIMPLE_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            assert unicodedata.combining(ch) == 0, hex(cp)
            for part in unicodedata.normalize("NFKD", ch):
                assert unicodedata.combining(part) == 0, hex(cp)


def test_random_text_matches_reference() -> None:
    rng = random.Random(5)
    simple = [chr(cp) for a, b in _SIMPLE_RANGES for cp in range(a, min(b, a + 400) + 1)]
    other = ["\u0301", "\u0308", "é", "ß", "Σ", "ﬁ", "①", "\u302a", "\u3099", "か", "ｶ", "한", "\u00a0", "²"]
    for _ in range(3000):
        n = rng.randrange(1, 40)
        pool = simple if rng.random() < 0.7 else simple + other
        text = "".join(rng.choice(pool) for _ in range(n))
        assert normalize(text) == reference(text), repr(text)
