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

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass


def _binom_cdf_half(n: int, k: int) -> float:
    """P(B ≤ k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2.0**n


def median(values: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count). Here rather than
    :func:`statistics.median` so that ``recommend``'s start-up never imports
    :mod:`statistics` (and with it :mod:`decimal` and :mod:`fractions`)."""
    s = sorted(values)
    n = len(s)
    if not n:
        raise ValueError("no values")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


@functools.cache  # a few (n, k) pairs, asked for every figure read
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


def interval_words(n: int, level: float = 0.95) -> str:
    """What the interval of :func:`median_interval` over ``n`` values covers, in words:
    ``range of 3 runs, 75%`` when [min, max] is all there is, ``interval of the median of
    10 runs, 97.9%`` otherwise (the share is its true coverage); ``1 run, no interval``."""
    if n < 2:
        return f"{n} run{'s' if n != 1 else ''}, no interval"
    cov = median_coverage(n, level)
    if _rank(n, level) == 1:
        return f"range of {n} runs, {cov * 100:.3g}%"
    return f"interval of the median of {n} runs, {cov * 100:.1f}%"


ERRATIC_FACTOR = 2.0  # a repetition below half (or above twice) the median


def repetition_flags(values: Sequence[float]) -> tuple[tuple[str, ...], str]:
    """The flag ``erratic`` and one sentence when a repetition lies below half or above
    twice the median (one window measured something else); ``((), "")`` otherwise. A
    trend across the repetitions (``drift``) is decided across a run's points, not here
    (:mod:`sizing.trend`)."""
    vals = [float(v) for v in values]
    if len(vals) < 2:
        return (), ""
    med = median(vals)
    odd = [v for v in vals if med > 0 and (v < med / ERRATIC_FACTOR or v > med * ERRATIC_FACTOR)]
    if not odd:
        return (), ""
    return ("erratic",), (
        f"repetitions {', '.join(f'{v:,.0f}' for v in odd)} against a median of "
        f"{med:,.0f}: re-measure this point"
    )


# -- paired legs -------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedRatio:
    """The ratio of two legs measured in alternation (``sizing.plan.pairs``): the median
    of the per-pair ratios ``b_i / a_i`` and the distribution-free interval of that median
    (:func:`median_interval`, the rule every point's interval follows), with its true
    coverage. Drift that lands on both windows of a pair cancels in its ratio; what is
    left is the leg-to-leg difference, which the interval measures directly.

    ``unpaired`` builds the comparison two independent intervals allow: the ratio of the
    medians, with the interval that pairs one leg's low end with the other's high end (the
    conservative bound the engine used before pairs existed)."""

    ratio: float
    low: float | None
    high: float | None
    pairs: int  # pairs of repetitions (unpaired: the fewer repetitions of the two legs)
    coverage: float | None  # the interval's true coverage (0-1); None unpaired
    paired: bool
    leg_coverage: float | None = None  # unpaired: what each leg's own interval covers

    @classmethod
    def of(cls, a: Sequence[float], b: Sequence[float]) -> PairedRatio | None:
        """From the legs' values in pair order (``a[i]`` and ``b[i]`` measured together);
        None when a pair has no positive A value or there is no pair."""
        n = min(len(a), len(b))
        if n == 0 or any(float(x) <= 0 for x in a[:n]):
            return None
        ratios = [float(y) / float(x) for x, y in zip(a[:n], b[:n], strict=True)]
        return cls.of_ratios(ratios)

    @classmethod
    def of_ratios(cls, ratios: Sequence[float]) -> PairedRatio | None:
        if not ratios:
            return None
        got = median_interval(ratios)
        n = len(ratios)
        return cls(
            median(ratios),
            None if got is None else got[0],
            None if got is None else got[1],
            n,
            median_coverage(n) if n >= 2 else None,
            True,
        )

    @classmethod
    def unpaired(
        cls,
        a: float,
        b: float,
        a_ci: tuple[float | None, float | None],
        b_ci: tuple[float | None, float | None],
        n: int,
    ) -> PairedRatio | None:
        """From two independent medians and their intervals (``n``: the fewer repetitions
        of the two legs, which sets the coverage the legs' intervals have)."""
        if a <= 0:
            return None
        lo = hi = None
        if None not in (*a_ci, *b_ci) and (a_ci[0] or 0) > 0:
            assert a_ci[0] is not None and a_ci[1] is not None
            assert b_ci[0] is not None and b_ci[1] is not None
            lo, hi = b_ci[0] / a_ci[1], b_ci[1] / a_ci[0]
        leg = median_coverage(n) if n >= 2 and lo is not None else None
        return cls(b / a, lo, hi, n, None, False, leg)

    def words(self) -> str:
        """``5 pairs, range of 5, 93.8%``; for two independent legs ``unpaired (from both
        legs' intervals, each 75%)``: the combined interval holds the true ratio at least
        when both legs' intervals hold their medians, which each does that often."""
        if not self.paired:
            if self.low is None:
                return "unpaired, no interval"
            if self.leg_coverage is None:
                return "unpaired (from both legs' intervals)"
            return f"unpaired (from both legs' intervals, each {self.leg_coverage * 100:.3g}%)"
        if self.pairs < 2:
            return f"{self.pairs} pair, no interval"
        cov = f", {self.coverage * 100:.3g}%" if self.coverage is not None else ""
        k = _rank(self.pairs, 0.95)
        what = f"range of {self.pairs}" if k == 1 else f"interval of the median of {self.pairs}"
        return f"{self.pairs} pairs, {what}{cov}"

    @property
    def half_width(self) -> float | None:
        """Half the interval's width relative to the ratio (the stop rule's measure)."""
        if self.low is None or self.high is None or not self.ratio:
            return None
        return (self.high - self.low) / 2 / abs(self.ratio)
