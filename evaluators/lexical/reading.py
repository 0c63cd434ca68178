"""The structured reading of claims and context clauses for the three-valued lexical tier
(``evaluators.lexical.claims``; docs/architecture.md, Evaluators and metrics).

``read(text)``: content terms (``lexical.analyze`` of the text with its values and bound words taken
out, plus marks for the kinds of value it states and for designators such as "Warehouse A"), the
values normalized (``lexical.values``), the weekdays, the periods of its rates (per hour, 每月, per
semester, 单日), whether it quantifies universally (all, every, always, 所有) or restrictively (only,
仅), its conditions (if, unless, when, during, after …, 如果, 只要, …期间, …时, …后) with their
terms, and its negation cues (a double negative has two).

``_units(sentences)``: the context units a claim is aligned to: each sentence (split after "p.m." /
"a.m." where the sentence splitter does not), its clauses when it has several (a clause inherits the
conditions of a clause that leads it: 乙方违约时，甲方可解除合同), a sentence joined to the one before
it when it carries that one's subject over (It, They, 该, 其, "during that time"), and "after that
date" with the date of the sentence before written in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from evaluators.lexical.analysis import analyze
from evaluators.lexical.claim_split import clauses
from evaluators.lexical.tokens import Analysis
from evaluators.lexical.values import DIMS as _STANDARD_DIMS
from evaluators.lexical.values import Value, ValueReading, read_values

_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_RUNS = re.compile(r"[\u3400-\u9fff]+")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
# (each pattern behind a lookahead on the characters its matches start with: Python's re otherwise
# tries the whole alternation at every position)
_BOUND_WORDS = re.compile(
    r"(?=[nuamepflgshbwtioNUAMEPFLGSHBWTIO最至不低少小超高大多固正恰以之所全一始总仅只])(?:"
    r"\b(?:no more than|not more than|no less than|not less than|not exceed(?:ing)?|may not exceed|must not exceed|"
    r"up to|at most|at least|a maximum of|a minimum of|maximum|minimum|exactly|precisely|less than|fewer than|"
    r"more than|greater than|larger than|smaller than|heavier than|lighter than|longer than|shorter than|"
    r"higher than|lower than|earlier than|later than|no later than|exceeding|exceeds|always|"
    r"before|after|within|under|below|above|over|until|till|from|in advance|prior to)\b"
    r"|最多|至多|不超过|不得超过|不能超过|不高于|不多于|不少于|不低于|不小于|低于|少于|小于|不足|不到|至少|最少|超过|"
    r"高于|大于|多于|固定|正好|恰好|以内|之内|以下|以上|之前|以前|之后|以后|所有|全部|一律|始终|总是|仅限|仅|只有|只在|只能)",
    re.I,
)
_UNIVERSAL = re.compile(
    r"(?=[aeAE所全一始总均])(?:\b(?:all|every|always|everyone|everything)\b(?!\s+(?:other\s+)?(?:second|minute|hour|day|"
    r"week|month|year|semester|weekday|morning|evening|night)s?\b)|所有|全部|一律|始终|总是|均可|全都)",
    re.I,
)
_ONLY = re.compile(r"(?=[oeOE仅只唯])(?:\bonly\b|\bexclusively\b|仅|只有|只在|只能|仅限|唯有)", re.I)
_EXTRA_PERIODS = re.compile(
    r"(?=[psqPSQ每单])(?:\bper\s+(semester|term|quarter|annum)\b|\b(semesterly|quarterly)\b|每\s*(学期|学年|季度)|(单日|单月))",
    re.I,
)
_PERIOD_NAMES = {"semester": "semester", "term": "semester", "quarter": "quarter", "annum": "year",
                 "semesterly": "semester", "quarterly": "quarter", "学期": "semester", "学年": "year",
                 "季度": "quarter", "单日": "day", "单月": "month"}  # fmt: skip
_EN_CONDITION = re.compile(
    r"(?=[oiuwpadbfOIUWPADBF])\b(?:only if|if|unless|when|whenever|provided(?: that)?|as long as|during|once|after|before|prior to|"
    r"for orders|on orders)\b"
    r"([^,.;:]*)",
    re.I,
)
_CN_CONDITION = re.compile(
    r"(?:如果|假如|若|只要|只有|除非|一旦)[^，。；,;]*|[\u4e00-\u9fff]{2,3}(?:期间|时(?=[，,])|(?:之前|之后|以前|以后|后)(?!\s*[\d,]))"
)
_CARRIER = re.compile(
    r"^(?:it|its|they|their|them|this|that|these|those|he|she|his|her)\b|^(?:该|其(?!他|中|余|实)|此|这|它|他们|她)",
    re.I,
)
_CARRIER_CN_ANYWHERE = re.compile(r"该|其(?!他|中|余|实)|此(?:期间|时)")
_CARRIER_EN_ANYWHERE = re.compile(
    r"\b(?:that|this|these|those|the same) (?:time|period|date|day|days|window|limit)\b", re.I
)
_REFERS_BACK = re.compile(r"\b(?:that|this|these|those|the same)\b|该|此|这", re.I)
_NEG_CUES = re.compile(
    r"(?=[nwucdiaNWUCDIA不未没无非勿除])"
    r"(?:\b(?:not|no|never|without|unless|cannot|can't|won't|don't|doesn't|isn't|aren't)\b|[不未没无非勿]|除非)",
    re.I,
)


@dataclass(frozen=True)
class Reading:
    """The structured reading of a claim or a context unit."""

    text: str
    analysis: Analysis  # of the text without values and bound words
    values: tuple[Value, ...]
    weekdays: int
    periods: frozenset[str]
    universal: bool
    only: bool
    conditions: tuple[tuple[str, frozenset[str]], ...]  # (phrase, its content terms)
    names: frozenset[str]
    identifiers: tuple[str, ...]
    chars: frozenset[str] = frozenset()  # Chinese content characters (function characters out)
    neg_cues: int = 0  # negation cues written (not, 不, unless …): a double negative has two
    unless: bool = False


@lru_cache(maxsize=16384)
def read(text: str) -> Reading:
    """Read ``text`` (cached: document clauses come back trace after trace)."""
    vr: ValueReading = read_values(text)
    stripped = _BOUND_WORDS.sub(" , ", vr.rest)
    if _CJK.search(stripped):  # 7 天内可 -> "可": the bound after a value is no content
        stripped = _CN_POST_BOUND.sub(", ", stripped)
    a = analyze(stripped)
    if any(t.endswith(("abl", "ibl")) for t in a.terms):  # returnable ~ return, accessible ~ access
        a = replace(a, terms=_unable(a.terms), positive=_unable(a.positive), negated=_unable(a.negated))
    marks = frozenset("#" + m.group(1).lower() for m in _DESIGNATOR.finditer(text))
    # what kinds of value it states (#time, #usd, #date): a claim that only restates the question
    # and a value still aligns with the clauses stating a value of that kind
    marks |= frozenset(
        "#" + (v.dim if v.kind == "qty" else v.kind)
        for v in vr.values
        if v.kind != "qty" or v.dim in _STANDARD_DIMS
    )
    if marks:  # Warehouse A / Plan B: the letter tells the two apart
        a = replace(a, terms=a.terms | marks, positive=a.positive | marks)
    # identifiers of the text without its values ("3-month" is a value, not an id)
    periods = set(a.periods)  # (of the text without values: "an hour and a half" is no rate)
    for m in _EXTRA_PERIODS.finditer(text):
        periods.add(_PERIOD_NAMES[next(g for g in m.groups() if g).lower()])
    return Reading(
        text=text,
        analysis=a,
        values=vr.values,
        weekdays=vr.weekdays,
        periods=frozenset(periods),
        universal=_UNIVERSAL.search(text) is not None,
        only=_ONLY.search(text) is not None,
        conditions=_conditions(vr.rest),  # (values out: "after 30 days" is a bound, not a condition)
        names=a.names,  # (of the text without values: "March", "MB" are no names)
        identifiers=a.identifiers,
        chars=frozenset(_cjk_chars(a.text)),
        neg_cues=len(_NEG_CUES.findall(text)),
        unless=_UNLESS.search(text) is not None,
    )


def _unable(terms: frozenset[str]) -> frozenset[str]:
    return frozenset(t[:-3] if t.endswith(("abl", "ibl")) and len(t) > 5 else t for t in terms)


def _conditions(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    out = []
    pattern = _CN_CONDITION if _CJK.search(text) else _EN_CONDITION
    for m in pattern.finditer(text):
        phrase = m.group(0).strip()
        if _VALUE_LED.match(phrase) or (pattern is _CN_CONDITION and _DIGIT.search(phrase)):
            continue  # "after 30 days", "before 3 p.m.", 3 点之后: a bound on a value, compared as one
        if _REFERS_BACK.search(phrase):
            continue  # "during that time", 该期间: refers to what the sentence before says, no new condition
        terms = analyze(_BOUND_WORDS.sub(" , ", read_values(phrase).rest)).terms
        if terms:
            out.append((phrase, terms))  # (before/until: a time order, compared but never "dropped")
    return tuple(out)


@dataclass(frozen=True)
class _Unit:
    text: str
    index: int
    reading: Reading
    split: bool = False  # a sentence whose clauses are units too


def _units(sentences: tuple[str, ...]) -> tuple[_Unit, ...]:
    return _units_cached(sentences)


_VALUE_LED = re.compile(
    r"\S+(?:\s+\S+)?\s*[\d$€£¥]|\S*\s*(?:one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I
)
_DIGIT = re.compile(r"\d")
_LEADS_EN = re.compile(r"(?:if|unless|when|whenever|once|during|provided|as long as)\b", re.I)
_LEADS_CN = re.compile(r"(?:如果|假如|若|只要|只有|除非|一旦)")
_ENDS_CN = re.compile(r"(?:时|期间|之后|以后)$")
_CN_MARKER_END = re.compile(r"(?:期间|之前|之后|以前|以后|时|后)$")
_BEFORE_DE = re.compile(r"\s*[^\s，。；,;]{0,2}的")
_UNLESS = re.compile(r"(?=[uU除])(?:\bunless\b|除非)", re.I)
_UNLESS_START = re.compile(r"unless|除非", re.I)
_IF = re.compile(r"\bif\b|如果|若", re.I)
_ORDER_EN = re.compile(r"(before|prior to|until)\b|(after|once)\b", re.I)
_ORDER_CN = re.compile(r"(之前|以前|前)$|(之后|以后|后)$")
_CN_POST_BOUND = re.compile(r",\s*[内前后起]")
_DESIGNATOR = re.compile(r"\b[A-Z][a-z]+ ([A-Z])\b(?!\.)")
_MERIDIEM_END = re.compile(r"(?<=[ap]\.m\.)\s+(?=[A-Z])")
_THAT_DATE = re.compile(
    r"\b(?:that|this|the same) (?:date|time|day|deadline)\b|(?:该|此)(?:日期|时间|时点)", re.I
)


@lru_cache(maxsize=1024)
def _units_cached(sentences: tuple[str, ...]) -> tuple[_Unit, ...]:
    """The context units: each sentence, its clauses when it has several (a clause inherits the
    conditions of the clauses before it: 乙方违约时，甲方可解除合同), and a sentence joined to the one
    before it when it carries that one's subject over; "after that date" takes the date of the
    sentence before."""
    out: list[_Unit] = []
    pieces = [(p, i) for i, s in enumerate(sentences) for p in _MERIDIEM_END.split(s)]
    for n, (s, i) in enumerate(pieces):
        parts = clauses(s)
        if len(parts) == 1:
            out.append(_Unit(s, i, read(s)))
        else:
            # the whole sentence keeps only the conditions that lead it; each clause has its own
            inherited: tuple[tuple[str, frozenset[str]], ...] = ()
            units = []
            for p in parts:
                r = read(p)
                units.append(_Unit(p, i, replace(r, conditions=r.conditions + inherited) if inherited else r))
                if _leads_with_condition(p):  # the whole clause is the condition of what follows
                    inherited += ((p, r.analysis.terms),)
            out.append(_Unit(s, i, replace(read(s), conditions=inherited), split=True))
            out.extend(units)
        if n == 0:
            continue
        prev = pieces[n - 1][0]
        that = _THAT_DATE.search(s)
        dated = [v for v in read(prev).values if v.kind in ("date", "time")]
        if that and len(dated) == 1:
            resolved = s[: that.start()] + dated[0].text + s[that.end() :]
            out.append(_Unit(resolved, i, read(resolved)))
        elif (
            _CARRIER.search(s.lstrip())
            or _CARRIER_EN_ANYWHERE.search(s)
            or (_CJK.search(s) and _CARRIER_CN_ANYWHERE.search(s))
        ):
            joined = f"{prev} {s}"
            out.append(_Unit(joined, pieces[n - 1][1], read(joined)))
    return tuple(out)


def _leads_with_condition(clause: str) -> bool:
    """A clause that is a condition for what follows: If …, / When …, / 乙方违约时 / 考试周期间."""
    c = clause.strip()
    return bool(_LEADS_EN.match(c) or _LEADS_CN.match(c) or _ENDS_CN.search(c))


_FUNCTION_CHARS = frozenset("的了是在和与及或为将可会被把就都也还而且其该此这那之以于对从向")


def _cjk_chars(text: str) -> set[str]:
    return set(_CJK_CHAR.findall(text)) - _FUNCTION_CHARS


@lru_cache(maxsize=1024)
def _context_summary(
    sentences: tuple[str, ...],
) -> tuple[frozenset[str], frozenset[str], tuple[Value, ...], frozenset[str]]:
    """Every term, identifier and value of the context, and its Chinese characters (cached: every
    claim of an answer is checked against the same context)."""
    terms: set[str] = set()
    ids: set[str] = set()
    values: list[Value] = []
    for u in _units_cached(sentences):
        terms |= u.reading.analysis.terms
        ids.update(u.reading.identifiers)
        values.extend(u.reading.values)
    return frozenset(terms), frozenset(ids), tuple(values), frozenset(_cjk_chars(" ".join(sentences)))
