"""What a context unit says of a claim (``evaluators.lexical.claims``): coverage of its terms, and
the claim's gaps (what the unit does not state) and conflicts (what it states otherwise: another
value of the same dimension, the opposite bound, another period or weekday, the other polarity, a
quantifier it restricts, a condition or threshold the claim drops, the other time order).
"""

from __future__ import annotations

from evaluators.lexical.analysis import analyze
from evaluators.lexical.reading import (
    _BEFORE_DE,
    _CN_MARKER_END,
    _IF,
    _NEG_CUES,
    _ORDER_CN,
    _ORDER_EN,
    _UNLESS_START,
    Reading,
    _cjk_chars,
)
from evaluators.lexical.values import Value, comparable, same_value


def _coverage(keys: frozenset[str], claim: Reading, unit: Reading) -> float:
    """The share of ``keys`` (claim terms) the unit states; for Chinese the mean of that share and
    of the claim's characters the unit has, since a paraphrase breaks bigrams (可全额退款 /
    可申请全额退款) where it keeps the characters."""
    if not keys:
        return 0.0
    share = len(keys & unit.analysis.terms) / len(keys)
    if claim.chars:
        share = (share + len(claim.chars & unit.chars) / len(claim.chars)) / 2
    return share


def _states(claim: Reading, phrase: str, terms: frozenset[str]) -> bool:
    """Whether the claim states (most of) a condition: by its terms, or for Chinese by its
    characters, since bigrams break where the claim words it otherwise (购买年度会员 / 会员购买后)."""
    chars = _cjk_chars(_CN_MARKER_END.sub("", phrase))
    if chars:
        return len(chars & set(claim.text)) * 2 >= len(chars)
    return len(terms & claim.analysis.terms) * 2 >= len(terms)


def _qualifies_noun(u: Value, text: str) -> bool:
    """A bound inside a modifier of a noun (年收入低于 12 万元的客户): a condition on who or what."""
    i = text.find(u.text)
    return i >= 0 and _BEFORE_DE.match(text, i + len(u.text)) is not None


def _opposed(a: str | None, b: str | None) -> bool:
    return {a, b} == {"upper", "lower"}


def _compare(claim: Reading, unit: Reading) -> tuple[list[str], list[str]]:
    """What of the claim ``unit`` does not state (gaps) and what it states otherwise (conflicts)."""
    gaps: list[str] = []
    conflicts: list[str] = []
    for v in claim.values:
        equal = [u for u in unit.values if same_value(v, u)]
        if equal:
            u = next((x for x in equal if x.direction), equal[0])
            # a bound written before the value is compared with one written before it, one after
            # with one after ("after waiting 30 s" is no bound against "30 s before retrying")
            if (
                _opposed(v.pre, u.pre)
                or _opposed(v.post, u.post)
                or (v.direction == "exact" and u.direction in ("upper", "lower"))
            ):
                conflicts.append(f"{_bound(v)} vs {_bound(u)}")
            elif v.direction and not u.direction:
                gaps.append(_bound(v))
            continue
        # a counterpart of the unit already equal to another value of the claim is that one's
        rivals = [
            u for u in unit.values if comparable(v, u) and not any(same_value(w, u) for w in claim.values)
        ]
        if rivals:
            conflicts.append(f"{v} vs {', '.join(str(u) for u in rivals)}")
        else:
            gaps.append(str(v))
    # a threshold or time bound of the unit the claim does not state: a dropped condition
    for u in unit.values:
        if u.direction in ("upper", "lower") and not any(
            comparable(v, u) or same_value(v, u) for v in claim.values
        ):
            # a lower bound (over $75, 满 99 元) or a time bound conditions the fact; an upper bound
            # on a quantity (up to 3 devices, 3 个工作日内) is usually a fact of its own
            if u.kind in ("date", "time") or u.direction == "lower" or _qualifies_noun(u, unit.text):
                conflicts.append(f"condition dropped: {_bound(u)}")
    if claim.weekdays and unit.weekdays and claim.weekdays & ~unit.weekdays:
        conflicts.append(f"weekdays {_days(claim.weekdays)} vs {_days(unit.weekdays)}")
    elif claim.weekdays and not unit.weekdays:
        gaps.append(_days(claim.weekdays))
    if claim.periods and not claim.periods <= unit.periods:
        if unit.periods:
            conflicts.append(f"per {'/'.join(sorted(claim.periods))} vs per {'/'.join(sorted(unit.periods))}")
        else:
            gaps.append(f"per {'/'.join(sorted(claim.periods))}")
    if claim.universal and unit.only and not unit.universal:
        conflicts.append("all vs only")
    elif claim.only and unit.universal and not unit.only:
        conflicts.append("only vs all")
    elif claim.universal and not unit.universal:
        gaps.append("all")
    elif claim.only and not unit.only:
        gaps.append("only")
    ca, ua = claim.analysis, unit.analysis
    # both negate, a double negative, or an "only"/"unless" that says the same as a negation
    # (只有转正后才能 ~ 试用期不能): polarity is not compared term by term
    nc, nu = claim.neg_cues, unit.neg_cues
    # "unless X" on one side for "if not X" on the other
    cu, uu = claim.unless, unit.unless
    unless = cu != uu and _IF.search(unit.text if cu else claim.text) is not None
    lenient = (nc % 2 == nu % 2 and (nc >= 2 or unless or (ca.has_negation and ua.has_negation))) or (
        (claim.only and not unit.only and ua.has_negation)
        or (unit.only and not claim.only and ca.has_negation)
    )
    if not lenient and nc % 2 != nu % 2 and ca.has_negation and ua.has_negation:
        # 7 天内不可无理由退货 / 7 天内可无理由退货: the same words, one negation more
        if (
            analyze(_NEG_CUES.sub("", claim.analysis.text)).terms
            <= analyze(_NEG_CUES.sub("", unit.analysis.text)).terms
        ):
            conflicts.append("negation differs")
    if not lenient:
        flipped = (ca.positive & ua.negated) - ua.positive
        if flipped:
            conflicts.append(f"negated in context: {', '.join(sorted(flipped))}")
        unneg = (ca.negated & ua.positive) - ua.negated
        if unneg:
            conflicts.append(f"not negated in context: {', '.join(sorted(unneg))}")
        if ca.has_negation and not ua.has_negation and not unneg:
            gaps.append("negation")
    unnamed = claim.names - unit.analysis.terms
    if unnamed:
        gaps.extend(sorted(unnamed))
    for ident in claim.identifiers:
        if ident not in unit.identifiers:
            gaps.append(ident)
    for phrase, terms in unit.conditions:
        exception = _UNLESS_START.match(phrase) is not None  # dropping an exception is "by default"
        if not _states(claim, phrase, terms) and _order_of(phrase) != "before" and not exception:
            conflicts.append(f"condition dropped: {phrase}")
            continue
        side = _order_of(phrase)
        for cphrase, cterms in claim.conditions:
            other = _order_of(cphrase)
            if side and other and side != other and not terms.isdisjoint(cterms):
                conflicts.append(f"{cphrase} vs {phrase}")
    return gaps, conflicts


def _order_of(phrase: str) -> str | None:
    """before / after for a condition of time order (before the probation ends, 转正之后)."""
    m = _ORDER_EN.match(phrase) or _ORDER_CN.search(phrase)
    if m is None:
        return None
    return "before" if m.group(1) else "after"


def _bound(v: Value) -> str:
    return (
        f"{v.direction} {v}"
        if v.direction in ("upper", "lower")
        else f"exactly {v}"
        if v.direction
        else str(v)
    )


def _days(mask: int) -> str:
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    return "+".join(n for i, n in enumerate(names) if mask >> i & 1)


def _states_values(c: Reading, unit: Reading) -> bool:
    return bool(c.values) and all(
        any(same_value(v, x) and v.direction == x.direction for x in unit.values) for v in c.values
    )
