"""The paired bootstrap and McNemar's exact test against independent computations: scipy, and an
exact enumeration of every bootstrap resample of a small case set."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scipy import stats as sps

from ragfault import stats


def _exact_bootstrap_quantiles(pairs: list[stats.Pair], qs: tuple[float, ...]) -> list[float]:
    """Every one of the n**n resamples (equally likely), the statistic of each, the quantiles."""
    n = len(pairs)
    values = sorted(
        v for pick in itertools.product(range(n), repeat=n)
        if (v := stats.paired_delta([pairs[i] for i in pick])) is not None
    )  # fmt: skip
    return [stats.percentile(values, q) for q in qs]


@pytest.mark.parametrize(
    "pairs",
    [
        [(1, 1, 1, 1), (0, 1, 1, 1), (1, 1, 0, 1), (0, 1, 1, 1), (0, 1, 1, 1), (1, 1, 1, 1)],  # a rate
        [(0.5, 1, 1.0, 1), (0.25, 1, 0.75, 1), (1.0, 1, 1.0, 1), (0.0, 1, 0.5, 1), (1.0, 1, 0.0, 1)],  # macro
        [(2, 3, 3, 3), (1, 1, 0, 2), (0, 2, 2, 2), (4, 4, 1, 4), (1, 2, 2, 2)],  # a ratio of sums
    ],
    ids=["rate", "macro", "micro"],
)
def test_bootstrap_interval_matches_exact_enumeration(pairs: list[stats.Pair]) -> None:
    low, high = _exact_bootstrap_quantiles(pairs, (0.025, 0.975))
    ci = stats.bootstrap_ci(pairs, resamples=20_000, seed=7)
    assert ci is not None
    # Monte Carlo error of a 2.5 % quantile from 20,000 draws; the statistic moves in steps of 1/n
    # or so, so an interval endpoint is either the exact one or its neighbour step.
    step = 1 / len(pairs)
    assert abs(ci.low - low) <= step * 0.6, (ci, low, high)
    assert abs(ci.high - high) <= step * 0.6, (ci, low, high)


def test_bootstrap_interval_agrees_with_scipy_on_a_larger_set() -> None:
    rng = random.Random(3)
    base = [rng.random() for _ in range(60)]
    run = [min(1.0, b + rng.gauss(0.08, 0.2)) for b in base]
    pairs = [(b, 1.0, r, 1.0) for b, r in zip(base, run, strict=True)]
    ours = stats.bootstrap_ci(pairs, resamples=10_000, seed=1)
    ref = sps.bootstrap(
        (run, base), lambda r, b: sum(r) / len(r) - sum(b) / len(b), paired=True, vectorized=False,
        n_resamples=10_000, method="percentile", random_state=1,
    ).confidence_interval  # fmt: skip
    assert ours is not None
    width = ref.high - ref.low
    assert abs(ours.low - ref.low) < 0.05 * width
    assert abs(ours.high - ref.high) < 0.05 * width
    assert stats.paired_delta(pairs) == pytest.approx(sum(run) / 60 - sum(base) / 60)


def test_bootstrap_is_seeded_and_handles_degenerate_sets() -> None:
    rng = random.Random(0)
    pairs = [(rng.random(), 1.0, rng.random(), 1.0) for _ in range(30)]
    assert stats.bootstrap_ci(pairs, seed=5) == stats.bootstrap_ci(pairs, seed=5)
    assert stats.bootstrap_ci(pairs, seed=5) != stats.bootstrap_ci(pairs, seed=6)
    assert stats.bootstrap_ci([], seed=0) is None
    same = stats.bootstrap_ci([(0.0, 1.0, 1.0, 1.0)] * 5)
    assert same is not None and (same.low, same.high) == (1.0, 1.0)
    # a ratio whose resamples may draw only zero denominators: those resamples are left out
    sparse = [(0.0, 0.0, 0.0, 0.0), (1.0, 2.0, 2.0, 2.0)]
    ci = stats.bootstrap_ci(sparse, resamples=1000, seed=0)
    assert ci is not None and ci.resamples < 1000 and ci.low == ci.high == 0.5


@pytest.mark.parametrize("b,c", [(0, 0), (0, 1), (1, 0), (3, 3), (2, 9), (9, 2), (0, 12), (17, 30), (40, 1)])
def test_mcnemar_exact_matches_scipy_binomtest(b: int, c: int) -> None:
    ours = stats.mcnemar_exact(b, c)
    expected = 1.0 if b + c == 0 else sps.binomtest(b, b + c, 0.5).pvalue
    assert ours == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_mcnemar_known_values() -> None:
    # 0 vs 5 discordant pairs: 2 * 0.5**5
    assert stats.mcnemar_exact(0, 5) == 2 / 32
    assert stats.mcnemar_exact(1, 1) == 1.0
    assert stats.mcnemar_exact(2, 9) == pytest.approx(2 * sum(math.comb(11, i) for i in range(3)) / 2**11)


def test_mean_sd() -> None:
    assert stats.mean_sd([]) == (None, None)
    assert stats.mean_sd([0.5]) == (0.5, None)
    m, sd = stats.mean_sd([1.0, 2.0, 4.0])
    assert m == pytest.approx(7 / 3)
    assert sd == pytest.approx(math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2))
