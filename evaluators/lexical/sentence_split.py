"""Sentences: where English and Chinese text ends a sentence (decimals, versions, file names and
abbreviations do not), list markers stripped, fragments without a word dropped."""

from __future__ import annotations

import re
from functools import lru_cache

from evaluators.lexical.chars import _CJK, _HAS_TEXT

_ABBREVIATIONS = frozenset(
    """
    e.g i.e etc vs mr mrs ms dr prof sr jr st no nos fig figs approx ca cf al inc ltd co corp dept
    est jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k p.m a.m
    """.split()  # noqa: SIM905
)
_HARD_END = "。！？；!?;\n"
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]+|\(?\d{1,3}[.)、]|[a-zA-Z][.)])\s+")


def _is_sentence_period(text: str, i: int) -> bool:
    """Whether the '.' at ``i`` ends a sentence."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    prev = text[i - 1] if i > 0 else ""
    if nxt and not nxt.isspace():
        # 3.5, v1.2, file.txt, e.g. -> not an end; a CJK char or a closing quote right after -> end
        if re.match(f"[{_CJK}\"'”’)\\]]", nxt):
            return True
        return False
    if prev.isdigit():
        # "Step 1. Do" at a line start is a list marker (handled before); "for 7 days." ends
        return True
    m = re.search(r"([A-Za-z][A-Za-z.]*)$", text[max(0, i - 12) : i])
    if m:
        word = m.group(1).lower()
        if word in _ABBREVIATIONS:
            # "No. 5" / "e.g. logs": an abbreviation unless the next word starts a new sentence
            rest = text[i + 1 :].lstrip()
            if word == "no":
                return not rest[:1].isdigit()  # "No. 5" vs "said no. Go"
            if word == "etc" and rest[:1].isupper():
                return True
            return False
        if len(word) == 1 and word.isalpha() and prev.isupper():
            return False  # an initial: "J. Smith"
    return True


def sentences(text: str | None) -> list[str]:
    """Split ``text`` into sentences (English and Chinese); fragments without words are dropped."""
    if not text:
        return []
    return list(_sentences(text))


# the characters that may end a sentence: the loop below jumps from one to the next
_END_CANDIDATE = re.compile("[" + re.escape(_HARD_END + "！？；.…") + "]")


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for line in text.splitlines():
        line = _LIST_MARKER.sub("", line, count=1)
        start = 0
        n = len(line)
        m = _END_CANDIDATE.search(line)
        while m is not None:
            i = m.start()
            ch = line[i]
            if ch == ".":
                end = _is_sentence_period(line, i)
            elif ch == "…":
                end = i + 1 >= n or line[i + 1].isspace()
            else:
                end = True  # _HARD_END
            if not end:
                m = _END_CANDIDATE.search(line, i + 1)
                continue
            j = i + 1
            # keep closing quotes and repeated punctuation with the sentence
            while j < n and line[j] in "\"'”’)]」』!?！？.。":
                j += 1
            _add_sentence(out, line[start:j])
            start = j
            m = _END_CANDIDATE.search(line, j)
        _add_sentence(out, line[start:])
    return tuple(out)


def _add_sentence(out: list[str], piece: str) -> None:
    s = piece.strip()
    if s and _HAS_TEXT.search(s):
        out.append(s)
