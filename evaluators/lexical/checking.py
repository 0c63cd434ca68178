"""Claim support: whether one context sentence supports, contradicts or leaves unsupported a claim
(coverage of its content terms and agreement of its numbers, dates, identifiers, negations,
periods and names), and whether an answer expresses a fact."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from evaluators.lexical.analysis import analyze, quantities_of
from evaluators.lexical.claim_split import clauses
from evaluators.lexical.patterns import _UNIT_NAMES
from evaluators.lexical.sentence_split import sentences
from evaluators.lexical.tokens import Analysis, Quantity, _id_prefix
from evaluators.text import normalize

DEFAULT_MIN_COVERAGE = 0.6
DEFAULT_CONTRADICTION_COVERAGE = 0.5

Label = Literal["supported", "contradicted", "unsupported"]


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
