"""The lexical tier (docs/architecture.md, Evaluators and metrics): sentences, claims, refusals and claim support without a model.

Deterministic rules for English and Chinese text:

- ``sentences(text)``: split on ``. ! ? ;`` and ``。！？；`` and newlines; decimals (3.5), versions
  (v1.2), file names and common abbreviations (e.g., Dr., No. 5) do not end a sentence; list markers
  are stripped and fragments without any letter or CJK character are dropped.
- ``split_claims(text)``: sentences split further into clauses at clause boundaries (English
  ``, and`` / ``, but`` / ``but`` / ``whereas`` / ``while``, and a bare ``and`` when the right side
  carries its own verb; Chinese ``，；、``), each split kept only when both sides carry content.
  Refusal and hedge clauses, questions and question echoes are not claims.
- ``is_refusal(text)``: the answer has at least one refusal or hedge clause and no claim.
- ``support(claim, sentences, min_coverage)``: a claim is *supported* when one context sentence
  covers at least ``min_coverage`` of its content terms and matches every number (with its unit),
  date, identifier and negation of the claim, every period of a rate (``per hour``, ``a year``,
  ``daily``, 每月) and every named thing in Latin script (an acronym such as PDF, a capitalized or
  camel-case word past the first, such as Kubernetes or YubiKey). It is *contradicted* when the best sentence that
  conflicts with it — the same unit with another value, another date, an identifier with the same
  prefix and another number, or the opposite polarity on a shared term — still covers at least
  ``contradiction_coverage`` of its content terms; otherwise *unsupported*. Supported beats
  contradicted (a claim one context sentence states is faithful to the context even when another
  sentence conflicts with it); ties go to the higher coverage, then to the earlier sentence.
- ``fact_expressed(fact, aliases, answer)``: normalized containment of the text or an alias, else
  the fact is supported by a sentence of the answer under the rules above (numbers must match).

Content terms: English words lower-cased, stop words removed, lightly stemmed ("retrying" ~
"retry", "days" ~ "day"); Chinese CJK character bigrams (a one-character run is a unigram), never
across a negation cue, digits or punctuation, without bigrams holding a particle (的 了 吗 …).
Terms right after a negation cue are *negated*: a claim's negated term must be negated in the
sentence too, and a claim term the sentence only states negated is a polarity conflict.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from evaluators.text import normalize

__all__ = [
    "Verdict",
    "Analysis",
    "analyze",
    "sentences",
    "clauses",
    "split_claims",
    "is_refusal",
    "is_refusal_sentence",
    "support",
    "fact_expressed",
    "content_terms",
    "DEFAULT_MIN_COVERAGE",
    "DEFAULT_CONTRADICTION_COVERAGE",
]

DEFAULT_MIN_COVERAGE = 0.6
DEFAULT_CONTRADICTION_COVERAGE = 0.5

Label = Literal["supported", "contradicted", "unsupported"]

# --------------------------------------------------------------------------------------------
# character classes

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

# --------------------------------------------------------------------------------------------
# sentences

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


# --------------------------------------------------------------------------------------------
# tokens: quantities, dates, identifiers, content terms, negation

_STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before
    being below between both but by can could did do does doing don down during each either else etc
    even ever every few for from further had has have having he her here hers herself him himself
    his how however i if in into is it its itself just let lets like may me might more most much
    must my myself nor now of off on once only or other ought our ours ourselves out over own per
    please same shall she should so some such than that the their theirs them themselves then there
    these they this those though through thus to too under until up upon us very via was we were
    what when where whether which while who whom whose why will with within would yes yet you your
    yours yourself yourselves get gets got one ones s t also then there's it's that's i'm you're
    they're we're
    """.split()  # noqa: SIM905
)
# never stop words: negation cues, handled apart
_NEG_WORDS = frozenset(["not", "no", "never", "cannot", "none", "nothing", "neither", "nor", "without"])
_CONTRACTIONS = [
    (re.compile(r"\bcan't\b|\bcan’t\b", re.I), "can not"),
    (_CANNOT_RE := _starting_with("c", r"\bcannot\b", re.I), "can not"),
    (re.compile(r"\bwon't\b|\bwon’t\b", re.I), "will not"),
    (re.compile(r"\bshan't\b", re.I), "shall not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
]
_CN_NEG_CUES = ("并非", "没有", "无法", "不", "没", "无", "未", "非", "别", "勿")
# words that contain a negation character but are not negations
_CN_NOT_NEG = (
    "非常",
    "不过",
    "不但",
    "不仅",
    "不论",
    "无论",
    "未来",
    "除非",
    "是非",
    "无线",
    "不久",
    "不少",
    "不错",
    "不断",
    "不管",
    "毫不",
    "无疑",
    "不如",
    "未必",
    "无数",
    "不妨",
    "莫非",
    "非得",
    "不禁",
)
_CN_PARTICLES = frozenset("的了吗呢吧啊呀嘛么着")
_CN_NEG_RE = re.compile("|".join(sorted(_CN_NOT_NEG, key=len, reverse=True)) + "|" + "|".join(_CN_NEG_CUES))

_UNIT_ALIASES = {
    "day": "day",
    "天": "day",
    "日": "day",
    "d": "day",
    "week": "week",
    "wk": "week",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "month": "month",
    "mo": "month",
    "月": "month",
    "个月": "month",
    "year": "year",
    "yr": "year",
    "年": "year",
    "hour": "hour",
    "hr": "hour",
    "h": "hour",
    "小时": "hour",
    "个小时": "hour",
    "minute": "minute",
    "min": "minute",
    "分钟": "minute",
    "second": "second",
    "sec": "second",
    "s": "second",
    "秒": "second",
    "秒钟": "second",
    "millisecond": "ms",
    "ms": "ms",
    "毫秒": "ms",
    "percent": "%",
    "%": "%",
    "pct": "%",
    "percentage": "%",
    "元": "cny",
    "块": "cny",
    "块钱": "cny",
    "rmb": "cny",
    "cny": "cny",
    "yuan": "cny",
    "¥": "cny",
    "￥": "cny",
    "$": "usd",
    "usd": "usd",
    "dollar": "usd",
    "美元": "usd",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "欧元": "eur",
    "£": "gbp",
    "gbp": "gbp",
    "pound": "gbp",
    "次": "times",
    "time": "times",
    "倍": "x",
    "x": "x",
    "gb": "gb",
    "mb": "mb",
    "kb": "kb",
    "tb": "tb",
}
_CN_UNITS = sorted(
    [
        "天",
        "日",
        "周",
        "星期",
        "礼拜",
        "个月",
        "月",
        "年",
        "小时",
        "个小时",
        "分钟",
        "秒钟",
        "秒",
        "毫秒",
        "元",
        "块钱",
        "块",
        "美元",
        "欧元",
        "次",
        "倍",
        "折",
        "人",
        "岁",
        "个",
        "条",
        "项",
        "公里",
        "米",
        "克",
        "千克",
        "斤",
        "页",
        "份",
        "张",
        "位",
        "家",
        "笔",
        "台",
    ],
    key=len,
    reverse=True,
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_MULT = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_EN_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
}
_MONTHS = {
    "jan": 1,
    "january": 1,
    "feb": 2,
    "february": 2,
    "mar": 3,
    "march": 3,
    "apr": 4,
    "april": 4,
    "may": 5,
    "jun": 6,
    "june": 6,
    "jul": 7,
    "july": 7,
    "aug": 8,
    "august": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "oct": 10,
    "october": 10,
    "nov": 11,
    "november": 11,
    "dec": 12,
    "december": 12,
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

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
# analyze skips the patterns that cannot match the text (same result; False runs every pattern)
_SKIP_IMPOSSIBLE = True
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


@lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4 or w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
    elif w.endswith("es") and len(w) > 4 and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _unit(raw: str | None) -> str | None:
    if not raw:
        return None
    r = raw.lower()
    if r in _UNIT_ALIASES:
        return _UNIT_ALIASES[r]
    s = _stem(r)
    if s in _UNIT_ALIASES:
        return _UNIT_ALIASES[s]
    if r.endswith("s") and r[:-1] in _UNIT_ALIASES:
        return _UNIT_ALIASES[r[:-1]]
    return s


def _cn_number(text: str) -> float | None:
    total, section, current = 0, 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch in _CN_MULT:
            mult = _CN_MULT[ch]
            if mult == 10000:
                total += (section + current) * mult
                section, current = 0, 0
            else:
                section += (current or 1) * mult
                current = 0
        else:
            return None
    return float(total + section + current)


def _num(raw: str) -> float:
    return float(raw.replace(",", ""))


def _fmt(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str | None

    def __str__(self) -> str:
        return f"{_fmt(self.value)} {self.unit}" if self.unit else _fmt(self.value)


@dataclass(frozen=True)
class Analysis:
    """The lexical reading of one piece of text."""

    text: str
    terms: frozenset[str]  # all content terms
    positive: frozenset[str]  # terms stated without a negation
    negated: frozenset[str]  # terms right after a negation cue
    bare_negation: bool  # a negation cue with no term after it
    quantities: tuple[Quantity, ...]
    dates: tuple[tuple[int | None, int | None, int | None], ...]
    identifiers: tuple[str, ...]
    periods: frozenset[str] = (
        frozenset()
    )  # rate periods: "per hour", "a year", "daily", 每天 -> hour, year, day
    names: frozenset[str] = frozenset()  # named things (stems): acronyms, capitalized words past the first

    @property
    def has_negation(self) -> bool:
        return bool(self.negated) or self.bare_negation


def _id_key(raw: str) -> str:
    return re.sub(r"[-_/]", "", raw.upper())


_ID_PREFIX = re.compile(r"[A-Z]+")


@lru_cache(maxsize=4096)
def _id_prefix(key: str) -> str:
    m = _ID_PREFIX.match(key)
    return m.group(0) if m else ""


# A rate's period: "per hour", "an hour", "each day", "every month", "/s", "daily"; Chinese 每天, 每小时.
# "every 6 hours" is a quantity (6 hours), not a period.
_PERIOD_WORD = r"(second|sec|minute|min|hour|hr|day|week|month|year)s?"
_EN_PERIOD_RE = re.compile(rf"(?:\bper|\ban?|\beach|\bevery|/)\s*{_PERIOD_WORD}\b", re.I)
_EN_PERIOD_ADVERB = {"secondly": "second", "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month",
                     "yearly": "year", "annually": "year", "annual": "year"}  # fmt: skip
_EN_PERIOD_ADVERB_RE = re.compile(r"\b(" + "|".join(_EN_PERIOD_ADVERB) + r")\b", re.I)
_CN_PERIOD_RE = re.compile(r"每\s*(秒钟|秒|分钟|个小时|小时|天|日|周|星期|个月|月|年)")
_PERIOD_ALIASES = {"sec": "second", "min": "minute", "hr": "hour"}


def _periods(text: str) -> frozenset[str]:
    """The periods of the rates in ``text`` (``per hour`` -> hour), as canonical unit names."""
    if "per" not in text and "每" not in text and "/" not in text and not _EN_PERIOD_ADVERB_RE.search(text):
        if not re.search(r"\b(?:an?|each|every)\s", text, re.I):
            return frozenset()
    out: set[str] = set()
    for m in _EN_PERIOD_RE.finditer(text):
        w = m.group(1).lower()
        out.add(_PERIOD_ALIASES.get(w, w))
    for m in _EN_PERIOD_ADVERB_RE.finditer(text):
        if m.group(1).lower() != "annual":  # "the annual plan" names a plan, not a rate
            out.add(_EN_PERIOD_ADVERB[m.group(1).lower()])
    for m in _CN_PERIOD_RE.finditer(text):
        out.add(_UNIT_ALIASES.get(m.group(1), m.group(1)))
    return frozenset(out)


_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")
_SENTENCE_START = re.compile(r"(^|[.!?。！？；;:\n]\s*|[\"“‘(\[]\s*)$")


def _names(text: str) -> frozenset[str]:
    """Named things in Latin script: acronyms (PDF, SMS) anywhere, and capitalized or camel-case
    words (Kubernetes, YubiKey) that do not start a sentence; as stems of their first word part."""
    out: set[str] = set()
    for m in _NAME_RE.finditer(text):
        tok = m.group(0)
        if not any(c.isupper() for c in tok):
            continue
        word = re.split(r"[-']", tok)[0]
        low = word.lower()
        if low in _STOP_WORDS or low in _NEG_WORDS or len(low) < 2:
            continue
        acronym = word.isupper() and len(word) >= 2
        camel = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
        if acronym or camel or not _SENTENCE_START.search(text[: m.start()]):
            out.add(_stem(low))
    return frozenset(out)


@lru_cache(maxsize=16384)
def analyze(text: str) -> Analysis:
    """Content terms, negation, quantities, dates and identifiers of ``text`` (cached)."""
    t, dates, identifiers, quantities = _scan(text)

    if not _SKIP_IMPOSSIBLE or "'" in t or "’" in t:
        for pattern, repl in _CONTRACTIONS:
            t = pattern.sub(repl, t)
    else:  # only "cannot" needs no apostrophe
        t = _CANNOT_RE.sub("can not", t)

    terms: set[str] = set()
    positive: set[str] = set()
    negated: set[str] = set()
    bare = False
    pending_neg = False  # English: the next content word is negated
    for tok in _TOKEN_RE.findall(t):
        if tok[0].isascii() and tok[0].isalpha():
            low = tok.lower()
            if low in _NEG_WORDS:
                if pending_neg:
                    bare = True
                pending_neg = True
                continue
            if low in _STOP_WORDS or len(low) < 2:
                continue
            term = _stem(low)
            terms.add(term)
            if pending_neg:
                negated.add(term)
                pending_neg = False
            else:
                positive.add(term)
        elif _CJK_RUN.fullmatch(tok):
            if pending_neg:
                bare = True
                pending_neg = False
            b = _cjk_terms(tok)
            terms |= b[0]
            positive |= b[1]
            negated |= b[2]
            bare = bare or b[3]
        elif tok in ",;:.!?()[]{}、，；：。！？" and pending_neg:
            bare = True
            pending_neg = False
    if pending_neg:
        bare = True
    return Analysis(
        periods=_periods(text),
        names=_names(t),
        text=text,
        terms=frozenset(terms),
        positive=frozenset(positive),
        negated=frozenset(negated),
        bare_negation=bare,
        quantities=tuple(dict.fromkeys(quantities)),
        dates=tuple(dict.fromkeys(dates)),
        identifiers=tuple(dict.fromkeys(identifiers)),
    )


def quantities_of(text: str) -> tuple[Quantity, ...]:
    """``analyze(text).quantities``, without working out the content terms."""
    return tuple(dict.fromkeys(_scan(text)[3]))


@lru_cache(maxsize=4096)
def quantity_set(text: str) -> frozenset[Quantity]:
    """The quantities of ``text`` as a set (cached: documents' texts come back trace after trace)."""
    return frozenset(_scan(text)[3])


@lru_cache(maxsize=4096)
def _scan(
    text: str,
) -> tuple[str, list[tuple[int | None, int | None, int | None]], list[str], list[Quantity]]:
    """The first part of ``analyze``: dates, identifiers and quantities taken out of the text
    (NFKC) in that order, and what is left of it. The lists are shared: callers copy them."""
    t = unicodedata.normalize("NFKC", text)
    # every pattern below but the English number words needs a digit, a CJK numeral or an apostrophe
    # ("cannot" aside): skipping the ones that cannot match gives the same result
    skip = _SKIP_IMPOSSIBLE
    has_digit = not skip or _DIGIT.search(t) is not None
    dates: list[tuple[int | None, int | None, int | None]] = []
    date_patterns = _DATE_PATTERNS if has_digit else []
    if skip and date_patterns:
        # each pattern needs: four digits in a row / 年 / 月 / a month name (the last three); the
        # substitutions only take text out, so what the text lacks now no later step can find
        keep = [_FOUR_DIGITS.search(t) is not None, "年" in t, "月" in t]
        if t.isascii():  # (case-insensitive matching is plain ASCII there)
            low = t.lower()
            keep += [any(m in low for m in _MONTH_PREFIXES)] * 3
        else:
            keep += [True] * 3
        date_patterns = [p for p, k in zip(_DATE_PATTERNS, keep, strict=True) if k]
    for pattern, kind in date_patterns:

        def _date(m: re.Match[str], kind: str = kind) -> str:
            g = m.groups()
            y: int | None
            mo: int | None
            d: int | None
            if kind == "ymd":
                y, mo, d = int(g[0]), int(g[1]), int(g[2]) if g[2] else None
            elif kind == "md":
                y, mo, d = None, int(g[0]), int(g[1])
            elif kind == "mdy":
                y, mo, d = int(g[2]) if g[2] else None, _MONTHS[g[0].lower()], int(g[1])
            elif kind == "dmy":
                y, mo, d = int(g[2]) if g[2] else None, _MONTHS[g[1].lower()], int(g[0])
            else:
                y, mo, d = int(g[1]), _MONTHS[g[0].lower()], None
            if mo is None or not 1 <= mo <= 12 or (d is not None and not 1 <= d <= 31):
                return m.group(0)
            dates.append((y, mo, d))
            return " , "

        t = pattern.sub(_date, t)

    identifiers: list[str] = []

    def _ident(m: re.Match[str]) -> str:
        raw = m.group(0)
        # a number with a unit glued on ("30s", "5GB", "2026年") is a quantity, not an identifier
        if _GLUED_QTY.fullmatch(raw) and _unit(_LEADING_NUM.sub("", raw)) in _UNIT_NAMES:
            return _LEADING_NUM.sub(r"\1 ", raw)
        if _ORDINAL.fullmatch(raw):
            return raw[:-2]
        identifiers.append(_id_key(raw))
        return " , "

    if has_digit:
        t = _ID_RE.sub(_ident, t)

    quantities: list[Quantity] = []

    def _cn_qty(m: re.Match[str]) -> str:
        v = _cn_number(m.group(1))
        if v is None:
            return m.group(0)
        # "一" alone before a classifier is usually an article ("一个问题"): keep only time/money units
        unit = _UNIT_ALIASES.get(m.group(2))
        if unit is None and v == 1:
            return m.group(0)
        quantities.append(Quantity(v, unit or m.group(2)))
        return f" {m.group(2)}"

    if not skip or not t.isascii():
        t = _CN_NUMBER_RE.sub(_cn_qty, t)

    def _en_qty(m: re.Match[str]) -> str:
        quantities.append(Quantity(float(_EN_NUMBERS[m.group(1).lower()]), _unit(m.group(2))))
        return f" {m.group(2)}"

    if not skip or not t.isascii() or _has_number_word(t.lower()):  # ASCII text without any: no match
        t = _EN_NUMBER_WORD_RE.sub(
            lambda m: _en_qty(m) if m.group(2).lower() not in _STOP_WORDS else m.group(0),
            t,
        )

    def _qty(m: re.Match[str]) -> str:
        value = _num(m.group("num"))
        unit: str | None = None
        if m.group("pct"):
            unit = "%"
        elif m.group("cur"):
            unit = _unit(m.group("cur"))
        else:
            cn = _CN_UNIT_AFTER.match(t, m.end())
            en = _EN_UNIT_AFTER.match(t, m.end())
            if cn:
                unit = _UNIT_ALIASES.get(cn.group(1), cn.group(1))
            elif en and en.group(1).lower() not in _STOP_WORDS and en.group(1).lower() not in _NEG_WORDS:
                unit = _unit(en.group(1))
        quantities.append(Quantity(value, unit))
        return " , "

    if has_digit:
        t = _NUMBER_RE.sub(_qty, t)
    return t, dates, identifiers, quantities


@lru_cache(maxsize=16384)
def _cjk_terms(run: str) -> tuple[frozenset[str], frozenset[str], frozenset[str], bool]:
    """Bigrams of a CJK run, split at negation cues; the first bigrams after a cue are negated
    (cached: runs repeat across texts)."""
    terms: set[str] = set()
    positive: set[str] = set()
    negated: set[str] = set()
    bare = False
    pieces: list[tuple[str, bool]] = []  # (segment, follows a negation cue)
    pos = 0
    neg_next = False
    for m in _CN_NEG_RE.finditer(run):
        if m.group(0) in _CN_NOT_NEG:
            continue
        pieces.append((run[pos : m.start()], neg_next))
        pos = m.end()
        neg_next = True
    pieces.append((run[pos:], neg_next))
    for seg, is_neg in pieces:
        if is_neg and not seg:
            bare = True
            continue
        grams = [seg] if len(seg) == 1 else [seg[i : i + 2] for i in range(len(seg) - 1)]
        for i, g in enumerate(grams):
            if not _CN_PARTICLES.isdisjoint(g):
                continue
            terms.add(g)
            if is_neg and i < 2:
                negated.add(g)
            else:
                positive.add(g)
        if is_neg and not grams:
            bare = True
    return frozenset(terms), frozenset(positive), frozenset(negated), bare


def content_terms(text: str) -> frozenset[str]:
    """The content terms of ``text`` (stemmed English words, CJK bigrams)."""
    return analyze(text).terms


# --------------------------------------------------------------------------------------------
# refusals and hedges

_EN_REFUSAL = [
    r"\bi (?:do not|don't|really don't) know\b",
    r"\bi(?: am|'m) (?:not sure|unsure|not certain|unable|not able|sorry)\b",
    r"\bi (?:can ?not|can't|could not|couldn't|am unable to|was unable to|was not able to) "
    r"(?:find|answer|determine|tell|say|provide|confirm|locate|help|see)\b",
    r"\bi (?:do not|don't) have (?:enough |sufficient |any |the )?(?:information|data|details|context|knowledge|access)\b",
    r"\b(?:the|these|those|provided|given|available|retrieved|your) (?:documents?|context|sources?|passages?|"
    r"information|knowledge base|materials?|texts?|records?|docs|excerpts?|search results?)\b[^.]*?\b(?:do|does|did) "
    r"not (?:say|mention|specify|state|contain|include|provide|cover|indicate|address|describe|discuss|"
    r"give|list|explain|tell|answer|show|have|offer)\b",
    r"\b(?:is|are) not (?:mentioned|specified|stated|covered|provided|given|described|addressed|listed|"
    r"included|available|documented) in (?:the|these|any|my) (?:documents?|context|sources?|passages?|"
    r"information|knowledge base|materials?|docs)\b",
    r"\bthere (?:is|are) no (?:information|mention|data|details?|documentation|record)\b",
    r"\bno (?:relevant )?(?:information|data|details|documentation) (?:is |was )?(?:available|provided|given|found|"
    r"about|on|regarding|in)\b",
    r"\b(?:not enough|insufficient|no sufficient) (?:information|context|data|evidence)\b",
    r"\b(?:can ?not|can't|could not) be (?:determined|answered|found|confirmed) (?:from|based on|with|given)\b",
    r"\bunable to (?:find|answer|determine|provide|confirm|locate)\b",
    r"^(?:sorry|unfortunately|i apologi[sz]e)\b.*\b(?:not|no|unable|can't|cannot)\b",
    r"\bbeyond (?:the scope|my knowledge)\b",
    r"\b(?:i|we) (?:can ?not|can't|am not able to) (?:help|assist) with\b",
]
_EN_HEDGE = [
    r"^(?:please )?(?:contact|consult|reach out to|ask|check with|call|email) (?:our |the |your |a )?"
    r"(?:support|customer (?:service|support|care)|help ?desk|administrator|admin|human|agent|representative|"
    r"team|staff|sales|it department)\b",
    r"^(?:please )?(?:contact|consult|reach out to)\b.*\bfor (?:more|further|additional)? ?(?:details|information|help|assistance)\b",
    r"^for (?:more|further|additional) (?:details|information|help)\b.*\b(?:contact|consult|see|refer|check|visit)\b",
    r"^(?:i )?(?:hope this helps|let me know if)\b",
    r"^(?:please )?(?:refer to|check|see) (?:the )?(?:official |relevant )?(?:documentation|docs|website|policy page|help center)\b",
    r"^(?:sorry|unfortunately)$",
]
_CN_REFUSAL = [
    r"不清楚",
    r"不知道",
    r"不确定",
    r"不太确定",
    r"无法(?:回答|确定|判断|提供|找到|确认|得知|查到|给出|获取|回复)",
    r"(?:没有|未能?|并未|没能)(?:找到|查到|检索到|搜到|获取到?)(?:相关|有关|对应|该|此|这)?",
    r"(?:资料|文档|文件|知识库|上下文|材料|参考信息|检索结果|提供的(?:内容|信息|资料|文档)|现有(?:信息|资料))"
    r"(?:里|中|内|里面|当中|之中)?(?:并)?(?:没有|未|没|不包含|不含|无)",
    r"(?:没有|暂无|无|缺少|缺乏)(?:相关|有关|关于[^，,。]*的|这方面的|具体的?|足够的?|明确的?)(?:信息|资料|说明|记载|内容|数据|规定)",
    r"(?:未|没有|并未|没)(?:提及|提到|说明|记载|涉及|明确|写明|规定)",
    r"^(?:抱歉|对不起|很抱歉|不好意思)(?:[，,]|$)",
    r"我(?:无法|不能|没法|没办法)(?:回答|确定|提供|判断)",
    r"超出(?:了)?(?:我的)?(?:知识|回答)?范围",
]
_CN_HEDGE = [
    r"(?:建议|请|可以|您可以|麻烦)?(?:您)?(?:咨询|联系|询问|转接|致电)(?:一下)?(?:人工|在线|官方)?(?:客服|人员|工作人员|管理员|售后|专员)",
    r"^(?:请|建议)(?:您)?(?:咨询|联系)",
    r"^(?:希望(?:对您)?有(?:所)?帮助|如有(?:其他|任何)?(?:疑问|问题))",
]
_ECHO = [
    r"^(?:you asked|you are asking|your question (?:is|was)|regarding your question|as for your question)\b",
    r"^(?:您|你)(?:问的是|的问题是|询问的是|想了解)",
    r"^关于(?:您|你)的问题",
]


@lru_cache(maxsize=256)
def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I) if patterns else None


_REFUSAL_RE = _compile(tuple(_EN_REFUSAL + _CN_REFUSAL + _EN_HEDGE + _CN_HEDGE))
_ECHO_RE = _compile(tuple(_ECHO))


def _clean(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).strip()
    t = t.replace("’", "'")
    return re.sub(r"\s+", " ", t)


def is_refusal_sentence(text: str, extra_patterns: Sequence[str] = ()) -> bool:
    """Whether a sentence or clause is a refusal or a hedge (not a claim)."""
    return _is_refusal_sentence(text, tuple(extra_patterns))


@lru_cache(maxsize=16384)
def _is_refusal_sentence(text: str, extra_patterns: tuple[str, ...]) -> bool:
    t = _clean(text).strip(" .。!！;；,，")
    if not t:
        return False
    pat = _REFUSAL_RE
    if pat is not None and pat.search(t):
        return True
    extra = _compile(tuple(extra_patterns))
    return bool(extra is not None and extra.search(t))


@lru_cache(maxsize=16384)
def _is_question(text: str) -> bool:
    """Whether a sentence asks (cached: an answer's sentences come back in other answers)."""
    t = _clean(text)
    if t.endswith(("?", "？")):
        return True
    if re.search("[吗呢]$", t.rstrip("。.!！")):
        return True
    return bool(_ECHO_RE is not None and _ECHO_RE.search(t))


# --------------------------------------------------------------------------------------------
# claims

_EN_CLAUSE_SPLIT = re.compile(
    r"\s*(?:,\s*(?:and|but|yet|so|whereas|while)\b|;|\bbut\b|\bwhereas\b|\bhowever,)\s*", re.I
)
_EN_AND = re.compile(r"\s+and\s+", re.I)
_VERBISH = re.compile(
    r"^(?:\w+\s+){0,3}?(?:is|are|was|were|be|been|can|could|will|would|shall|should|may|might|must|has|have|had|"
    r"do|does|did|need|needs|remain|remains|expire|expires|get|gets|\w+ed|\w+s)\b",
    re.I,
)
_CN_CLAUSE_SPLIT = re.compile(r"[，,；;、]")


def _carries_content(text: str) -> bool:
    a = analyze(text)
    n = len(a.terms)
    extra = len(a.quantities) + len(a.dates) + len(a.identifiers)
    return n >= 2 or (n >= 1 and extra >= 1) or (n >= 1 and is_refusal_sentence(text))


def _merge_split(parts: list[str]) -> list[str]:
    """Merge pieces without content into their neighbour (prefer the left one)."""
    out: list[str] = []
    carry = ""
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if carry:
            p = f"{carry} {p}"
            carry = ""
        if _carries_content(p):
            out.append(p)
        elif out:
            out[-1] = f"{out[-1]}, {p}" if re.search("[A-Za-z]", p) else f"{out[-1]}，{p}"
        else:
            carry = p
    if carry:
        if out:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out


def clauses(sentence: str) -> list[str]:
    """A sentence split at clause boundaries where both sides carry content."""
    return list(_clauses(sentence))


@lru_cache(maxsize=16384)
def _clauses(sentence: str) -> tuple[str, ...]:
    if _CJK_RUN.search(sentence) and not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", sentence):
        parts = _CN_CLAUSE_SPLIT.split(sentence)
    else:
        parts = _EN_CLAUSE_SPLIT.split(sentence)
        refined: list[str] = []
        for p in parts:
            pieces = _EN_AND.split(p)
            cur = pieces[0]
            for nxt in pieces[1:]:
                if _VERBISH.match(nxt) and _carries_content(cur) and _carries_content(nxt):
                    refined.append(cur)
                    cur = nxt
                else:
                    cur = f"{cur} and {nxt}"
            refined.append(cur)
        parts = refined
    parts = [p.strip(" \t,，;；、") for p in parts]
    return tuple(_merge_split(parts) or [sentence.strip()])


@lru_cache(maxsize=1024)
def _claim_units(text: str | None) -> tuple[tuple[str, str], ...]:
    """(clause, kind) pairs: kind is claim, refusal, question or empty (cached: the claims and the
    refusal check of an answer both start here)."""
    out: list[tuple[str, str]] = []
    for s in sentences(text):
        if _is_question(s):
            out.append((s, "question"))
            continue
        for c in clauses(s):
            body = c.strip(" .。!！;；,，")
            if not body or not _HAS_TEXT.search(body):
                continue
            out.append((body, "claim"))
    return tuple(out)


def split_claims(text: str | None, extra_refusal_patterns: Sequence[str] = ()) -> list[str]:
    """The atomic claims of an answer; refusal and hedge clauses and questions are not claims."""
    if not text:
        return []
    return list(_split_claims(text, tuple(extra_refusal_patterns)))


@lru_cache(maxsize=4096)
def _split_claims(text: str, extra_refusal_patterns: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for clause, kind in _claim_units(text):
        if kind != "claim" or is_refusal_sentence(clause, extra_refusal_patterns):
            continue
        if not analyze(clause).terms and not analyze(clause).quantities and not analyze(clause).identifiers:
            continue  # "Yes." / "好的。"
        out.append(clause)
    return tuple(out)


def is_refusal(text: str | None, extra_patterns: Sequence[str] = ()) -> bool:
    """An answer made only of refusal or hedge sentences (at least one) is a refusal."""
    if not text or not text.strip():
        return False
    units = _claim_units(text)
    saw_refusal = False
    for clause, kind in units:
        if kind == "question":
            continue
        if is_refusal_sentence(clause, extra_patterns):
            saw_refusal = True
            continue
        a = analyze(clause)
        if a.terms or a.quantities or a.identifiers:
            return False
    if not saw_refusal:
        # a whole-answer check catches refusals split oddly by the clause rules
        return is_refusal_sentence(text, extra_patterns) and not split_claims(text, extra_patterns)
    return True


# --------------------------------------------------------------------------------------------
# support


@dataclass(frozen=True)
class Verdict:
    label: Label
    sentence: str | None
    coverage: float
    index: int | None = None  # index of ``sentence`` in the sentences given
    missing: tuple[str, ...] = ()  # claim numbers, dates, ids or negations not matched there
    conflicts: tuple[str, ...] = ()  # what in the sentence conflicts with the claim


def _ignore_terms(ignore: str | Iterable[str] | None) -> frozenset[str]:
    if not ignore:
        return frozenset()
    if isinstance(ignore, str):
        return analyze(ignore).terms
    out: set[str] = set()
    for w in ignore:
        out |= analyze(w).terms
    return frozenset(out)


def _qty_matches(q: Quantity, others: Sequence[Quantity]) -> bool:
    """Same value, and the same unit when the claim's is a known one (time, money, size, percent,
    count words): a claim's word after a number that is no unit ("600 API requests", "2026 took")
    does not have to follow the number in the sentence too."""
    qu = q.unit if q.unit in _UNIT_NAMES else None
    return any(o.value == q.value and (qu is None or o.unit is None or o.unit == qu) for o in others)


def _date_matches(d: tuple[int | None, ...], others: Sequence[tuple[int | None, ...]]) -> bool:
    return any(all(a is None or b is None or a == b for a, b in zip(d, o, strict=True)) for o in others)


def _compare(
    claim: Analysis, keys: frozenset[str], sent: Analysis
) -> tuple[float, float, list[str], list[str]]:
    """Coverage of the claim's content terms (with the same polarity, and in any polarity), the
    claim tokens unmatched, and the conflicts."""
    coverage, topical = _scores(claim, keys, sent)
    missing, conflicts = _mismatches(claim, sent)
    return coverage, topical, missing, conflicts


def _scores(claim: Analysis, keys: frozenset[str], sent: Analysis) -> tuple[float, float]:
    """Coverage (a key term stated positively, or negated in both) and topicality (a key term in
    any polarity) of the claim's key terms in the sentence; when both negate the same thing,
    coverage is the topicality."""
    if keys:
        # the key terms the sentence states, plus those both negate that it never states positively
        covered = len(keys & sent.positive)
        negated_keys = keys & claim.negated
        if negated_keys:
            covered += len((negated_keys & sent.negated) - sent.positive)
        coverage = covered / len(keys)
        topical = len(keys & sent.terms) / len(keys)
    else:
        coverage = topical = 1.0
    if claim.has_negation and (
        not sent.negated.isdisjoint(claim.terms)
        or (claim.bare_negation and not claim.negated and sent.has_negation)
    ):
        coverage = topical  # both negate the same thing: "No refunds are given" ~ "Refunds are not given"
    return coverage, topical


def _mismatches(claim: Analysis, sent: Analysis) -> tuple[list[str], list[str]]:
    """The claim's numbers, dates, ids and negations the sentence does not match, and the conflicts."""
    missing: list[str] = []
    conflicts: list[str] = []
    for q in claim.quantities:
        if not _qty_matches(q, sent.quantities):
            missing.append(str(q))
            if q.unit is not None and any(o.unit == q.unit and o.value != q.value for o in sent.quantities):
                others = ", ".join(str(o) for o in sent.quantities if o.unit == q.unit)
                conflicts.append(f"{q} vs {others}")
    for d in claim.dates:
        if not _date_matches(d, sent.dates):
            missing.append("-".join("?" if x is None else str(x) for x in d))
            if sent.dates:
                conflicts.append("date differs")
    for ident in claim.identifiers:
        if ident not in sent.identifiers:
            missing.append(ident)
            pre = _id_prefix(ident)
            if any(_id_prefix(o) == pre for o in sent.identifiers):
                conflicts.append(
                    f"{ident} vs {', '.join(o for o in sent.identifiers if _id_prefix(o) == pre)}"
                )
    for p in sorted(claim.periods - sent.periods):
        missing.append(f"per {p}")
        if sent.periods:
            conflicts.append(f"per {p} vs per {', '.join(sorted(sent.periods))}")
    for name in sorted(claim.names - sent.terms - sent.names):
        missing.append(name)  # a named thing the sentence never mentions
    negated_here = sent.negated & claim.terms  # the sentence negates something the claim is about
    if claim.has_negation:
        agree = bool(negated_here) or (claim.bare_negation and not claim.negated and sent.has_negation)
        if not agree:
            missing.append("not " + (", ".join(sorted(claim.negated)) or "(negation)"))
            flipped = sorted(claim.negated & sent.positive)
            if flipped:
                conflicts.append(f"negation of {', '.join(flipped)} not in context")
    else:
        flipped = sorted(t for t in negated_here if t not in sent.positive)
        if flipped:
            missing.extend(f"not {t}" for t in flipped)
            conflicts.append(f"{', '.join(flipped)} negated in context")
    return missing, conflicts


@lru_cache(maxsize=16384)
def _mismatches_of(claim: str, sentence: str) -> tuple[list[str], list[str]]:
    """``_mismatches`` of the two texts' analyses, which depend on the texts alone (cached: the same
    claims come back against the same document sentences trace after trace). Callers only read the
    lists."""
    return _mismatches(analyze(claim), analyze(sentence))


def support(
    claim: str,
    sentences: Sequence[str],
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    *,
    ignore: str | Iterable[str] | None = None,
    contradiction_coverage: float | None = DEFAULT_CONTRADICTION_COVERAGE,
) -> Verdict:
    """Whether one of ``sentences`` supports ``claim`` (see the module docstring).

    ``ignore``: query text or words whose terms do not count toward coverage (restated question
    terms); when they would leave the claim without content terms, every term counts.
    """
    ca = analyze(claim)
    ign = _ignore_terms(ignore)
    keys = ca.terms - ign if ign else ca.terms
    if not keys:
        keys = ca.terms
    contra_min = min_coverage if contradiction_coverage is None else min(contradiction_coverage, min_coverage)
    best_support: tuple[float, int] | None = None
    best_contra: tuple[float, int, list[str], list[str]] | None = None
    best_any: tuple[float, int, list[str]] | None = None
    # A sentence sharing no content term with the claim has coverage and topicality 0: it can
    # neither support nor contradict, and it is the best "unsupported" one only when every sentence
    # scores 0, which gives the same verdict (no sentence). So it is skipped without comparing.
    skip_disjoint = bool(keys) and min_coverage > 0 and contra_min > 0
    # Coverage and topicality come first: a sentence that can neither support (coverage below
    # min_coverage), contradict (topicality below contra_min) nor beat the best unsupported one
    # (coverage not higher) changes nothing, so its numbers, dates, ids and negations are not compared.
    nothing_to_check = not keys and not (ca.quantities or ca.dates or ca.identifiers)
    # a claim with no number, date, id or negation has nothing to mismatch in a sentence that
    # negates nothing (what _mismatches would find: no missing token, no conflict)
    plain = not (ca.quantities or ca.dates or ca.identifiers or ca.has_negation or ca.periods or ca.names)
    for i, s in enumerate(sentences):
        sa = analyze(s)
        if skip_disjoint and keys.isdisjoint(sa.terms):
            continue
        coverage, topical = _scores(ca, keys, sa)
        if nothing_to_check:
            coverage = topical = 0.0  # nothing to check: never supported
        if best_support is not None and coverage <= best_support[0]:
            continue  # the verdict is "supported" whatever follows; only a higher coverage changes it
        if (
            best_any is not None
            and coverage < min_coverage
            and topical < contra_min
            and coverage <= best_any[0]
        ):
            continue
        missing: list[str]
        conflicts: list[str]
        if plain and not sa.negated:
            missing, conflicts = [], []
        else:
            missing, conflicts = _mismatches_of(claim, s)
        if coverage >= min_coverage and not missing:
            best_support = (coverage, i)  # higher than any before (see above)
            if coverage >= 1.0:
                break  # no sentence can cover more
        # a conflict needs the sentence to be about the same thing: terms counted in any polarity
        if conflicts and topical >= contra_min and (best_contra is None or topical > best_contra[0]):
            best_contra = (topical, i, missing, conflicts)
        if best_any is None or coverage > best_any[0]:
            best_any = (coverage, i, missing)
    if best_support is not None:
        cov, i = best_support
        return Verdict("supported", sentences[i], round(cov, 4), i)
    if best_contra is not None:
        cov, i, missing, conflicts = best_contra
        return Verdict("contradicted", sentences[i], round(cov, 4), i, tuple(missing), tuple(conflicts))
    if best_any is not None and best_any[0] > 0:
        cov, i, missing = best_any
        return Verdict("unsupported", sentences[i], round(cov, 4), i, tuple(missing))
    return Verdict("unsupported", None, 0.0)


def fact_expressed(
    fact_text: str,
    aliases: Sequence[str] | None,
    answer: str | None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> bool:
    """Whether ``answer`` states the fact: normalized containment of its text or an alias, else
    lexical support by one answer sentence with every number, unit, date and identifier matched."""
    if not answer:
        return False
    ans_norm = normalize(answer)
    variants = [fact_text, *(aliases or [])]
    for v in variants:
        n = normalize(v)
        if n and n in ans_norm and _numbers_agree(v, answer):
            return True
    pieces = sentences(answer)
    pieces = pieces + [c for s in pieces for c in clauses(s) if c != s]
    if not pieces:
        return False
    return any(support(v, pieces, min_coverage).label == "supported" for v in variants if v.strip())


def _numbers_agree(variant: str, answer: str) -> bool:
    """Containment of "7 days" inside "17 days" is not expression: the numbers must match too."""
    wanted = quantities_of(variant)
    if not wanted:
        return True
    found = quantities_of(answer)
    return all(_qty_matches(q, found) for q in wanted)
