"""Drift: a monotone trend across a point's repetitions, decided across a run's points. Pure.

**The test.** The Mann–Kendall trend test: S = Σ_{i<j} sign(x_j − x_i), Kendall's τ of the
values against their order. Its null distribution ("the repetitions are exchangeable")
is the distribution of the number of inversions of a random permutation (the Mahonian
numbers), so the p-value is exact for any number of repetitions, far into the tail. That
matters here: the run-level correction below compares the smallest p-values with 5% / m
(m up to 64 points or more), where a normal approximation of Spearman's ρ is off by orders
of magnitude (for 10 repetitions in perfect order it says p = 0.003, the truth is 6·10⁻⁷,
so no trend could ever be flagged in a 64-point run). Kendall's and Spearman's tests have
the same power against a trend (asymptotic relative efficiency 1).

**The size.** Sen's slope (the median of the pairwise slopes, the estimator that goes with
the test) times n − 1, relative to the median: "values fell 9% over 10 repetitions".

**Across the run.** One run tests every point with at least :data:`MIN_REPS` repetitions;
testing each at p < 0.05 flags about one trend-free point in twenty, so most labs of 32
points would carry a false alarm. The Benjamini–Hochberg procedure at :data:`FDR` over the
run's tested points keeps the expected share of false flags among the flags at 5% and,
when no point drifts, the chance of any flag in the run at 5% (under that "nothing
drifts" case BH's error rate is the family-wise one). It was chosen over Holm because it
loses less power as the run grows (a real slide that shows on several points lowers the bar
for each). A trend also has to be large enough to matter (:data:`MIN_CHANGE`): a slide
smaller than the ±2% a converged point's interval may span cannot move its figure out of
its own interval. ``benchmarks/drift_false_alarms`` measures both rates.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from statistics import median
from typing import TypeVar

__all__ = [
    "FDR",
    "MIN_CHANGE",
    "MIN_REPS",
    "Trend",
    "benjamini_hochberg",
    "mann_kendall_p",
    "run_drift",
    "trend",
    "words",
]

FDR = 0.05  # the false-discovery rate over one run's points
MIN_CHANGE = 0.02  # the smallest slide over a point's repetitions worth a flag
MIN_REPS = 4  # three values in perfect order happen one time in three: no test below four

K = TypeVar("K", bound=Hashable)


@cache
def _inversions(n: int) -> tuple[int, ...]:
    """How many permutations of ``n`` items have k inversions, k = 0 … n(n−1)/2."""
    counts = [1]
    for m in range(2, n + 1):  # inserting item m adds 0 … m−1 inversions
        new = [0] * (len(counts) + m - 1)
        for k, c in enumerate(counts):
            for add in range(m):
                new[k + add] += c
        counts = new
    return tuple(counts)


def kendall_s(values: Sequence[float]) -> int:
    """Mann–Kendall S: concordant minus discordant pairs of (order, value); ties count 0."""
    n = len(values)
    return sum(
        (values[j] > values[i]) - (values[j] < values[i]) for i in range(n) for j in range(i + 1, n)
    )


def mann_kendall_p(values: Sequence[float]) -> float:
    """Exact two-sided p-value of "no monotone trend": the share of the n! orders whose
    |S| is at least the observed one (ties are scored 0, which only lowers |S|: the test
    stays conservative). 1.0 below :data:`MIN_REPS` values."""
    n = len(values)
    if n < MIN_REPS:
        return 1.0
    pairs = n * (n - 1) // 2
    s = abs(kendall_s(values))
    counts = _inversions(n)
    # S = pairs − 2·inversions; |S| ≥ s ⇔ inversions ≤ (pairs − s) / 2 or its mirror
    low = (pairs - s) // 2
    tail = sum(counts[: low + 1])
    return min(1.0, 2.0 * tail / math.factorial(n))


@dataclass(frozen=True)
class Trend:
    """One point's trend test: repetitions, Kendall's τ, the exact p-value and the
    relative change over the repetitions (Sen's slope × (n − 1) / median)."""

    n: int
    tau: float
    p: float
    change: float


def trend(values: Sequence[float]) -> Trend | None:
    """The trend test of one point's timed repetitions, in their order; None below
    :data:`MIN_REPS` values or with a median of zero."""
    vals = [float(v) for v in values]
    n = len(vals)
    mid = median(vals) if vals else 0.0
    if n < MIN_REPS or mid == 0.0:
        return None
    slopes = [(vals[j] - vals[i]) / (j - i) for i in range(n) for j in range(i + 1, n)]
    return Trend(
        n=n,
        tau=kendall_s(vals) / (n * (n - 1) / 2),
        p=mann_kendall_p(vals),
        change=median(slopes) * (n - 1) / mid,
    )


def benjamini_hochberg(pvalues: Sequence[float], q: float = FDR) -> list[bool]:
    """Which of ``pvalues`` are discoveries at false-discovery rate ``q``: sorted
    ascending, every p up to the largest p(k) ≤ q·k/m."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    last = 0
    for rank, i in enumerate(order, start=1):
        if pvalues[i] <= q * rank / m:
            last = rank
    found = [False] * m
    for i in order[:last]:
        found[i] = True
    return found


def words(t: Trend, tested: int, q: float = FDR) -> str:
    """The reason a point carries the flag, in one sentence."""
    way = "rose" if t.change > 0 else "fell"
    return (
        f"drift: values {way} {100 * abs(t.change):.0f}% over {t.n} repetitions, rank "
        f"correlation (Kendall's τ) {t.tau:+.2f}, p={t.p:.2g}, significant across the run's "
        f"{tested} tested points at FDR {100 * q:.0f}%"
    )


def run_drift(
    series: Mapping[K, Sequence[float]], q: float = FDR, min_change: float = MIN_CHANGE
) -> dict[K, str]:
    """The points of one run that drift, each with its reason: a trend significant under
    Benjamini–Hochberg at ``q`` over the run's tested points and at least ``min_change``
    in size. ``series``: each point's timed repetitions, in order."""
    tests = {k: t for k, v in series.items() if (t := trend(v)) is not None}
    keys = list(tests)
    found = benjamini_hochberg([tests[k].p for k in keys], q)
    return {
        k: words(tests[k], len(keys), q)
        for k, hit in zip(keys, found, strict=True)
        if hit and abs(tests[k].change) >= min_change
    }
