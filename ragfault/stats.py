"""The statistics run comparisons rest on: a paired bootstrap over cases and McNemar's exact test.

A case contributes a numerator and a denominator to a metric in each run, so one function covers
macro metrics (value / 1), rates (0 or 1 / 1) and micro metrics (supported claims / claims). The
bootstrap runs on pyarrow's compute kernels (a dependency already; no numeric library is added):
10,000 resamples of a few hundred cases take a fraction of a second, where a Python loop took
seconds per metric. Draws are seeded, so the same runs give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

Pair = tuple[float, float, float, float]  # baseline numerator, denominator, run numerator, denominator


def ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def paired_delta(pairs: Sequence[Pair]) -> float | None:
    """run value - baseline value over the paired cases (each value a ratio of sums)."""
    bn = sum(p[0] for p in pairs)
    bd = sum(p[1] for p in pairs)
    rn = sum(p[2] for p in pairs)
    rd = sum(p[3] for p in pairs)
    if not bd or not rd:
        return None
    return rn / rd - bn / bd


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) with linear interpolation between order statistics (numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    resamples: int  # resamples whose statistic was defined (a resample may draw only zero denominators)


# Resamples are drawn in blocks of at most this many case draws (memory: ~8 bytes a draw per array).
_BLOCK_DRAWS = 2_000_000


def _draws(n: int, resamples: int, seed: int) -> list[tuple[pa.Array, pa.Array]]:
    """The drawn case indices (0..n-1) of every resample, per block: (indices, each resample's last
    position). They depend on (n, resamples, seed) alone: metrics with as many paired cases share them."""
    key = (n, resamples, seed)
    if key in _DRAW_CACHE:
        return _DRAW_CACHE[key]
    out = []
    per_block = max(1, _BLOCK_DRAWS // n)
    for block, start in enumerate(range(0, resamples, per_block)):
        total = min(per_block, resamples - start) * n
        u = pc.random(total, initializer=(seed * 1_000_003 + block) & 0x7FFFFFFFFFFFFFFF)
        idx = pc.min_element_wise(pc.cast(pc.floor(pc.multiply(u, n)), pa.int32()), n - 1)
        out.append((idx, pa.array(range(n - 1, total, n), pa.int64())))
    if n * resamples <= _CACHE_DRAWS:
        if len(_DRAW_CACHE) >= 8:
            _DRAW_CACHE.pop(next(iter(_DRAW_CACHE)))
        _DRAW_CACHE[key] = out
    return out


_DRAW_CACHE: dict[tuple[int, int, int], list[tuple[pa.Array, pa.Array]]] = {}
_CACHE_DRAWS = 5_000_000  # draws kept for reuse (int32: 20 MB), e.g. 500 cases x 10,000 resamples


def _resampled_sums(
    columns: Sequence[Sequence[float]], n: int, resamples: int, seed: int
) -> list[list[float]]:
    """For each of ``resamples`` draws of n cases with replacement, the sum of each column over
    the drawn cases. Vectorised with pyarrow's compute kernels: uniform draws from
    ``pyarrow.compute.random`` (seeded per block of resamples), taken, summed cumulatively and
    differenced at each resample's end."""
    arrays = [pa.array(c, pa.float64()) for c in columns]
    out: list[list[float]] = [[] for _ in columns]
    for idx, ends in _draws(n, resamples, seed):
        for col, arr in zip(out, arrays, strict=True):
            cs = pc.take(pc.cumulative_sum(pc.take(arr, idx)), ends).to_pylist()
            col.extend(b - a for a, b in zip([0.0, *cs[:-1]], cs, strict=True))
    return out


def bootstrap_ci(
    pairs: Sequence[Pair], *, resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> Interval | None:
    """Percentile interval of the paired difference, resampling cases with replacement.

    None without pairs. Each resample recomputes both values (ratios of sums; for macro metrics and
    rates every denominator is 1, so the statistic is the mean of per-case differences). A resample
    that drew only zero denominators has no statistic and is left out (``Interval.resamples``)."""
    n = len(pairs)
    if n == 0 or resamples <= 0:
        return None
    if len({(p[2] - p[0], p[1], p[3]) for p in pairs}) == 1 and pairs[0][1] and pairs[0][3]:
        d = pairs[0][2] / pairs[0][3] - pairs[0][0] / pairs[0][1]
        return Interval(d, d, resamples)  # every case alike: every resample gives the same value
    unit = all(p[1] == 1 and p[3] == 1 for p in pairs)
    if unit:
        (sums,) = _resampled_sums([[p[2] - p[0] for p in pairs]], n, resamples, seed)
        stats = [s / n for s in sums]
    else:
        bn, bd, rn, rd = _resampled_sums([[p[i] for p in pairs] for i in range(4)], n, resamples, seed)
        stats = [c / d - a / b for a, b, c, d in zip(bn, bd, rn, rd, strict=True) if b and d]
    if not stats:
        return None
    stats.sort()
    tail = (1 - level) / 2
    return Interval(percentile(stats, tail), percentile(stats, 1 - tail), len(stats))


def mcnemar_exact(regressed: int, improved: int) -> float | None:
    """Two-sided exact McNemar p-value: the binomial test of the discordant pairs against p = 0.5.

    p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 0.5); 1.0 when no pair is discordant."""
    if regressed < 0 or improved < 0:
        raise ValueError("counts must be >= 0")
    n = regressed + improved
    if n == 0:
        return 1.0
    k = min(regressed, improved)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (n - 1); sd is None with fewer than two values."""
    if not values:
        return None, None
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, None
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
