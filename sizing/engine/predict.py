"""Prediction uncertainty of a scaling series: a bootstrap over the repetitions. Pure.

A series is a few core counts, each with its timed repetitions. The Universal Scalability
Law (:mod:`sizing.engine.scaling`) is fitted to *every repetition*, weighted so that each
core count counts once. For a model that is one value per core count, that weighted least
squares problem has the same solution as the fit to the per-count means (the within-count
scatter adds a constant to the error), which is what is fitted here.

**The bootstrap** (``DRAWS`` draws, seeded by the data, so the same figures always give the
same interval): in each draw the repetitions of every core count are resampled with
replacement, the law is refitted to the resampled means, and the draw keeps

- the fitted (λ, σ, κ) when three or more core counts were measured, and
- the median of each count's resample (what a measured point's figure would have been).

The quantiles of X(N) over the draws are the prediction interval at N. It widens by itself
with distance from the measured counts, because σ and κ are poorly pinned there. With three
core counts the law passes through the three means exactly: there is no residual, and the
spread of the draws is all the uncertainty there is (no R² is meaningful).

A series without repetitions (the bundled reference data: one published number per core
count) has no draws: :class:`Bootstrap.empty` says so, and the caller states the interval
it uses instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.scaling import MIN_POINTS, Law, fit, refine, search_lambda, solve3, usl
from sizing.intervals import median

DRAWS = 200
LOW_Q, HIGH_Q = 0.025, 0.975

# (cores, repetition values); a figure without repetitions gives its one value
Counts = Sequence[tuple[int, Sequence[float]]]


def quantile(xs: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` (linear between order statistics)."""
    s = sorted(xs)
    if not s:
        raise ValueError("no values")
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _exact3(points: Sequence[tuple[int, float]]) -> tuple[float, float, float] | None:
    """The USL through three points exactly, when its σ, κ ≥ 0 (else None).

    λ·N/X(N) − σ(N−1) − κN(N−1) = 1 is linear in (λ, σ, κ): three points, three equations.
    """
    rows = [[n / x, -(n - 1.0), -(n * (n - 1.0))] for n, x in points]
    got = solve3(rows, [1.0, 1.0, 1.0], tiny=1e-15)
    if got is None:
        return None
    lam, sigma, kappa = got
    tol = 1e-12
    if lam <= 0.0 or sigma < -tol or kappa < -tol:
        return None
    return lam, max(0.0, sigma), max(0.0, kappa)


def fit_near(points: Sequence[tuple[int, float]], lam0: float) -> tuple[float, float, float]:
    """The constrained least-squares USL fit (λ, σ, κ) of ``points``, searching λ near
    ``lam0`` (a bootstrap draw lies near the full data's fit): exact through three points
    when that is feasible, else a coarser λ search than the full fit's, then refined."""
    if len(points) == 3:
        got = _exact3(points)
        if got is not None:
            return got
    law = Law(points)
    lo = max(0.8 * max(x / n for n, x in points), 0.6 * lam0)
    hi = max(lo * 1.05, 1.8 * lam0)
    lam = search_lambda(law, lo, hi, steps=24, iters=30)
    s, k = law.sigma_kappa(lam)
    return refine(points, lam, s, k)


def _seed(counts: Counts) -> int:
    import hashlib  # lazily: only series with repetitions are keyed (reference data never)

    text = ";".join(f"{n}:" + ",".join(f"{v:.6g}" for v in vs) for n, vs in sorted(counts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def data_key(counts: Counts) -> str:
    """A stable key of a series' repetitions (for caching its bootstrap)."""
    return f"{_seed(counts):016x}"


@dataclass(frozen=True)
class Bootstrap:
    """The draws of one series (see the module docstring).

    ``counts`` are the core counts in order; ``medians[b][i]`` is draw ``b``'s median at
    ``counts[i]``; ``params[b]`` its (λ, σ, κ) (empty with fewer than three counts).
    """

    counts: tuple[int, ...]
    medians: tuple[tuple[float, ...], ...] = ()
    params: tuple[tuple[float, float, float], ...] = ()

    @property
    def empty(self) -> bool:
        """No repetitions to resample: no draws."""
        return not self.medians

    def point_draws(self, cores: int) -> tuple[float, ...] | None:
        """The draws of the median at a measured core count."""
        if self.empty or cores not in self.counts:
            return None
        i = self.counts.index(cores)
        return tuple(m[i] for m in self.medians)

    def curve_draws(self, cores: int) -> tuple[float, ...] | None:
        """The draws of X(cores) under the law (None: no law was fitted)."""
        if not self.params:
            return None
        return tuple(max(0.0, usl(cores, *p)) for p in self.params)

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": list(self.counts),
            "medians": [list(m) for m in self.medians],
            "params": [list(p) for p in self.params],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Bootstrap:
        return cls(
            counts=tuple(int(n) for n in data["counts"]),
            medians=tuple(tuple(float(v) for v in m) for m in data["medians"]),
            params=tuple((float(p[0]), float(p[1]), float(p[2])) for p in data["params"]),
        )


def bootstrap(counts: Counts, draws: int = DRAWS) -> Bootstrap:
    """Resample the repetitions within each core count ``draws`` times (module docstring).
    Empty when no count has two or more repetitions."""
    import random  # lazily (start-up time): only computing draws needs it

    data = sorted((int(n), tuple(float(v) for v in vs)) for n, vs in counts if vs)
    ns = tuple(n for n, _ in data)
    if not data or all(len(vs) < 2 for _, vs in data):
        return Bootstrap(ns)
    rng = random.Random(_seed(data))
    law = len(data) >= MIN_POINTS
    lam0 = 0.0
    if law:
        full = fit([(n, sum(vs) / len(vs)) for n, vs in data])
        lam0 = full.lam or max(sum(vs) / len(vs) / n for n, vs in data)
    medians: list[tuple[float, ...]] = []
    params: list[tuple[float, float, float]] = []
    for _ in range(draws):
        samples = [[vs[rng.randrange(len(vs))] for _ in vs] for _, vs in data]
        medians.append(tuple(median(s) for s in samples))
        if law:
            means = [(n, sum(s) / len(s)) for (n, _), s in zip(data, samples, strict=True)]
            params.append(fit_near(means, lam0))
    return Bootstrap(ns, tuple(medians), tuple(params))
