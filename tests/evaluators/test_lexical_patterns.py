"""Fast paths of the lexical checker give what the plain forms give: its patterns compiled behind a
lookahead on their first character (``chars._starting_with``) find what the bare patterns find,
and the sentence splitter, jumping from one possible sentence end to the next, splits as a loop over
every character does."""

from __future__ import annotations

import random
import re

import pytest

from evaluators.lexical import patterns, sentence_split, vocabulary

ANCHORED = {
    "cannot": vocabulary._CANNOT_RE,
    "number": patterns._NUMBER_RE,
    "number word": patterns._EN_NUMBER_WORD_RE,
    **{f"date {i} ({kind})": p for i, (p, kind) in enumerate(patterns._DATE_PATTERNS)},
}

PIECES = [
    "May", "may", "MAY", "Sept.", "september", "June", "Jan", "Dec.", "of", "31st", "3rd", "2nd", "1", "12",
    "31", "2026", "1999", "2026-03-01", "2026/3/1", "2026.03.01", "年", "月", "日", "号", "2026年", "3月",
    "5日", "$", "€", "￥", "usd", "USD", "Eur", "gbp", "rmb", "CNY", "4.99", "1,000", "1,000.5", "12%",
    "30％", "cannot", "Cannot", "CANNOT", "cannotx", "one", "One", "twenty-one", "seven", "ninety", "hundred",
    "eleven", "ten", "often", "phone", "days", "weeks", "R-17", "v2", "GPT4", "x", "-", ",", ".", " ", "  ",
    "\t", "(", ")", "Ｔｈｒｅｅ", "３０", "一", "天", "e", "u", "g", "r", "c", "_", "a1", "1a",
    "3月5日", "12 月 1 号", "2026 年 3 月", "May 2026", "Sept. 2025", "5 of March, 2026", "March 5th, 2026",
]  # fmt: skip


def _bare(pattern: re.Pattern[str]) -> re.Pattern[str]:
    assert pattern.pattern.startswith("(?="), "built by _starting_with"
    return re.compile(pattern.pattern[pattern.pattern.index(")") + 1 :], pattern.flags)


def _found(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: repr((m.span(), m.groups())), text)


@pytest.mark.parametrize("name", list(ANCHORED))
def test_anchored_pattern_finds_what_the_bare_one_does(name: str) -> None:
    anchored = ANCHORED[name]
    bare = _bare(anchored)
    rng = random.Random(name)
    matched = 0
    for _ in range(3000):
        sep = rng.choice(["", " ", " ", "-"])
        text = sep.join(rng.choice(PIECES) for _ in range(rng.randrange(1, 12)))
        expected = _found(bare, text)
        assert _found(anchored, text) == expected, text
        matched += expected != text
    assert matched > 100  # the texts exercise the pattern


def test_the_lookahead_only_drops_positions_where_no_match_starts() -> None:
    # a first character outside the class: the bare pattern cannot match there either
    assert _bare(patterns._NUMBER_RE).match("x12") is None
    assert patterns._NUMBER_RE.search("x 12 days").span() == (1, 4)
    assert patterns._DATE_PATTERNS[3][0].search("since March 5, 2026").group(0) == "March 5, 2026"


def _reference_sentences(text: str) -> tuple[str, ...]:
    """The sentence splitter looking at every character in turn."""
    out: list[str] = []
    for line in text.splitlines():
        line = sentence_split._LIST_MARKER.sub("", line, count=1)
        start, i, n = 0, 0, len(line)
        while i < n:
            ch = line[i]
            end = False
            if ch in sentence_split._HARD_END or ch in "！？；":
                end = True
            elif ch == ".":
                end = sentence_split._is_sentence_period(line, i)
            elif ch == "…":
                end = i + 1 >= n or line[i + 1].isspace()
            if end:
                j = i + 1
                while j < n and line[j] in "\"'”’)]」』!?！？.。":
                    j += 1
                sentence_split._add_sentence(out, line[start:j])
                start = i = j
                continue
            i += 1
        sentence_split._add_sentence(out, line[start:])
    return tuple(out)


SENTENCE_PIECES = [
    "Refunds take 30 days.", "e.g.", "No. 5", "said no. Go", "J. Smith", "etc. Then", "v1.2", "3.5%", "…", "...",
    "Wait… what", "end…", "。", "！", "？", "；", "!", "?", ";", "\n", "\n\n", "- ", "1) ", "(a) ", "•", "\"", "”",
    "）", ")", "」", "年度会员可以退款。", "超过 7 天不支持", "Mr. Lee", "U.S. plans", "word", " ", "  ", ".", "。”",
]  # fmt: skip


def test_sentence_splitter_jumping_between_candidates_equals_the_character_loop() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        text = rng.choice(["", " "]).join(rng.choice(SENTENCE_PIECES) for _ in range(rng.randrange(1, 15)))
        assert sentence_split._sentences.__wrapped__(text) == _reference_sentences(text), repr(text)  # type: ignore[attr-defined]
