"""``support`` scores a sentence before comparing its numbers, dates, ids and negations, and passes
over sentences that cannot change the verdict; verdicts equal those of comparing every sentence."""

from __future__ import annotations

import random

from evaluators.lexical import Analysis, Verdict, analyze, checking, support


def _reference_compare(
    claim: Analysis, keys: frozenset[str], sent: Analysis
) -> tuple[float, float, list[str], list[str]]:
    covered = sum(1 for t in keys if t in sent.positive or (t in claim.negated and t in sent.negated))
    coverage = covered / len(keys) if keys else 1.0
    topical = sum(1 for t in keys if t in sent.terms) / len(keys) if keys else 1.0
    missing, conflicts = checking._mismatches(claim, sent)
    negated_here = sent.negated & claim.terms
    if claim.has_negation and (
        bool(negated_here) or (claim.bare_negation and not claim.negated and sent.has_negation)
    ):
        coverage = topical
    return coverage, topical, missing, conflicts


def _reference_support(
    claim: str, sentences: list[str], min_coverage: float, contra: float, ignore: str
) -> Verdict:
    ca = analyze(claim)
    ign = analyze(ignore).terms if ignore else frozenset()
    keys = ca.terms - ign if ign else ca.terms
    if not keys:
        keys = ca.terms
    contra_min = min(contra, min_coverage)
    best_support = best_contra = best_any = None
    for i, s in enumerate(sentences):
        coverage, topical, missing, conflicts = _reference_compare(ca, keys, analyze(s))
        if not keys and not (ca.quantities or ca.dates or ca.identifiers):
            coverage = topical = 0.0
        if coverage >= min_coverage and not missing and (best_support is None or coverage > best_support[0]):
            best_support = (coverage, i)
        if conflicts and topical >= contra_min and (best_contra is None or topical > best_contra[0]):
            best_contra = (topical, i, missing, conflicts)
        if best_any is None or coverage > best_any[0]:
            best_any = (coverage, i, missing)
    if best_support is not None:
        return Verdict("supported", sentences[best_support[1]], round(best_support[0], 4), best_support[1])
    if best_contra is not None:
        cov, i, missing, conflicts = best_contra
        return Verdict("contradicted", sentences[i], round(cov, 4), i, tuple(missing), tuple(conflicts))
    if best_any is not None and best_any[0] > 0:
        cov, i, missing = best_any
        return Verdict("unsupported", sentences[i], round(cov, 4), i, tuple(missing))
    return Verdict("unsupported", None, 0.0)


EN = [
    "annual",
    "members",
    "may",
    "request",
    "a",
    "refund",
    "within",
    "30",
    "days",
    "of",
    "purchase",
    "not",
    "never",
    "no",
    "refunds",
    "are",
    "given",
    "logs",
    "retained",
    "7",
    "days",
    "30",
    "days",
    "exported",
    "JSON",
    "error",
    "R-17",
    "R-18",
    "rate",
    "limited",
    "wait",
    "seconds",
    "before",
    "retrying",
    "since",
    "2026-03-01",
    "March",
    "5",
    "cannot",
    "transfer",
    "licence",
    "12%",
    "$4.99",
    "support",
    "team",
]
ZH = [
    "年度会员",
    "购买后",
    "7 天内",
    "30 天内",
    "可以",
    "不支持",
    "申请退款",
    "没有",
    "无法",
    "退款金额",
    "按剩余天数计算",
    "超过",
]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return " ".join(rng.choice(EN) for _ in range(rng.randrange(1, 12))) + "."
    return "".join(rng.choice(ZH) for _ in range(rng.randrange(1, 6))) + "。"


def test_support_equals_comparing_every_sentence() -> None:
    rng = random.Random(7)
    for _ in range(1500):
        claim = _text(rng)
        sentences = [_text(rng) for _ in range(rng.randrange(0, 8))]
        min_cov = rng.choice((0.6, 0.3, 1.0))
        contra = rng.choice((0.5, 0.2, 1.0))
        ignore = rng.choice(("", "refund window", "退款"))
        got = support(claim, sentences, min_cov, ignore=ignore or None, contradiction_coverage=contra)
        assert got == _reference_support(claim, sentences, min_cov, contra, ignore), (claim, sentences)


def test_support_equals_comparing_every_sentence_on_long_contexts() -> None:
    """Many sentences, repeats among them (ties between equal sentences go to the earlier one) and
    thresholds down to almost nothing: the comparisons made lazily pick the same sentence."""
    rng = random.Random(11)
    for _ in range(1500):
        claim = _text(rng)
        pool = [_text(rng) for _ in range(rng.randrange(1, 10))]
        sentences = [rng.choice(pool) for _ in range(rng.randrange(0, 25))]
        if rng.random() < 0.3:
            sentences.insert(rng.randrange(len(sentences) + 1), claim)
        min_cov = rng.choice((0.6, 0.3, 1.0, 0.05))
        contra = rng.choice((0.5, 0.2, 1.0, 0.01, None))
        ignore = rng.choice(("", "refund window", "退款", "members 30 days"))
        got = support(claim, sentences, min_cov, ignore=ignore or None, contradiction_coverage=contra)
        want = _reference_support(claim, sentences, min_cov, min_cov if contra is None else contra, ignore)
        assert got == want, (claim, sentences, min_cov, contra, ignore)


def test_cached_comparisons_give_the_same_verdicts_in_other_contexts() -> None:
    """A claim's comparison with a sentence is kept by text (``_mismatches_of``): the same claim
    checked against other sentence lists, and the same sentences for other claims, get the verdicts
    of comparing afresh, and what is kept is not changed by the verdicts built from it."""
    claims = [
        "Refunds are available within 30 days of purchase.",
        "Refunds are not available after 30 days.",
        "年度会员在购买后 7 天内可以申请退款。",
    ]
    first = ["Refunds are available within 14 days of purchase.", "Shipping fees are not refundable."]
    second = ["Refunds are available within 30 days of purchase.", *first]
    third = ["年度会员在购买后 30 天内可以申请退款。", "Refunds are not available after 30 days."]
    checking._mismatches_of.cache_clear()
    for sentences in (first, second, third, first, second):
        for claim in claims:
            assert support(claim, sentences, 0.6, ignore="refund") == _reference_support(
                claim, sentences, 0.6, 0.5, "refund"
            )
    assert checking._mismatches_of.cache_info().hits > 0
    for claim in claims:
        for s in first + second + third:
            assert checking._mismatches_of(claim, s) == checking._mismatches(analyze(claim), analyze(s))
