"""Units, number words and bound phrases of the value reader (``evaluators.lexical.values``).

The unit table maps each unit word (English and Chinese, singular; plurals are taken off) to its
dimension and its size in the dimension's base unit: seconds, grams, meters, bytes, a currency,
percent. Number words: English (twenty-five, one hundred) and Chinese numerals with 十百千万亿.
Bound phrases: what is written before or after a value bounds it from above (at most, within, before,
最多, 以内, 之前) or below (at least, over, after, 至少, 超过, 之后), or fixes it (exactly, 固定).

A table rather than pint: pint 0.25 takes about 0.8 s to build its registry and about 200 µs to
parse and convert one quantity (measured on the project's 2-core machine), more than this tier
spends on a whole claim, and it knows no Chinese unit (公斤, 小时, 斤); for the dimensions a claim
compares, the table holds the same conversions.
"""

from __future__ import annotations

import re

from evaluators.lexical.vocabulary import _CN_DIGITS

# unit word -> (dimension, size in the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(["second", "sec", "s", "秒", "秒钟"], ("time", 1.0)),
    **dict.fromkeys(["minute", "min", "mins", "分钟"], ("time", 60.0)),
    **dict.fromkeys(["hour", "hr", "hrs", "h", "小时", "个小时", "钟头", "个钟头"], ("time", 3600.0)),
    **dict.fromkeys(["day", "天", "日"], ("time", 86400.0)),
    **dict.fromkeys(["week", "wk", "周", "星期", "个星期", "礼拜", "个礼拜"], ("time", 604800.0)),
    **dict.fromkeys(["month", "mo", "个月"], ("time", 30 * 86400.0)),
    **dict.fromkeys(["year", "yr", "年"], ("time", 365 * 86400.0)),
    **dict.fromkeys(["gram", "g", "克"], ("mass", 1.0)),
    **dict.fromkeys(["kilogram", "kg", "公斤", "千克"], ("mass", 1000.0)),
    **dict.fromkeys(["pound", "lb", "lbs", "磅"], ("mass", 453.59237)),
    **dict.fromkeys(["ounce", "oz", "盎司"], ("mass", 28.349523)),
    **dict.fromkeys(["tonne", "ton", "t", "吨"], ("mass", 1e6)),
    "斤": ("mass", 500.0),
    **dict.fromkeys(["meter", "metre", "m", "米"], ("length", 1.0)),
    **dict.fromkeys(["kilometer", "kilometre", "km", "公里", "千米"], ("length", 1000.0)),
    **dict.fromkeys(["centimeter", "centimetre", "cm", "厘米"], ("length", 0.01)),
    **dict.fromkeys(["mile", "mi", "英里"], ("length", 1609.344)),
    **dict.fromkeys(["kb", "kilobyte"], ("data", 1e3)),
    **dict.fromkeys(["mb", "megabyte", "兆"], ("data", 1e6)),
    **dict.fromkeys(["gb", "gigabyte"], ("data", 1e9)),
    **dict.fromkeys(["tb", "terabyte"], ("data", 1e12)),
    **dict.fromkeys(["%", "percent", "pct", "per cent"], ("percent", 1.0)),
    **dict.fromkeys(["$", "usd", "dollar", "美元", "us$"], ("usd", 1.0)),
    **dict.fromkeys(["元", "块", "块钱", "rmb", "cny", "yuan", "¥", "人民币"], ("cny", 1.0)),
    **dict.fromkeys(["€", "eur", "euro", "欧元"], ("eur", 1.0)),
    **dict.fromkeys(["£", "gbp", "英镑"], ("gbp", 1.0)),
}
_APPROX = frozenset(
    {"month", "mo", "个月", "year", "yr", "年", "pound", "lb", "lbs", "磅", "ounce", "oz", "mile", "mi"}
)
_CURRENCY_SIGN = re.compile(r"(US\$|[$€£¥]|USD|EUR|GBP|RMB|CNY)\s?$", re.I)
_CN_UNIT_WORDS = sorted((u for u in _UNITS if re.match(r"[\u4e00-\u9fff]", u)), key=len, reverse=True)
# count words that name what is counted; a number before one of these compares by value and word
_CN_CLASSIFIERS = "个件台次名位人家条项张份页笔学分分点倍折岁套篇门节所号"
_CN_UNIT_AFTER = re.compile(r"\s*(个工作日|工作日|" + "|".join(_CN_UNIT_WORDS) + f"|[{_CN_CLASSIFIERS}])")
_EN_UNIT_AFTER = re.compile(r"[\s-]?\s*((?:business|working|calendar)\s+days?|per cent|[A-Za-z]+|%)")

_EN_SMALL = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}  # fmt: skip
_EN_TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_NUM_WORD = "|".join([*_EN_SMALL, *_EN_TENS, *_EN_SCALE])
# every number word contains one of these (a substring test before the word pattern)
_EN_WORD_STEMS = ("zero", "one", "two", "thr", "thi", "fou", "forty", "fiv", "fif", "six", "sev", "eig", "nin", "ten", "ele",
                  "twe", "hundred", "thousand", "million")  # fmt: skip
_EN_WORD_HINT = re.compile("|".join(_EN_WORD_STEMS))
_EN_WORDS_RE = re.compile(rf"\b(?:{_EN_NUM_WORD})(?:[\s-]+(?:and\s+)?(?:{_EN_NUM_WORD}))*\b", re.I)
_CN_DIGIT = _CN_DIGITS  # the Chinese digits, as the claim splitter reads them
_CN_SMALL_MULT = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}

# bounds: phrases before a value (English up to two words away, Chinese up to six characters)
_EN_BEFORE = [
    (
        r"no more than|not more than|no longer than|not exceed(?:ing)?|may not exceed|must not exceed|up to|at most|a maximum of|maximum of|max(?:imum)?|within|under|below|less than|fewer than|smaller than|lighter than|shorter than|lower than|until|till|before|prior to|earlier than|no later than",
        "upper",
    ),  # noqa: E501
    (
        r"no less than|not less than|no fewer than|at least|a minimum of|minimum of|min(?:imum)?|more than|over|above|greater than|larger than|heavier than|longer than|higher than|exceed|exceeding|exceeds|after|later than|from|starting",
        "lower",
    ),  # noqa: E501
    (r"exactly|precisely|always", "exact"),
]
_EN_AFTER = [(r"or less|or fewer|or under|or below|before|prior|earlier|in advance|ahead", "upper"),
             (r"or more|or over|or above|after|later|or longer", "lower")]  # fmt: skip
_CN_BEFORE = [  # the explicit bounds; a Chinese value takes the nearest of these before the anchors below
    (r"最多|至多|不超过|不得超过|不能超过|不高于|不多于|低于|少于|小于|不足|不到|未满", "upper"),
    (r"至少|最少|不少于|不低于|不小于|超过|高于|大于|多于", "lower"),
    (r"固定|正好|恰好|整整", "exact"),
]
_CN_ANCHORS = [(r"提前|之前|以前|前", "upper"), (r"满|之后|以后|后", "lower")]  # 起飞前 24 小时, 满 99 元
_CN_AFTER = [(r"以内|之内|内|以下|之前|以前|前|为止", "upper"), (r"以上|之后|以后|后|起", "lower")]


def _firsts(table: list[tuple[str, str]]) -> str:
    """The characters the phrases of ``table`` start with (both cases), for a lookahead that makes
    most positions fail at once."""
    chars = {alt[0] for p, _ in table for alt in p.split("|")}
    return re.escape("".join(sorted(chars | {c.upper() for c in chars})))


def _one_of(table: list[tuple[str, str]]) -> str:
    """The phrases of ``table`` as one alternation, a named group per bound (which matched tells it)."""
    return "|".join(f"(?P<{d}>{p})" for p, d in table)


_EN_BEFORE_RE = re.compile(rf"(?=[{_firsts(_EN_BEFORE)}])\b(?:{_one_of(_EN_BEFORE)})\b", re.I)
_EN_BEFORE_TAIL = re.compile(r"\s+(?:\w+\s+)?$")  # at most one word between the bound and the value
_EN_AFTER_RE = re.compile(rf"^\s*(?:\w+\s+)?(?:{_one_of(_EN_AFTER)})\b", re.I)
_CN_BEFORE_RE = re.compile(f"(?=[{_firsts(_CN_BEFORE)}])(?:{_one_of(_CN_BEFORE)})")
_CN_ANCHOR_RE = re.compile(f"(?=[{_firsts(_CN_ANCHORS)}])(?:{_one_of(_CN_ANCHORS)})")
_CN_BEFORE_TAIL = re.compile(r"[^\d，。；,;]{0,7}$")
_CN_AFTER_RE = re.compile(rf"^\s*(?:{_one_of(_CN_AFTER)})")


def _nearest_before(window: str, cjk: bool) -> str | None:
    """The bound written last before the value, close enough to it; in Chinese an explicit bound
    before an anchor (回调失败后最多重试 5 次: 最多; 至少需修满 30 学分: 至少)."""
    for pattern in (_CN_BEFORE_RE, _CN_ANCHOR_RE) if cjk else (_EN_BEFORE_RE,):
        last = None
        for m in pattern.finditer(window):
            last = m
        if last is not None and (_CN_BEFORE_TAIL if cjk else _EN_BEFORE_TAIL).match(window, last.end()):
            return last.lastgroup
    return None


def _en_words(raw: str) -> float | None:
    total, current = 0, 0
    for w in re.split(r"[\s-]+", raw.lower()):
        if w == "and":
            continue
        if w in _EN_SMALL:
            current += _EN_SMALL[w]
        elif w in _EN_TENS:
            current += _EN_TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _EN_SCALE:
            total += max(current, 1) * _EN_SCALE[w]
            current = 0
        else:
            return None
    return float(total + current)


def _cn_number(raw: str) -> float | None:
    total, section, current = 0.0, 0.0, 0.0
    for ch in raw:
        if ch in _CN_DIGIT:
            current = current * 10 + _CN_DIGIT[ch] if current and ch not in "零〇" else float(_CN_DIGIT[ch])
        elif ch in _CN_SMALL_MULT:
            section += (current or 1) * _CN_SMALL_MULT[ch]
            current = 0
        elif ch in _CN_BIG:
            total = (total + section + current) * _CN_BIG[ch]
            section = current = 0
        else:
            return None
    return total + section + current


def _unit_of(word: str) -> tuple[str, float, bool] | None:
    w = word.lower()
    for cand in (w, w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w):
        if cand in _UNITS:
            dim, size = _UNITS[cand]
            return dim, size, cand in _APPROX
    return None


_DIMS = DIMS = frozenset(d for d, _ in _UNITS.values())  # the dimensions of real units


def _stem_word(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
