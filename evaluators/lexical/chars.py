"""Character classes shared by the sentence splitter and the token reader, and the compile helper
that puts a first-character lookahead in front of a pattern (the lexical tier's hot regular
expressions all go through it)."""

from __future__ import annotations

import re

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def _starting_with(first: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``pattern`` compiled behind a lookahead on ``first``, a character class holding every
    character a match can start with. The matches are the same; Python's ``re`` otherwise tries the
    whole pattern at every position (a leading optional group or ``\\b`` defeats its prefix scan),
    and this makes most positions fail at the first test. ``tests/evaluators/test_lexical_patterns.py``
    checks each against the bare pattern."""
    return re.compile(f"(?={first})" + pattern, flags)


_CJK_RUN = re.compile(f"[{_CJK}]+")
_HAS_TEXT = re.compile(f"[A-Za-z{_CJK}]")
