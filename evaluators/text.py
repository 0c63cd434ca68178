"""The comparison form of text (``collector.textnorm.normalize``), computed faster for common text.

``collector.textnorm.normalize`` is NFKC, case folding, then every run of non-word characters
removed. For text made only of characters that neither decompose into nor compose with their
neighbours under NFKC, each character maps on its own, so the whole computation is one
``str.translate`` with a table built from the reference function character by character:

- ASCII text (the common case): NFKC leaves it alone and case folding is ``lower``; what remains is
  deleting everything but letters and digits, done on bytes;
- text of ASCII, CJK ideographs, CJK and general punctuation and fullwidth ASCII forms (Chinese
  prose): the table maps fullwidth forms to their ASCII letters or digits and drops punctuation.

Anything else goes to the reference function. The result is always identical to it
(``tests/evaluators/test_text.py`` checks both paths against it).
"""

from __future__ import annotations

import re
from functools import lru_cache

from collector.textnorm import normalize as reference_normalize

__all__ = ["normalize", "normalize_doc", "normalize_cached", "reference_normalize"]

# bytes that are not ASCII letters or digits: removed from ASCII text
_ASCII_DROP = bytes(c for c in range(128) if not (chr(c).isascii() and chr(c).isalnum()))

# characters mapped one by one: no character here has a canonical combining class, a composition
# with a neighbour, or a decomposition into such characters (checked in the tests)
_SIMPLE_RANGES = (
    (0x0000, 0x007F),  # ASCII
    (0x2010, 0x2016),  # dashes, quotes, bullets, ellipsis (not U+2017: it decomposes to a combining mark)
    (0x2018, 0x2027),
    (0x3000, 0x3029),  # CJK symbols and punctuation (U+302A-U+302F are combining marks)
    (0x3030, 0x303F),
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xFF01, 0xFF5E),  # fullwidth ASCII forms
)
_SIMPLE = re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _SIMPLE_RANGES) + "]*\\Z")


def _table() -> dict[int, str | None]:
    out: dict[int, str | None] = {}
    for a, b in _SIMPLE_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            mapped = reference_normalize(ch)
            if mapped != ch:
                out[cp] = mapped or None
    return out


_TABLE = _table()
_NON_WORD = re.compile(r"[\W_]+")


def _special() -> str:
    """Characters of the simple ranges that are not simply dropped (non-word) or lower-cased."""
    out = []
    for a, b in _SIMPLE_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            mapped = reference_normalize(ch)
            dropped = _NON_WORD.fullmatch(ch) is not None
            if (dropped and mapped != "") or (not dropped and mapped != ch.lower()):
                out.append(ch)
    return "".join(out)


_SPECIAL = re.compile("[" + re.escape(_special()) + "]")


def normalize(text: str | None) -> str:
    """Exactly ``collector.textnorm.normalize(text)``, faster for ASCII and Chinese text."""
    if not text:
        return ""
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_DROP).lower().decode("ascii")
    if _SIMPLE.match(text):
        if _SPECIAL.search(text):
            return text.translate(_TABLE)
        return _NON_WORD.sub("", text).lower()
    return reference_normalize(text)


# The normalized form of a document's content. The same chunks come back trace after trace (and a
# trace repeats them: candidates, reranker input and output, context), so it is cached by text.
normalize_doc = lru_cache(maxsize=4096)(normalize)


@lru_cache(maxsize=16384)
def normalize_cached(text: str) -> str:
    """``normalize`` for short strings that repeat (quotes, ids)."""
    return normalize(text)
