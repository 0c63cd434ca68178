"""Text normalization shared by context derivation and evidence matching (DESIGN §3).

Comparison text is Unicode NFKC, case-folded, with every run of whitespace, punctuation and other
non-word characters removed. Removing (rather than collapsing to a space) keeps CJK text, which has
no spaces, comparable with the same text where a tokenizer or template inserted spaces.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str | None) -> str:
    """Return the comparison form of ``text`` ('' for None)."""
    if not text:
        return ""
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=16384)
def normalize_cached(text: str) -> str:
    """``normalize`` for short strings that repeat (quotes, ids)."""
    return normalize(text)


def contains(haystack_norm: str, needle: str | None) -> bool:
    """True when the normalized ``needle`` is non-empty and inside an already normalized haystack."""
    n = normalize_cached(needle) if needle else ""
    return bool(n) and n in haystack_norm
