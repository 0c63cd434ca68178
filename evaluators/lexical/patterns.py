"""The regular expressions that find values in text: dates, identifiers, numbers with their
currency or unit, number words, and the cheap tests that let ``analyze`` skip a pattern that cannot
match."""

from __future__ import annotations

import re

from evaluators.lexical.chars import _CJK, _starting_with
from evaluators.lexical.vocabulary import _CN_UNITS, _EN_NUMBERS, _MONTH_RE, _MONTHS, _UNIT_ALIASES

_MONTH_FIRST = "[" + "".join(sorted({m[0] for m in _MONTHS})) + "]"
_DATE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (_starting_with(r"\d", r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "ymd"),
    (_starting_with(r"\d", r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?"), "ymd"),
    (_starting_with(r"\d", r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "md"),
    (
        _starting_with(
            _MONTH_FIRST, rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I
        ),
        "mdy",
    ),
    (
        _starting_with(
            r"\d", rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?(?:,?\s+(\d{{4}}))?\b", re.I
        ),
        "dmy",
    ),
    (_starting_with(_MONTH_FIRST, rf"\b({_MONTH_RE})\.?\s+(\d{{4}})\b", re.I), "my"),
]
# identifiers: letters and digits joined (R-17, SKU-123, retry-v2, GPT4, A1B2); at least one digit
_ID_RE = re.compile(
    r"(?<![A-Za-z0-9_.])(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*(?![A-Za-z0-9_])"
)
_CURRENCY_PREFIX = r"(?:[$€£¥￥]|usd|eur|gbp|rmb|cny)"
_NUMBER_RE = _starting_with(
    r"[$€£¥￥uegrc\s\d]",  # a currency sign or word, the space before the number, or its first digit
    rf"(?P<cur>{_CURRENCY_PREFIX})?\s?(?<![A-Za-z0-9_.])(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?![\w.]*\d)(?:\s*(?P<pct>%|％))?",
    re.I,
)
_CN_NUMBER_RE = re.compile(f"([零〇一二两三四五六七八九十百千万]+)({'|'.join(_CN_UNITS)})")
_EN_WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_EN_NUMBER_WORD_RE = _starting_with(
    "[" + "".join(sorted({w[0] for w in _EN_NUMBERS})) + "]",
    r"\b(" + "|".join(_EN_NUMBERS) + r")[\s-]+([A-Za-z]+)",
    re.I,
)
_CN_UNIT_AFTER = re.compile(r"\s*(" + "|".join(_CN_UNITS) + ")")
_EN_UNIT_AFTER = re.compile(r"[\s-]?\s*([A-Za-z]+|%)")
_DIGIT = re.compile(r"\d")  # dates, identifiers and numbers all need one

# the month-name date patterns (the last three) need a month name, and every month name starts
# with one of these
_MONTH_PREFIXES = tuple(sorted({m[:3] for m in _MONTHS}))
_FOUR_DIGITS = re.compile(r"\d{4}")


def _has_number_word(low: str) -> bool:
    return any(w in low for w in _EN_NUMBERS)


_GLUED_QTY = re.compile(r"\d+(?:\.\d+)?[A-Za-z]{1,3}")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.I)
_LEADING_NUM = re.compile(r"^([\d.]+)")
_UNIT_NAMES = frozenset(_UNIT_ALIASES.values())
_TOKEN_RE = re.compile(rf"[A-Za-z]+(?:'[A-Za-z]+)?|[{_CJK}]+|\S")
