"""Grow the structured claim set from hand-written seeds by typed perturbations.

Each seed (``seeds_en.jsonl``, ``seeds_zh.jsonl``) is a context of two or three sentences, usually
about two entities with parallel attributes, one claim the context supports and hand-written pairs
(``[category, label, claim]``): paraphrases, support spanning two sentences, double negatives,
quantifiers. A seed may name entity pairs to swap (``swap``: both in the context) and conditions
that can be dropped (``drop``); ``no_convert`` marks seeds whose durations count working days, which
are not converted to hours. The generator takes every supported claim of a seed and applies the
perturbations that fit it, each with a known label:

- ``entity_swap``: the claim's entity replaced by the other one the context names (unsupported);
- ``condition_dropped``: a condition phrase removed (unsupported);
- ``comparator`` / ``quantifier``: a comparator or bound flipped (before/after, above/below,
  at most/at least, 最多/至少 ...; unsupported);
- ``number``: another value (unsupported); ``unit``: the same number with another unit
  (unsupported); ``unit_conversion``: the value converted exactly into another unit (supported);
- ``number_words`` (supported): a small number written in words or Chinese numerals;
  ``cn_magnitude``: 50000 written 5 万 (supported) or scaled wrong (unsupported);
- ``period``: per month for per year, 每天 for 每周 ... (unsupported); ``weekday`` (unsupported);
- ``time_format`` (supported: 3 p.m. as 15:00, 下午 4 点 as 16:00), ``time`` (a.m. for p.m.;
  unsupported); ``date_format`` (supported: ISO for written dates) and ``date`` (unsupported);
- ``negation``: a modal or copula negated, or a negation taken away (unsupported).

Writes ``structured.jsonl`` beside this file (ids are stable: seed id, category, a counter), so the
set is data that tests and ``bench/lexical_structured.py`` read without running this script:

    python bench/lexical/generate.py
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "structured.jsonl"

Pair = tuple[str, str, str]  # category, label, claim

# ---- tables of typed perturbations ------------------------------------------------------------------

_EN_COMPARATORS = [
    ("more than", "fewer than"), ("fewer than", "more than"), ("less than", "more than"),
    ("above", "below"), ("below", "above"), ("over", "under"), ("under", "over"),
    ("before", "after"), ("after", "before"), ("larger than", "smaller than"),
    ("heavier than", "lighter than"), ("until", "from"),
]  # fmt: skip
_EN_QUANTIFIERS = [
    ("at most", "at least"),
    ("at least", "at most"),
    ("up to", "at least"),
    ("only on", "on every plan except"),
]
_ZH_COMPARATORS = [("超过", "低于"), ("低于", "高于"), ("高于", "低于"), ("之前", "之后"), ("之后", "之前"),
                   ("(?<!提)前", "后"), ("以内", "以上"), ("满", "不足")]  # fmt: skip
_ZH_QUANTIFIERS = [("最多", "至少"), ("至少", "最多"), ("不超过", "不少于"), ("仅", "所有版本都")]

_EN_PERIODS = [("per year", "per month"), ("per month", "per year"), ("per minute", "per hour"),
               ("per semester", "per year"), ("a week", "a month"), ("a year", "a month"), ("every day", "every week")]  # fmt: skip
_ZH_PERIODS = [("每年", "每月"), ("每月", "每年"), ("每分钟", "每小时"), ("每小时", "每天"), ("每天", "每周"),
               ("每周", "每月"), ("每学期", "每学年"), ("单日", "单月")]  # fmt: skip

_EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_ZH_WEEKDAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]

# unit -> (dimension, size in a base unit); conversions stay inside a dimension
_EN_UNITS = {
    "second": ("t", 1), "minute": ("t", 60), "hour": ("t", 3600), "day": ("t", 86400), "week": ("t", 604800),
    "month": ("cal", 1), "year": ("cal", 12),
    "gram": ("m", 1), "kg": ("m", 1000), "pound": ("lb", 1),
    "MB": ("d", 1), "GB": ("d", 1000),
}  # fmt: skip
_EN_UNIT_RE = re.compile(
    r"(?<![\d.,])(\d+(?:,\d{3})*)\s+(seconds?|minutes?|hours?|days?|weeks?|months?|years?|grams?|kg|pounds?|MB|GB)\b"
)
_ZH_UNITS = {"秒": ("t", 1), "分钟": ("t", 60), "小时": ("t", 3600), "天": ("t", 86400), "周": ("t", 604800),
             "个月": ("cal", 1), "年": ("cal", 12), "克": ("m", 1), "公斤": ("m", 1000), "斤": ("m", 500)}  # fmt: skip
_ZH_UNIT_RE = re.compile(r"(?<![\d.])(\d+)\s*(分钟|小时|天|周|个月|公斤|克|秒)(?!钟)")
_WRONG_UNIT = {"t": {"minute": "hour", "hour": "day", "day": "week", "week": "month", "second": "minute"},
               "cal": {"month": "week", "year": "month"}, "m": {"kg": "pound", "gram": "kg"},
               "d": {"MB": "GB", "GB": "MB"}, "lb": {"pound": "kg"}}  # fmt: skip
_ZH_WRONG_UNIT = {
    "分钟": "小时",
    "小时": "分钟",
    "天": "周",
    "周": "个月",
    "个月": "周",
    "公斤": "斤",
    "克": "公斤",
    "秒": "分钟",
}

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]  # noqa: E501
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ZH_DIGITS = "零一二三四五六七八九"
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def en_words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    raise ValueError(n)


def zh_numeral(n: int) -> str:
    """Chinese numerals for 0 < n < 10000 (十五, 四千二百, 两千 is written 二千 here)."""
    if n < 10:
        return _ZH_DIGITS[n]
    out = ""
    for size, name in ((1000, "千"), (100, "百"), (10, "十")):
        d, n = divmod(n, size)
        if d:
            out += ("" if (size == 10 and d == 1 and not out) else _ZH_DIGITS[d]) + name
        elif out and n:
            out += "" if out.endswith("零") else "零"
    return out + (_ZH_DIGITS[n] if n else "")


def _plural(unit: str, value: float) -> str:
    if unit in ("kg", "MB", "GB"):
        return unit
    return unit if value == 1 else unit + "s"


def _fmt(v: float) -> str:
    return str(int(v)) if v == int(v) else str(v)


# ---- perturbations ------------------------------------------------------------------------------


def _replace_table(claim: str, table: list[tuple[str, str]], category: str, en: bool) -> Iterator[Pair]:
    for a, b in table:
        pat = (
            re.compile(rf"\b{re.escape(a)}\b")
            if en
            else re.compile(a if a.startswith("(?") else re.escape(a))
        )
        if pat.search(claim):
            yield category, "unsupported", pat.sub(b, claim, count=1)
            return


def _numbers(claim: str, en: bool) -> Iterator[Pair]:
    m = (_EN_UNIT_RE if en else _ZH_UNIT_RE).search(claim)
    if m is None:
        return
    raw, unit_raw = m.group(1), m.group(2)
    v = int(raw.replace(",", ""))
    if en:
        unit = unit_raw if unit_raw in ("kg", "MB", "GB") else unit_raw.rstrip("s")
        dim, size = _EN_UNITS[unit]
    else:
        unit = unit_raw
        dim, size = _ZH_UNITS[unit]
    head, tail = claim[: m.start()], claim[m.end() :]

    def put(value: float, u: str) -> str:
        if en:
            return f"{head}{_fmt(value)} {_plural(u, value)}{tail}"
        return f"{head}{_fmt(value)} {u}{tail}"

    other = v * 2 if v >= 2 else v + 2
    yield "number", "unsupported", put(other, unit)
    wrong = _WRONG_UNIT[dim].get(unit) if en else _ZH_WRONG_UNIT.get(unit)
    if wrong:
        yield "unit", "unsupported", put(v, wrong)
    table = _EN_UNITS if en else _ZH_UNITS
    # an exact conversion into a smaller unit of the same dimension (2 hours -> 120 minutes)
    for u2, (d2, s2) in sorted(table.items(), key=lambda kv: -kv[1][1]):
        if d2 == dim and s2 < size and (v * size) % s2 == 0 and u2 != unit:
            yield "unit_conversion", "supported", put(v * size // s2, u2)
            break
    # and into a larger one when it divides evenly (120 minutes -> 2 hours)
    for u2, (d2, s2) in sorted(table.items(), key=lambda kv: kv[1][1]):
        if d2 == dim and s2 > size and (v * size) % s2 == 0:
            yield "unit_conversion", "supported", put(v * size // s2, u2)
            break


def _number_words(claim: str, en: bool) -> Iterator[Pair]:
    if en:
        m = re.search(r"(?<![\d.,:$-])\b([1-9]\d?)\b(?![\d.,:%-])(?!\s*(?:a\.m|p\.m))(?!\s*,\s*\d{4})", claim)
        if m:
            yield (
                "number_words",
                "supported",
                claim[: m.start()] + en_words(int(m.group(1))) + claim[m.end() :],
            )
        return
    m = re.search(r"(?<![\d.,:/-])(\d{1,4})\s*(?=[天个件次台元分学周小公克人])(?!\s*年)", claim)
    if m and int(m.group(1)) > 0:
        rest = claim[m.end() :]
        yield "number_words", "supported", claim[: m.start()] + zh_numeral(int(m.group(1))) + rest


def _magnitude(claim: str, en: bool) -> Iterator[Pair]:
    if en:
        return
    m = re.search(r"(?<![\d.])(\d+)\s*万", claim)
    if m:
        v = int(m.group(1)) * 10000
        yield "cn_magnitude", "supported", claim[: m.start()] + str(v) + " " + claim[m.end() :].lstrip()
        yield "cn_magnitude", "unsupported", claim[: m.start()] + f"{m.group(1)} 千" + claim[m.end() :]
        return
    m = re.search(r"(?<![\d.])(\d+)0000(?!\d)", claim)
    if m:
        yield "cn_magnitude", "supported", claim[: m.start()] + f"{m.group(1)} 万" + claim[m.end() :]
        yield "cn_magnitude", "unsupported", claim[: m.start()] + f"{m.group(1)} 千" + claim[m.end() :]


def _weekdays(claim: str, en: bool) -> Iterator[Pair]:
    names = _EN_WEEKDAYS if en else _ZH_WEEKDAYS
    found = [d for d in names if d in claim]
    if not found:
        return
    free = [d for d in names if d not in claim]
    out = claim
    for d, new in zip(found, free, strict=False):
        out = out.replace(d, new)
    yield "weekday", "unsupported", out


_EN_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.m\.|p\.m\.)")
_ZH_TIME = re.compile(r"(上午|早上|下午|晚上)\s*(\d{1,2})\s*点")


def _times(claim: str, en: bool) -> Iterator[Pair]:
    if en:
        m = _EN_TIME.search(claim)
        if m is None:
            return
        h, mm, mer = int(m.group(1)), m.group(2) or "00", m.group(3)
        h24 = (h % 12) + (12 if mer == "p.m." else 0)
        end = m.end()
        if claim[end - 1 : end] == "." and end == len(claim):
            end -= 0
        yield (
            "time_format",
            "supported",
            claim[: m.start()] + f"{h24:02d}:{mm}" + claim[m.end() :].replace("..", "."),
        )
        flip = "a.m." if mer == "p.m." else "p.m."
        yield (
            "time",
            "unsupported",
            claim[: m.start()]
            + f"{m.group(1)}{':' + m.group(2) if m.group(2) else ''} {flip}"
            + claim[m.end() :],
        )
        return
    m = _ZH_TIME.search(claim)
    if m is None:
        return
    h = int(m.group(2)) + (12 if m.group(1) in ("下午", "晚上") and int(m.group(2)) < 12 else 0)
    yield "time_format", "supported", claim[: m.start()] + f"{h}:00" + claim[m.end() :]
    flip = "上午" if m.group(1) in ("下午", "晚上") else "下午"
    yield "time", "unsupported", claim[: m.start()] + f"{flip} {m.group(2)} 点" + claim[m.end() :]


_EN_DATE = re.compile(r"\b(" + "|".join(_MONTHS) + r") (\d{1,2}), (\d{4})")
_ZH_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")


def _dates(claim: str, en: bool) -> Iterator[Pair]:
    m = (_EN_DATE if en else _ZH_DATE).search(claim)
    if m is None:
        return
    if en:
        mo, d, y = _MONTHS.index(m.group(1)) + 1, int(m.group(2)), int(m.group(3))
        yield "date_format", "supported", claim[: m.start()] + f"{d} {m.group(1)} {y}" + claim[m.end() :]
        yield "date", "unsupported", claim[: m.start()] + f"{m.group(1)} {d + 3}, {y}" + claim[m.end() :]
        return
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    yield "date_format", "supported", claim[: m.start()] + f"{y}/{mo}/{d} " + claim[m.end() :].lstrip()
    yield "date", "unsupported", claim[: m.start()] + f"{y} 年 {mo} 月 {d + 3} 日" + claim[m.end() :]


_EN_NEGATE = [(" cannot ", " can "), (" may not ", " may "), (" is not ", " is "), (" does not ", " does "),
              (" are not ", " are "), (" not ", " "),
              (" can ", " cannot "), (" may ", " may not "), (" must ", " must not "), (" are ", " are not "),
              (" is ", " is not ")]  # fmt: skip
_ZH_NEGATE = [("不能", "能"), ("不得", "可以"), ("不支持", "支持"), ("不允许", "允许"), ("不会", "会"), ("不可", "可"),
              ("可以", "不可以"),
              ("可", "不可"), ("需", "无需"), ("会", "不会"), ("支持", "不支持"), ("享有", "不享有")]  # fmt: skip


def _negation(claim: str, en: bool) -> Iterator[Pair]:
    for a, b in _EN_NEGATE if en else _ZH_NEGATE:
        if a in claim:
            yield "negation", "unsupported", claim.replace(a, b, 1)
            return


def _clean(text: str) -> str:
    text = re.sub(r"\s+([.,。，])", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text).strip()
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def perturb(seed: dict[str, Any], claim: str) -> Iterator[Pair]:
    """Every typed perturbation that fits ``claim`` (a claim the seed's context supports)."""
    en = seed["lang"] == "en"
    ctx = seed["context"]
    for a, b in seed.get("swap", []):
        if a in claim and b in ctx:
            yield "entity_swap", "unsupported", claim.replace(a, b)
        elif en and a.lower() in claim and b in ctx:
            yield "entity_swap", "unsupported", claim.replace(a.lower(), b.lower())
    for phrase in seed.get("drop", []):
        if phrase in claim:
            yield "condition_dropped", "unsupported", claim.replace(phrase, "")
    gens: list[Callable[[str, bool], Iterator[Pair]]] = [_numbers, _number_words, _magnitude, _weekdays, _times, _dates, _negation]  # fmt: skip
    yield from _replace_table(claim, _EN_COMPARATORS if en else _ZH_COMPARATORS, "comparator", en)
    yield from _replace_table(claim, _EN_QUANTIFIERS if en else _ZH_QUANTIFIERS, "quantifier", en)
    yield from _replace_table(claim, _EN_PERIODS if en else _ZH_PERIODS, "period", en)
    for g in gens:
        for cat, label, text in g(claim, en):
            if not (seed.get("no_convert") and cat == "unit_conversion"):  # working days are not 24 h
                yield cat, label, text


def build(seeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        seen: set[str] = set()
        hand: list[Pair] = [("restated", "supported", seed["claim"])] + [
            tuple(p) for p in seed.get("pairs", [])
        ]  # type: ignore[misc]
        supported = [c for _, lab, c in hand if lab == "supported"]
        generated = [p for c in supported for p in perturb(seed, c)]
        counters: dict[str, int] = {}
        for origin, items in (("hand", hand), ("generated", generated)):
            for cat, label, claim in items:
                claim = _clean(claim)
                if claim in seen or claim == seed["context"]:
                    continue
                seen.add(claim)
                counters[cat] = counters.get(cat, 0) + 1
                rows.append({
                    "id": f"{seed['id']}-{cat}-{counters[cat]}", "lang": seed["lang"], "domain": seed["domain"],
                    "category": cat, "label": label, "origin": origin, "claim": claim, "context": seed["context"],
                })  # fmt: skip
    return rows


def main() -> None:
    seeds = [
        json.loads(line)
        for name in ("seeds_en.jsonl", "seeds_zh.jsonl")
        for line in (HERE / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = build(seeds)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} pairs from {len(seeds)} seeds -> {OUT.name}")


if __name__ == "__main__":
    main()
