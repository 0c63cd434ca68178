"""Values of a claim or a context clause, normalized so that equal values written differently compare
equal (the structured claim check, ``evaluators.lexical.claims``).

A value is a quantity (a number with its unit, converted to a base unit of its dimension: 2 hours and
120 minutes are both 7,200 s; 2 kg, 2000 grams and 4 斤 are 2,000 g; $20 and twenty dollars are
20 USD; 5 万元 and 50000 元 are 50,000 CNY), a time of day (11:59 p.m., 23:59 and 晚上 11 点 59 分 are
minute 1,439), a date (2026-10-15, October 15, 2026 and 2026 年 10 月 15 日) or a set of weekdays
(Monday to Friday, 周一至周五, weekdays). Text is read after NFKC, so full-width digits and letters
are plain ones. Numbers may be written in digits (with thousands separators), in English words
(twenty-five, one hundred) or Chinese numerals and magnitudes (十五, 四千二百, 5 万, 1.5 亿).

Each value carries the bound written next to it, as a direction: ``upper`` (at most, up to, within,
under, below, less than, before, until, 最多, 不超过, 以内, 低于, 之前), ``lower`` (at least, more
than, over, above, after, from, 至少, 超过, 满, 以上, 之后) or ``exact`` (exactly, 固定). A claim's
bound that points the other way from the context's is a difference the check can show.

Durations in months and years compare with days within 2 % (a month is taken as 30 days, a year as
365: "12 months" is "1 year", "2 months" is "60 days"); other conversions are exact, and pounds
compare with kilograms within 2 %.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from evaluators.lexical.dates import (
    _CN_DAY,
    _CN_DAYPART_END,
    _DAY_CN_HINT,
    _DAY_CN_RE,
    _DAY_EN_RE,
    _DAY_HINT,
    _DAYS_EN,
    _EVERY_DAY,
    _PM_CN,
    _TIME_CN,
    _TIME_EN,
    _TIME_WORD,
    _TIME_WORD_HINT,
    _date_of,
    _date_patterns,
    _day_range,
    _en_day,
)
from evaluators.lexical.units import (
    _CN_AFTER_RE,
    _CN_UNIT_AFTER,
    _CURRENCY_SIGN,
    _DIMS,
    _EN_AFTER_RE,
    _EN_UNIT_AFTER,
    _EN_WORD_HINT,
    _EN_WORDS_RE,
    DIMS,
    _cn_number,
    _en_words,
    _nearest_before,
    _stem_word,
    _unit_of,
)

__all__ = ["DIMS", "Value", "ValueReading", "read_values", "same_value", "comparable"]

_NUM_RE = re.compile(
    r"(?=[\d零〇一二两三四五六七八九十百千万亿])(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s*([万亿千百]))?(?![\d:])"
    r"|([零〇一二两三四五六七八九十百千万亿]+)(个半|半)?"
)
_HALF_EN = re.compile(
    r"\b(?:half an?|an? half)\s+(hour|day|year|minute)\b|\ban?\s+(hour|day|year)\s+and\s+a\s+half\b", re.I
)


_ANY_DIGIT = re.compile(r"\d")
_DIGIT_NEXT = re.compile(r"\s{0,2}\d")
_DAY_KIND = re.compile(r"(business|working|calendar)\s")
_HAS_CJK = re.compile(r"[\u4e00-\u9fff]")
_CN_NUMERAL = re.compile("[零〇一二两三四五六七八九十百千万亿]")


@dataclass(frozen=True)
class Value:
    """One value as written (``text``) and normalized (``kind``, ``dim``, ``amount``)."""

    kind: str  # qty, time, date
    dim: str  # qty: time, mass, usd, percent ... or the counted word ("projects", "件"); "" when none
    amount: float  # qty: in the base unit; time: minute of the day; date: unused
    text: str
    direction: str | None = None  # upper, lower, exact: the bound written nearest
    pre: str | None = None  # the bound written before it (at most 5, before 3 p.m., 起飞前 24 小时)
    post: str | None = None  # and after it (30 天内, 15 minutes before the appointment)
    approx: bool = False  # a calendar duration, pounds, miles: equal within 2 %
    date: tuple[int | None, int | None, int | None] | None = None
    number: float = 0.0  # the number as written (2 in "2 hours")
    alt: float | None = None  # a time written without a.m./p.m. or 上午/下午: either half of the day

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ValueReading:
    values: tuple[Value, ...]
    weekdays: int  # bit i: weekday i (Monday = 0); 0 when none named
    rest: str  # the text with the values taken out (for the content terms)


def _bounded(
    kind: str,
    dim: str,
    amount: float,
    raw: str,
    t: str,
    start: int,
    end: int,
    cjk: bool,
    *,
    approx: bool = False,
    date: tuple[int | None, int | None, int | None] | None = None,
    number: float = 0.0,
    alt: float | None = None,
) -> Value:
    """A value with the bounds written before and after it; the nearest is the one after it in
    Chinese (30 天内 binds tighter than the 后 of 签收后), the one before it in English."""
    before, after = t[max(0, start - 30) : start], t[end : end + 16]
    m = (_CN_AFTER_RE if cjk else _EN_AFTER_RE).search(after)
    post = m.lastgroup if m else None
    pre = _nearest_before(before, cjk)
    first = (post or pre) if cjk else (pre or post)
    return Value(kind, dim, amount, raw, first, pre, post, approx, date, number, alt)


def _take(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    if any(s < end and start < e for s, e in spans):
        return False
    spans.append((start, end))
    return True


@lru_cache(maxsize=16384)
def read_values(text: str) -> ValueReading:
    """The values of ``text`` in the order found: dates, times, quantities; and its weekdays."""
    t = unicodedata.normalize("NFKC", text)
    spans: list[tuple[int, int]] = []
    found: list[tuple[int, Value]] = []
    cjk = _HAS_CJK.search(t) is not None
    digit = _ANY_DIGIT.search(t) is not None
    numeral = digit or (cjk and _CN_NUMERAL.search(t) is not None)
    low = t.lower()

    def add(start: int, end: int, v: Value) -> None:
        if _take(spans, start, end):
            found.append((start, v))

    for pattern, kind in _date_patterns(t, low) if digit else ():
        for m in pattern.finditer(t):
            d = _date_of(m, kind)
            if d is not None:
                add(
                    m.start(),
                    m.end(),
                    _bounded("date", "date", 0.0, m.group(0), t, m.start(), m.end(), cjk, date=d),
                )
    for m in _TIME_EN.finditer(t) if digit else ():
        if m.group(3):
            h, mi = int(m.group(1)), int(m.group(2) or 0)
            if not 1 <= h <= 12:
                continue
            h = h % 12 + (12 if m.group(3).lower().startswith("p") else 0)
        else:
            h, mi = int(m.group(4)), int(m.group(5))
        alt = None
        if not m.group(3):  # 下午 7:15 / 早上 7:15; a bare 7:15 in Chinese text is either half of the day
            prefix = _CN_DAYPART_END.search(t[max(0, m.start() - 4) : m.start()])
            if prefix and prefix.group(1) in _PM_CN and h < 12:
                h += 12
            elif prefix is None and cjk and 1 <= h < 12:
                alt = float(h * 60 + mi + 720)
        add(
            m.start(),
            m.end(),
            _bounded("time", "clock", float(h * 60 + mi), m.group(0), t, m.start(), m.end(), cjk, alt=alt),
        )
    for m in _TIME_CN.finditer(t) if numeral and "点" in t else ():
        h_raw = m.group(2)
        h = int(h_raw) if h_raw.isdigit() else int(_cn_number(h_raw) or 0)
        mi_raw = m.group(3) or ""
        mi = (
            30
            if mi_raw == "半"
            else int(_cn_number(mi_raw[:-1].strip()) or 0)
            if mi_raw and not mi_raw[0].isdigit()
            else int(re.sub(r"\D", "", mi_raw) or 0)
        )  # noqa: E501
        if m.group(1) in _PM_CN and h < 12:
            h += 12
        elif m.group(1) is None and not h_raw.isdigit() and h_raw in ("一", "两"):
            continue  # 一点 / 两点 without a time of day are "a little" / "two points"
        minute = float((h % 24) * 60 + mi)
        alt = minute + 720 if m.group(1) is None and 1 <= h < 12 else None
        add(
            m.start(),
            m.end(),
            _bounded("time", "clock", minute, m.group(0), t, m.start(), m.end(), True, alt=alt),
        )
    for m in _TIME_WORD.finditer(t) if _TIME_WORD_HINT.search(low) else ():
        word = (m.group(1) or m.group(2)).lower()
        minute = 720.0 if word in ("noon", "midday", "中午", "正午") else 0.0
        add(m.start(), m.end(), _bounded("time", "clock", minute, m.group(0), t, m.start(), m.end(), cjk))
    for m in _HALF_EN.finditer(t) if "half" in low else ():
        u = _unit_of(m.group(1) or m.group(2))
        if u is not None:
            n = 0.5 if m.group(1) else 1.5
            add(
                m.start(),
                m.end(),
                _bounded(
                    "qty", u[0], n * u[1], m.group(0), t, m.start(), m.end(), cjk, approx=u[2], number=n
                ),
            )
    for m in _EN_WORDS_RE.finditer(t) if _EN_WORD_HINT.search(low) else ():
        words = _en_words(m.group(0))
        if words is not None:
            _quantity(t, m.start(), m.end(), words, add, cjk)
    for m in _NUM_RE.finditer(t) if numeral else ():
        if m.group(1):
            n = float(m.group(1).replace(",", ""))
            if m.group(2):
                n *= {"万": 1e4, "亿": 1e8, "千": 1e3, "百": 1e2}[m.group(2)]
        else:
            cn = _cn_number(m.group(3))
            if cn is None:
                continue
            n = cn + (0.5 if m.group(4) else 0.0)
        _quantity(t, m.start(), m.end(), n, add, cjk, cn_numeral=m.group(3))
    days = 0
    for m in _DAY_EN_RE.finditer(t) if _DAY_HINT.search(low) else ():
        if m.group(3):
            days |= 0b0011111 if m.group(3).lower().startswith("weekday") else 0b1100000
        elif m.group(1)[0].isupper() or m.group(0).lower() in _DAYS_EN:
            days |= _day_range(_en_day(m.group(1)), _en_day(m.group(2)) if m.group(2) else None)
        else:
            continue
        _take(spans, m.start(), m.end())
    for m in _DAY_CN_RE.finditer(t) if cjk and _DAY_CN_HINT.search(t) else ():
        if m.group(3):
            days |= 0b0011111 if m.group(3) == "工作日" else 0b1100000
        else:
            days |= _day_range(_CN_DAY[m.group(1)], _CN_DAY[m.group(2)] if m.group(2) else None)
        _take(spans, m.start(), m.end())
    if days and _EVERY_DAY.search(t):
        days = 0b1111111
    rest = t
    for s, e in sorted(spans, reverse=True):
        rest = rest[:s] + " , " + rest[e:]
    return ValueReading(tuple(v for _, v in sorted(found, key=lambda x: x[0])), days, rest)


def _quantity(
    t: str,
    start: int,
    end: int,
    n: float,
    add: Callable[[int, int, Value], None],
    cjk: bool,
    cn_numeral: str | None = None,
) -> None:
    """A number at ``t[start:end]``: its unit from a currency sign before it or a unit word after it."""
    sign = _CURRENCY_SIGN.search(t[max(0, start - 4) : start])
    s0 = start - len(sign.group(0)) if sign else start
    dim, size, approx, e = "", 1.0, False, end
    if sign:
        u = _unit_of(sign.group(1))
        if u is not None:
            dim, size = u[0], u[1]
    cn = _CN_UNIT_AFTER.match(t, end)
    en = None if cn else _EN_UNIT_AFTER.match(t, end)
    if cn:
        word = cn.group(1)
        u = _unit_of(word)
        if u is not None and not (word in ("日", "周", "年") and _not_duration(t, cn.end())):
            dim, size, approx = u
        elif word in ("个工作日", "工作日"):
            dim = "business_day"
        else:
            dim = word.lstrip("个") or word
        e = cn.end()
        if dim in ("usd", "cny", "eur", "gbp") and sign is None:
            pass
    elif en:
        word = en.group(1).lower()
        u = _unit_of(word)
        if _DAY_KIND.match(word):
            dim, e = ("time", en.end()) if word.startswith("calendar") else ("business_day", en.end())
            size = 86400.0 if word.startswith("calendar") else 1.0
        elif u is not None and not sign:
            dim, size, approx = u
            e = en.end()
        elif not sign and word not in (
            "and",
            "or",
            "to",
            "of",
            "the",
            "a",
            "an",
            "in",
            "on",
            "at",
            "per",
            "for",
            "by",
        ):
            dim, e = _stem_word(word), en.end()
    if cn_numeral == "一" and dim in ("", "个", "些"):
        return  # 一个问题 / 一些: an article more often than a count
    if cn_numeral is not None and not dim:
        return
    add(s0, e, _bounded("qty", dim, n * size, t[s0:e], t, s0, e, cjk, approx=approx, number=n))


def _not_duration(t: str, after: int) -> bool:
    """日 / 周 / 年 right after a number name a day of the month, a weekday or a year, not a duration,
    when a date part follows (5 日前 is a duration only without 月 before it)."""
    return _DIGIT_NEXT.match(t, after) is not None


def comparable(a: Value, b: Value) -> bool:
    """Whether two values measure the same thing (so that differing is a difference)."""
    if a.kind != b.kind:
        return False
    if a.kind == "qty":
        return a.dim == b.dim and a.dim != ""
    return True


def same_value(a: Value, b: Value) -> bool:
    """Equal after normalization: 2 hours = 120 minutes, 23:59 = 11:59 p.m., 5 万 = 50000."""
    if a.kind != b.kind:
        return False
    if a.kind == "date":
        da, db = a.date or (None, None, None), b.date or (None, None, None)
        return all(x is None or y is None or x == y for x, y in zip(da, db, strict=True))
    if a.kind == "time":
        xs = {a.amount % 1440} | ({a.alt % 1440} if a.alt is not None else set())
        ys = {b.amount % 1440} | ({b.alt % 1440} if b.alt is not None else set())
        return not xs.isdisjoint(ys)
    if a.dim != b.dim and (a.dim in _DIMS) != (b.dim in _DIMS):
        return a.number == b.number and (a.dim == "" or b.dim == "")  # a bare number and the same one counted
    if a.dim and b.dim and a.dim != b.dim:
        # two counted words ("one checked bag" / "one bag"): the number decides
        return a.dim not in _DIMS and b.dim not in _DIMS and a.number == b.number
    if a.approx or b.approx:
        return abs(a.amount - b.amount) <= 0.02 * max(abs(a.amount), abs(b.amount))
    return abs(a.amount - b.amount) <= 1e-9 * max(1.0, abs(a.amount))
