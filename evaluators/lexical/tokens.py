"""The values a text states and how they are normalized: stems, units, Chinese and English numbers,
``Quantity``, the ``Analysis`` record, identifiers' prefixes, the periods of rates and the named
things in Latin script."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from evaluators.lexical.vocabulary import _CN_DIGITS, _CN_MULT, _NEG_WORDS, _STOP_WORDS, _UNIT_ALIASES


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
