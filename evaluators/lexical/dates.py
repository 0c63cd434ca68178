"""Times of day, weekdays and dates as the value reader (``values``) reads them: the patterns in
English and Chinese, the cheap hints that let it skip a pattern, and the date a match names."""

from __future__ import annotations

import re

from evaluators.lexical.patterns import _DATE_PATTERNS
from evaluators.lexical.vocabulary import _MONTHS

_TIME_EN = re.compile(
    r"(?=\d)(?<![\d.:])(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![A-Za-z])|(?<![\d.:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])",
    re.I,
)
_TIME_WORD = re.compile(r"\b(noon|midday|midnight)\b|(中午|午夜|正午|零点)", re.I)
_TIME_CN = re.compile(
    r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?\s*(\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*点"
    r"(?:\s*(半|\d{1,2}\s*分|[零一二三四五六七八九十]{1,3}分))?"
)
_PM_CN = ("下午", "傍晚", "晚上", "夜里")
_DAYS_EN = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_DAY_EN_RE = re.compile(
    r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?s?\b"
    r"(?:\s*(?:to|through|thru|-|–|until)\s*\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?\b)?"
    r"|\b(weekdays?|weekends?)\b",
    re.I,
)
_DAY_CN_RE = re.compile(
    r"(?:周|星期|礼拜)([一二三四五六日天])(?![次个])(?:\s*(?:至|到|-|–|~)\s*(?:周|星期|礼拜)?([一二三四五六日天]))?|(?<!个)(工作日|周末)"
)
_CN_DAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CN_DAYPART_END = re.compile(r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)\s*$")
_TIME_WORD_HINT = re.compile("noon|midday|midnight|中午|午夜|正午|零点")
_DAY_HINT = re.compile(r"mon|tue|wed|thu|fri|sat|sun|weekday|weekend")
_DAY_CN_HINT = re.compile("周|星期|礼拜|工作日")
_EVERY_DAY = re.compile(r"\bevery\s+day\b|\bdaily\b|每天|每日", re.I)
_FOUR_DIGITS = re.compile(r"\d{4}")
_MONTH_HINT = re.compile("jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec")


def _date_patterns(t: str, low: str) -> list[tuple[re.Pattern[str], str]]:
    """The date patterns that can match ``t``: each needs four digits in a row, 年, 月 or a month
    name (the order of ``lexical.patterns._DATE_PATTERNS``)."""
    month = _MONTH_HINT.search(low) is not None
    keep = (_FOUR_DIGITS.search(t) is not None, "年" in t, "月" in t, month, month, month)
    return [p for p, k in zip(_DATE_PATTERNS, keep, strict=True) if k]


def _en_day(raw: str) -> int:
    r = raw.lower()[:3]
    return ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].index(r)


def _day_range(a: int, b: int | None) -> int:
    if b is None:
        return 1 << a
    out, i = 0, a
    while True:
        out |= 1 << i
        if i == b:
            return out
        i = (i + 1) % 7


def _date_of(m: re.Match[str], kind: str) -> tuple[int | None, int | None, int | None] | None:
    g = m.groups()
    if kind == "ymd":
        y, mo, d = int(g[0]), int(g[1]), int(g[2]) if g[2] else None
        out: tuple[int | None, int | None, int | None] = (y, mo, d)
    elif kind == "md":
        out = (None, int(g[0]), int(g[1]))
    elif kind == "mdy":
        out = (int(g[2]) if g[2] else None, _MONTHS[g[0].lower()], int(g[1]))
    elif kind == "dmy":
        out = (int(g[2]) if g[2] else None, _MONTHS[g[1].lower()], int(g[0]))
    else:
        out = (int(g[1]), _MONTHS[g[0].lower()], None)
    mo2, d2 = out[1], out[2]
    if mo2 is None or not 1 <= mo2 <= 12 or (d2 is not None and not 1 <= d2 <= 31):
        return None
    return out
