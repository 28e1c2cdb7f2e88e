"""A distribution-free interval for the median of repeated measurements. Pure.

For ``n`` repetitions sorted as x(1) ≤ … ≤ x(n), the interval [x(k), x(n−k+1)] holds the
true median with probability

    coverage(n, k) = 1 − 2 · P(B ≤ k − 1),   B ~ Binomial(n, 1/2)

whatever the distribution (continuous; ties only make it wider). :func:`median_interval`
takes the largest ``k`` whose coverage is at least ``level``, the narrowest such interval.

**Small n.** Even [min, max] (k = 1) covers only 1 − 2/2ⁿ: 0.50 at n = 2, 0.75 at n = 3,
0.875 at n = 4, 0.9375 at n = 5; n = 6 is the first count to reach 95% (0.969). With fewer
repetitions the function still returns [min, max] and :func:`median_coverage` says how much
it covers, so callers can show "the range of 3 runs (75%)" instead of claiming 95%. With
fewer than 2 values there is no interval (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _binom_cdf_half(n: int, k: int) -> float:
    """P(B ≤ k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2.0**n


def coverage(n: int, k: int) -> float:
    """Coverage of [x(k), x(n−k+1)] for the median of ``n`` values (``1 ≤ k ≤ n/2``)."""
    if n < 2 or k < 1 or 2 * k > n:
        return 0.0
    return 1.0 - 2.0 * _binom_cdf_half(n, k - 1)


def _rank(n: int, level: float) -> int:
    """The largest k with coverage(n, k) ≥ level, or 1 when none reaches it."""
    best = 1
    for k in range(1, n // 2 + 1):
        if coverage(n, k) >= level:
            best = k
        else:
            break
    return best


def median_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The order-statistic interval of the median at ``level`` (see the module docstring):
    [min, max] when ``values`` are too few to reach it, ``None`` for fewer than 2 values."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    n = len(values)
    if n < 2:
        return None
    xs = sorted(float(v) for v in values)
    k = _rank(n, level)
    return xs[k - 1], xs[n - k]


def median_coverage(n: int, level: float = 0.95) -> float:
    """The coverage of the interval :func:`median_interval` returns for ``n`` values
    (below ``level`` when ``n`` is too small to reach it; 0 for fewer than 2)."""
    if n < 2:
        return 0.0
    return coverage(n, _rank(n, level))
