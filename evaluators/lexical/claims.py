"""Three-valued claim support by structure (the lexical tier; docs/architecture.md, Evaluators and metrics): supported, not supported
with the evidence that shows it, or undecided.

A claim and every clause of the context are *read* (``read``): content terms (``lexical.analyze`` of
the text with its values and bound words taken out), values normalized (``lexical.values``: units
and conversions, number words, Chinese magnitudes, times, dates, weekdays), and qualifiers: the
bound written at each value (at most / at least / before / after / exactly), a rate's period, a
universal or restrictive quantifier (all, every, always / only, 仅), conditions (if, unless, when,
during, 如果, 只要, …期间, …时) and negation.

The claim is aligned to the context unit about the same entity and attribute: the unit covering
most of its content terms, where units are the context's sentences, their clauses, and a sentence
joined to the one before it when it opens with a word that carries the subject over (It, They, This,
该, 其, 此). Against its best units a claim is

- **supported** when a unit covers ``min_coverage`` of its terms and agrees on everything the claim
  states: every value has an equal one (after normalization), bounds do not point the other way,
  periods and weekdays agree, polarity agrees, names and identifiers are there, the unit attaches no
  condition or threshold the claim leaves out, and no other unit holds the claim terms this one
  lacks (the fact belongs to another entity there);
- **contradicted** (not supported, with the context's counterpart) when the unit it aligns to best
  shows a difference: another value of the same dimension, the opposite bound, another period or
  weekday, the opposite polarity, a quantifier the unit restricts (all vs only), a condition or
  threshold the claim drops — or when the claim's own terms sit in a unit that says otherwise while
  a weaker match agrees only on the value (a fact moved from one entity to another);
- **unsupported** (not supported, nothing to compare) when the context does not speak of it at all:
  its content terms are mostly absent from the whole context, or a value, name or identifier it
  states appears nowhere in it;
- **undecided** otherwise: the tier cannot show either way (a paraphrase its terms do not reach, a
  bound the context does not write, support spread over sentences it does not join). Undecided
  claims count neither way; the judge tier, when configured, decides them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from evaluators.lexical.checking import _ignore_terms
from evaluators.lexical.compare import _compare, _coverage, _states_values
from evaluators.lexical.reading import _CJK_RUNS, Reading, _cjk_chars, _context_summary, _Unit, _units, read
from evaluators.lexical.values import DIMS as _STANDARD_DIMS
from evaluators.lexical.values import comparable, same_value

__all__ = [
    "ClaimVerdict",
    "Reading",
    "check_claim",
    "read",
    "DEFAULT_MIN_COVERAGE",
    "DEFAULT_ABSENT_COVERAGE",
    "DEFAULT_CONTRADICTION_COVERAGE",
]

ClaimLabel = Literal["supported", "contradicted", "unsupported", "undecided"]

DEFAULT_MIN_COVERAGE = 0.6
# a claim whose content terms the whole context covers less than this is about something it never says
DEFAULT_ABSENT_COVERAGE = 0.5
DEFAULT_CONTRADICTION_COVERAGE = 0.5  # the unit that differs must cover this share of the claim's terms
_CONTRA_MIN = DEFAULT_CONTRADICTION_COVERAGE


@dataclass(frozen=True)
class ClaimVerdict:
    label: ClaimLabel
    sentence: str | None  # the context unit that decided (or came nearest)
    coverage: float
    index: int | None = None  # index of the (first) sentence of that unit in the sentences given
    missing: tuple[str, ...] = ()  # what of the claim the unit does not state
    conflicts: tuple[str, ...] = ()  # the differences: the claim's side vs the context's counterpart

    @property
    def decided(self) -> bool:
        return self.label != "undecided"


def check_claim(
    claim: str,
    sentences: Sequence[str],
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    *,
    ignore: str | Iterable[str] | None = None,
    absent_coverage: float = DEFAULT_ABSENT_COVERAGE,
    contradiction_coverage: float = DEFAULT_CONTRADICTION_COVERAGE,
) -> ClaimVerdict:
    """The verdict on ``claim`` against the context ``sentences`` (see the module docstring).

    ``ignore``: query text or words whose terms do not count toward coverage (restated question
    terms); when they would leave the claim without content terms, every term counts.
    ``contradiction_coverage``: the share of the claim's terms the unit that differs must cover."""
    contra_min = min(contradiction_coverage, min_coverage)
    c = read(claim)
    ign = _ignore_terms(ignore)
    keys = c.analysis.terms - ign if ign else c.analysis.terms
    if not keys:
        keys = c.analysis.terms
    units = _units(tuple(sentences))
    if not units:
        return ClaimVerdict("unsupported", None, 0.0, missing=("no context",))
    # coverage of the claim's terms but the question's (for support) and of all its terms (to
    # align a difference: restating the question is no support, but it does say what is meant)
    floor = min(contra_min, min_coverage)
    scored = []
    for n, u in enumerate(units):
        cov = _coverage(keys, c, u.reading)
        acov = _coverage(c.analysis.terms, c, u.reading) if ign else cov
        if cov >= floor or acov >= floor:
            scored.append((cov, acov, n, u))
    scored.sort(key=lambda x: (-x[0], x[2]))
    top = max((x[1] for x in scored), default=0.0)
    best_support: tuple[float, float, _Unit] | None = None
    best_contra: tuple[float, _Unit, list[str], list[str]] | None = None
    nearest: tuple[float, _Unit, list[str]] | None = None
    for cov, acov, _, u in scored:
        if not ign and (
            (best_support is not None and cov < best_support[0])
            or (best_contra is not None and cov < best_contra[0] and cov < min_coverage)
        ):
            break  # (in the order of coverage, nothing further can support, or differ more closely)
        gaps, conflicts = _compare(c, u.reading)
        if nearest is None:
            nearest = (cov, u, gaps + conflicts)
        if not gaps and not conflicts and cov >= min_coverage and best_support is None:
            # a sentence of several clauses (标准版…7 天，企业版…90 天) does not support what one of
            # its clauses states with all the claim's values: that clause decides
            if not (u.split and c.values and _clause_holds(c, u, units)):
                best_support = (cov, acov, u)
        if conflicts and acov >= contra_min and (best_contra is None or acov > best_contra[0]):
            best_contra = (acov, u, gaps, conflicts)
    if best_support is not None:
        cov, acov, u = best_support
        if best_contra is not None and best_contra[0] >= acov:
            if best_contra[0] > acov and not _other_reading(c, keys, best_contra[1], units):
                return _contra(best_contra)
            if best_contra[0] == acov and not c.values:
                # as close to a unit that agrees as to one that differs, and no value tells them
                # apart (a claim one clause states with its values is faithful to that clause)
                return ClaimVerdict("undecided", u.text, round(cov, 4), u.index, (), tuple(best_contra[3]))
        lacking = keys - u.reading.analysis.terms
        # the claim's terms this unit lacks stated in another unit: the fact may belong to that one
        elsewhere = next(
            (
                x
                for x in units
                if x.text not in u.text and u.text not in x.text and lacking <= x.reading.analysis.terms
            ),
            None,
        )
        novel = _novel(c, u.reading, sentences) if lacking else []
        if novel:  # words the context never uses: a detail it does not state (通过支付宝, 专业版)
            return ClaimVerdict("undecided", u.text, round(cov, 4), u.index, tuple(novel))
        if not lacking or elsewhere is None:
            return ClaimVerdict("supported", u.text, round(cov, 4), u.index)
        gaps, conflicts = _compare(c, elsewhere.reading)
        # a unit that states every value of the claim with its bound keeps the claim's values to
        # itself: the other one's difference shows nothing (a W grade after October 15 / drop
        # before October 15), only that the claim joins two statements
        if conflicts and not _states_values(c, u.reading):
            return _contra((_coverage(keys, c, elsewhere.reading), elsewhere, gaps, conflicts))
        return ClaimVerdict("undecided", u.text, round(cov, 4), u.index, tuple(sorted(lacking)))
    if (
        best_contra is not None
        and best_contra[0] >= top - 1e-9
        and not _other_reading(c, keys, best_contra[1], units)
    ):
        return _contra(best_contra)
    absent = _absent(c, keys, units, sentences, absent_coverage)
    if absent:
        return ClaimVerdict(
            "unsupported", nearest[1].text if nearest else None, round(top, 4),
            nearest[1].index if nearest else None, tuple(absent),
        )  # fmt: skip
    if nearest is not None:
        return ClaimVerdict(
            "undecided", nearest[1].text, round(nearest[0], 4), nearest[1].index, tuple(nearest[2])
        )
    return ClaimVerdict("undecided", None, round(top, 4))


def _clause_holds(c: Reading, u: _Unit, units: tuple[_Unit, ...]) -> bool:
    return any(
        x.index == u.index and not x.split and x.text in u.text and x.text != u.text
        and all(any(same_value(v, y) for y in x.reading.values) for v in c.values)
        for x in units
    )  # fmt: skip


def _novel(c: Reading, unit: Reading, sentences: Sequence[str]) -> list[str]:
    """What the claim adds that the context never says: Chinese, a stretch of the claim the unit
    lacks (two bigrams in a row, or a whole word between non-Chinese characters) with a bigram found
    nowhere in the context; English, two or more content terms found nowhere in it."""
    seen = _context_terms(tuple(sentences))
    out: list[str] = []
    for run in _CJK_RUNS.findall(c.analysis.text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        stretch: list[str] = []
        for g in [*grams, ""]:
            if g and g not in unit.analysis.terms and g in c.analysis.terms:
                stretch.append(g)
                continue
            whole = len(stretch) == len(grams) and len(run) >= 2
            if (len(stretch) >= 2 or whole) and any(x not in seen for x in stretch):
                out.append(stretch[0] + "".join(x[1:] for x in stretch[1:]))
            stretch = []
    latin = [t for t in c.analysis.terms if t.isascii() and not t.startswith("#") and t not in seen]
    if len(latin) >= 2:
        out.extend(sorted(latin))
    return out


def _context_terms(sentences: tuple[str, ...]) -> frozenset[str]:
    return _context_summary(sentences)[0]


def _other_reading(c: Reading, keys: frozenset[str], u: _Unit, units: tuple[_Unit, ...]) -> bool:
    """Whether another unit that conflicts with nothing in the claim holds claim terms ``u`` lacks:
    the claim may be about what that one says ("closes at 10 p.m." against "open until midnight
    during exam weeks. On other weeks it closes at 10 p.m."), so ``u``'s difference shows nothing."""
    lacking = keys - u.reading.analysis.terms
    ucov = _coverage(keys, c, u.reading)
    for w in units:
        if w.text == u.text:
            continue
        if (
            _states_values(c, w.reading)
            and _coverage(keys, c, w.reading) >= ucov
            and not _compare(c, w.reading)[1]
        ):
            return True  # as well aligned, and agreeing on every value (一号仓 … / 二号仓 …)
        if not lacking or lacking.isdisjoint(w.reading.analysis.terms):
            continue
        anchored = any(same_value(v, x) for v in c.values for x in w.reading.values)
        if (anchored or _coverage(keys, c, w.reading) >= 0.3) and not _compare(c, w.reading)[1]:
            return True
    return False


def _contra(found: tuple[float, _Unit, list[str], list[str]]) -> ClaimVerdict:
    cov, u, gaps, conflicts = found
    return ClaimVerdict("contradicted", u.text, round(cov, 4), u.index, tuple(gaps), tuple(conflicts))


def _absent(
    c: Reading,
    keys: frozenset[str],
    units: tuple[_Unit, ...],
    sentences: Sequence[str],
    absent_coverage: float,
) -> list[str]:
    """What the claim states that the whole context never mentions (empty when it is all there):
    most of its content terms, or a value, name or identifier."""
    all_terms, all_ids, all_values, seen = _context_summary(tuple(sentences))
    out: list[str] = []
    chars = _cjk_chars(c.analysis.text)
    if chars:  # Chinese: characters, since a paraphrase breaks the bigrams (订单金额满 / 订单满)
        if len(chars & seen) < absent_coverage * len(chars) and len(chars) >= 2:
            out.append("not in context: " + "".join(sorted(chars - seen)))
    else:  # every term, the question's too: a claim about what the context never names is not in it
        words = frozenset(t for t in c.analysis.terms if not t.startswith("#"))
        if len(words) >= 2 and len(words & all_terms) < absent_coverage * len(words):
            out.append("not in context: " + ", ".join(sorted(words - all_terms)))
    for v in c.values:
        if v.kind == "qty" and v.dim in _STANDARD_DIMS and not any(same_value(v, o) for o in all_values):
            if not any(comparable(v, o) for o in all_values) or out:
                out.append(f"not in context: {v}")
    for name in sorted(c.names - all_terms):
        out.append(f"not in context: {name}")
    for ident in c.identifiers:
        if ident not in all_ids:
            out.append(f"not in context: {ident}")
    return out
