"""``analyze``: one pass over a text for its content terms (with their polarity), quantities, dates
and identifiers; cached, as the same documents come back trace after trace."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from evaluators.lexical.chars import _CJK_RUN
from evaluators.lexical.patterns import (
    _CN_NUMBER_RE,
    _CN_UNIT_AFTER,
    _DATE_PATTERNS,
    _DIGIT,
    _EN_NUMBER_WORD_RE,
    _EN_UNIT_AFTER,
    _FOUR_DIGITS,
    _GLUED_QTY,
    _ID_RE,
    _LEADING_NUM,
    _MONTH_PREFIXES,
    _NUMBER_RE,
    _ORDINAL,
    _TOKEN_RE,
    _UNIT_NAMES,
    _has_number_word,
)
from evaluators.lexical.tokens import (
    Analysis,
    Quantity,
    _cn_number,
    _id_key,
    _names,
    _num,
    _periods,
    _stem,
    _unit,
)
from evaluators.lexical.vocabulary import (
    _CANNOT_RE,
    _CN_NEG_RE,
    _CN_NOT_NEG,
    _CN_PARTICLES,
    _CONTRACTIONS,
    _EN_NUMBERS,
    _MONTHS,
    _NEG_WORDS,
    _STOP_WORDS,
    _UNIT_ALIASES,
)

# analyze skips the patterns that cannot match the text (same result; False runs every pattern)
_SKIP_IMPOSSIBLE = True


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
