"""Text normalization shared by context derivation and evidence matching (docs/architecture.md, Evidence and matching).

Comparison text is Unicode NFKC, case-folded, with every run of whitespace, punctuation and other
non-word characters removed (``reference_normalize``). Removing (rather than collapsing to a space)
keeps CJK text, which has no spaces, comparable with the same text where a tokenizer or template
inserted spaces.

``normalize`` gives exactly the same result, faster for common text. For text made only of
characters that neither decompose into nor compose with their neighbours under NFKC, each character
maps on its own, so the whole computation is one ``str.translate`` with a table built from the
reference function character by character:

- ASCII text (the common case): NFKC leaves it alone and case folding is ``lower``; what remains is
  deleting everything but letters and digits, done on bytes;
- text of ASCII, CJK ideographs, CJK and general punctuation and fullwidth ASCII forms (Chinese
  prose): the table maps fullwidth forms to their ASCII letters or digits and drops punctuation.

Anything else goes to the reference function (``tests/collector/test_textnorm.py`` checks both paths
against it).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["contains", "normalize", "normalize_cached", "normalize_doc", "reference_normalize"]

_NON_WORD = re.compile(r"[\W_]+")


def reference_normalize(text: str | None) -> str:
    """The comparison form of ``text`` ('' for None), by definition: NFKC, case folding, non-word
    characters removed."""
    if not text:
        return ""
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


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


def _tables() -> tuple[dict[int, str | None], str]:
    """From one pass over the simple ranges with the reference function: the translation table (each
    character that changes -> its form, None when dropped), and the characters that are not simply
    dropped (non-word) or lower-cased."""
    table: dict[int, str | None] = {}
    special = []
    for a, b in _SIMPLE_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            mapped = reference_normalize(ch)
            if mapped != ch:
                table[cp] = mapped or None
            dropped = _NON_WORD.fullmatch(ch) is not None
            if (dropped and mapped != "") or (not dropped and mapped != ch.lower()):
                special.append(ch)
    return table, "".join(special)


_TABLE, _SPECIAL_CHARS = _tables()

_SPECIAL = re.compile("[" + re.escape(_SPECIAL_CHARS) + "]")


def normalize(text: str | None) -> str:
    """Return the comparison form of ``text`` ('' for None): exactly ``reference_normalize(text)``."""
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


def contains(haystack_norm: str, needle: str | None) -> bool:
    """True when the normalized ``needle`` is non-empty and inside an already normalized haystack."""
    n = normalize_cached(needle) if needle else ""
    return bool(n) and n in haystack_norm
