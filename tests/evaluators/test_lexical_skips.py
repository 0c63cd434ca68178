"""``analyze`` skips the patterns that cannot match a text; the result is the one of running them all."""

from __future__ import annotations

import random

import pytest

from evaluators.lexical import analysis
from evaluators.lexical.tokens import Analysis

TEXTS = [
    "Annual members may request a refund within 30 days of purchase.",
    "Since March 5, 2026 the window is 14 days; before 5th of March it was seven days.",
    "The policy changed on 2026-03-01 (see Mar. 2026 notes) and again on 1 April.",
    "We can't refund after three weeks, and you cannot transfer it. Don't retry R-17 within 30s.",
    "It won't work and shan't be retried; the user’s plan isn't eligible.",
    "Error R-17 and SKU-123 differ from retry-v2 and GPT4; 5GB costs $4.99 or 12%.",
    "年度会员在购买后 7 天内可以申请退款，超过 7 天不支持申请退款。",
    "2026年3月1日起，三天内可以退款，十五个月后不再支持；五元手续费。",
    "Twenty-one members and one hundred seats; someone often waits ten minutes.",
    "no digits, no months, no contractions here at all",
    "May I ask? The may-day plan is valid until May 31 and from 31 may.",
    "Ｔｈｒｅｅ days and ３０ ｄａｙｓ in fullwidth; İstanbul ıs here 7 Kelvin days",
]


def _all_patterns(text: str, monkeypatch: pytest.MonkeyPatch) -> Analysis:
    with monkeypatch.context() as m:
        m.setattr(analysis, "_SKIP_IMPOSSIBLE", False)
        return analysis.analyze.__wrapped__(text)  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("text", TEXTS)
def test_skipping_patterns_changes_nothing(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert analysis.analyze.__wrapped__(text) == _all_patterns(text, monkeypatch)  # type: ignore[attr-defined]


def test_skipping_patterns_changes_nothing_on_mixed_text(monkeypatch: pytest.MonkeyPatch) -> None:
    words = " ".join(TEXTS).replace(",", " ").split() + [
        "Jan",
        "of",
        "3rd",
        "2",
        "can't",
        "天",
        "一",
        "'",
        "’",
    ]
    rng = random.Random(11)
    for _ in range(400):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 14)))
        assert analysis.analyze.__wrapped__(text) == _all_patterns(text, monkeypatch), text  # type: ignore[attr-defined]
