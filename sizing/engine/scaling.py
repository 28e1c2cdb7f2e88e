"""Scaling models: the Universal Scalability Law, fitted to every point.

Throughput at ``N`` cores under the Universal Scalability Law (USL) is

    X(N) = λN / (1 + σ(N−1) + κN(N−1)),   σ, κ ≥ 0

with λ the throughput of one core, σ contention and κ coherency. For a given λ and
C(N) = X(N)/λ the law is linear in σ and κ:

    N/C(N) − 1 = σ(N−1) + κN(N−1)

which :class:`Law` solves as a two-variable non-negative least-squares problem by hand.
λ is always searched for (the least squared error over λ, σ, κ): it is never pinned at the
1-core figure, whose own noise would otherwise bend the whole curve. This least squares in
throughput fits figures without repetitions; a series with runs is fitted in logs, each
count weighted by its runs (:mod:`sizing.engine.runsfit`).

**Fit quality.** Three parameters through three core counts leave no residual: there is
no R² to print, and the uncertainty of a prediction comes from the repetitions
(:mod:`sizing.engine.predict`). With four or more counts R² is computed, and a fit below
:data:`R2_THRESHOLD` is kept but flagged (the points disagree with their own law).

**No USL** (``model == "linear"``) only when fewer than :data:`MIN_POINTS` core counts were
measured: ``predict`` then draws a straight line between observed points, and nothing
beyond them (:mod:`sizing.engine.figures` borrows a shape or refuses). A *retrograde* fit
(peak N* = sqrt((1 − σ)/κ) below a core count asked about) stays the model: it is what
the data say, and linear scaling is only ever an upper bound, never a fallback.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.lm import Rows, levenberg_marquardt

R2_THRESHOLD = 0.9
MIN_POINTS = 3


@dataclass(frozen=True)
class ScalingFit:
    """A fitted scaling model of one series (platform × HT × profile).

    ``model`` is ``usl`` or ``linear``; ``sigma``, ``kappa``, ``lam`` and ``r2`` are the
    USL fit's even when the linear fallback predicts (``None`` when no fit was possible),
    and ``note`` says why the fallback was taken.
    """

    model: str
    points: tuple[tuple[int, float], ...]
    lam: float | None = None
    sigma: float | None = None
    kappa: float | None = None
    r2: float | None = None
    note: str = ""

    @property
    def usable(self) -> bool:
        """Whether the USL predicts (three or more core counts)."""
        return self.model == "usl"

    @property
    def misfit(self) -> bool:
        """Whether the measured points disagree with their own fit (R² below the
        threshold; only knowable with more core counts than parameters)."""
        return self.r2 is not None and self.r2 < R2_THRESHOLD

    @property
    def peak(self) -> float | None:
        """N* = sqrt((1 − σ)/κ), the core count of the fit's peak (None: no peak)."""
        if self.sigma is None or self.kappa is None or self.kappa <= 0.0:
            return None
        return math.sqrt(max(0.0, 1.0 - self.sigma) / self.kappa)

    def predict(self, cores: int) -> float:
        """Throughput at ``cores`` cores under the chosen model."""
        if self.model == "usl":
            assert self.lam is not None and self.sigma is not None and self.kappa is not None
            return usl(cores, self.lam, self.sigma, self.kappa)
        return _linear(self.points, cores)

    def curve(self, top: int) -> list[tuple[float, float]]:
        """The fitted curve from 1 to ``top`` cores for a chart: the USL on a fine grid
        (121 points), a straight line at each core count (none without a figure)."""
        if not self.points:
            return []
        if self.model == "usl":
            assert self.lam is not None and self.sigma is not None and self.kappa is not None
            grid = [1.0 + i * (top - 1.0) / 120 for i in range(121)]
            return [(n, usl(n, self.lam, self.sigma, self.kappa)) for n in grid]
        return [(float(n), self.predict(n)) for n in range(1, top + 1)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "lambda": self.lam,
            "sigma": self.sigma,
            "kappa": self.kappa,
            "r2": self.r2,
            "points": [list(p) for p in self.points],
            "note": self.note,
            "peak": None if self.peak is None else round(self.peak, 3),
        }

    def describe(self) -> str:
        """One line: the model, its parameters and what can be said of its quality."""
        if self.model == "usl":
            peak = self.peak
            at = f", peaks at {peak:.1f} cores" if peak is not None and peak < 1e4 else ""
            head = f"USL fit: λ={self.lam:,.0f} σ={self.sigma:.4f} κ={self.kappa:.5f}{at}"
            if self.r2 is None:
                return (
                    f"{head}; passes through its {len(self.points)} core counts exactly "
                    "(no residual: its uncertainty comes from the repetitions)"
                )
            tail = f"; {self.note}" if self.note else ""
            return f"{head}; R²={self.r2:.3f} on {len(self.points)} core counts{tail}"
        return f"straight line between the measured core counts ({self.note})"


def _sq(v: float) -> float:
    return v * v


def usl(n: float, lam: float, sigma: float, kappa: float) -> float:
    """X(N) under the Universal Scalability Law."""
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def _linear(points: Sequence[tuple[int, float]], cores: int) -> float:
    pts = sorted(points)
    lo_n, lo_x = pts[0]
    hi_n, hi_x = pts[-1]
    if cores <= lo_n:
        return lo_x * cores / lo_n
    if cores >= hi_n:
        return hi_x * cores / hi_n
    for (n0, x0), (n1, x1) in zip(pts, pts[1:], strict=False):
        if n0 <= cores <= n1:
            return x0 + (x1 - x0) * (cores - n0) / (n1 - n0)
    raise AssertionError("unreachable")  # pragma: no cover


def nnls2(rows: Sequence[tuple[float, float]], b: Sequence[float]) -> tuple[float, float, float]:
    """Minimise ‖A·(s, k) − b‖² subject to s, k ≥ 0 for a two-column A.

    Returns ``(s, k, residual sum of squares)``. The candidates are the unconstrained
    least-squares solution (when the normal matrix is regular and it is feasible) and the
    three boundary cases; the feasible candidate with the least residual wins.
    """
    a11 = sum(r[0] * r[0] for r in rows)
    a12 = sum(r[0] * r[1] for r in rows)
    a22 = sum(r[1] * r[1] for r in rows)
    b1 = sum(r[0] * y for r, y in zip(rows, b, strict=True))
    b2 = sum(r[1] * y for r, y in zip(rows, b, strict=True))

    def rss(s: float, k: float) -> float:
        return sum(_sq(r[0] * s + r[1] * k - y) for r, y in zip(rows, b, strict=True))

    candidates: list[tuple[float, float]] = [(0.0, 0.0)]
    det = a11 * a22 - a12 * a12
    if det > 1e-12 * max(1.0, a11 * a22):
        s = (b1 * a22 - b2 * a12) / det
        k = (a11 * b2 - a12 * b1) / det
        if s >= 0.0 and k >= 0.0:
            candidates.append((s, k))
    if a11 > 0.0:
        candidates.append((max(0.0, b1 / a11), 0.0))
    if a22 > 0.0:
        candidates.append((0.0, max(0.0, b2 / a22)))
    best = min(candidates, key=lambda c: rss(*c))
    return best[0], best[1], rss(*best)


class Law:
    """The σ, κ ≥ 0 of the linearised law for any λ, in O(1) after O(n) set-up.

    For λ fixed, b_i = λ·N_i/X_i − 1 = σ(N_i−1) + κN_i(N_i−1) is a two-variable
    non-negative least-squares problem whose normal equations are linear in λ: their sums
    are kept, and each λ costs a few multiplications (the λ search calls it ~60 times per
    fit, ~200 fits per bootstrap)."""

    def __init__(self, points: Sequence[tuple[int, float]]) -> None:
        self.points = [(float(n), float(x)) for n, x in points]
        rows = [(n - 1.0, n * (n - 1.0), n / x) for n, x in self.points if n != 1]
        self.m = len(rows)
        self.a11 = sum(u * u for u, _, _ in rows)
        self.a12 = sum(u * v for u, v, _ in rows)
        self.a22 = sum(v * v for _, v, _ in rows)
        self.u_r = sum(u * r for u, _, r in rows)
        self.u_1 = sum(u for u, _, _ in rows)
        self.v_r = sum(v * r for _, v, r in rows)
        self.v_1 = sum(v for _, v, _ in rows)
        self.r_r = sum(r * r for _, _, r in rows)
        self.r_1 = sum(r for _, _, r in rows)

    def sigma_kappa(self, lam: float) -> tuple[float, float]:
        if self.m == 0:
            return 0.0, 0.0
        b1 = lam * self.u_r - self.u_1
        b2 = lam * self.v_r - self.v_1
        bb = lam * lam * self.r_r - 2.0 * lam * self.r_1 + self.m
        a11, a12, a22 = self.a11, self.a12, self.a22

        def rss(s: float, k: float) -> float:
            return s * s * a11 + 2.0 * s * k * a12 + k * k * a22 - 2.0 * (s * b1 + k * b2) + bb

        cands = [(0.0, 0.0)]
        det = a11 * a22 - a12 * a12
        if det > 1e-12 * max(1.0, a11 * a22):
            s = (b1 * a22 - b2 * a12) / det
            k = (a11 * b2 - a12 * b1) / det
            if s >= 0.0 and k >= 0.0:
                cands.append((s, k))
        if a11 > 0.0:
            cands.append((max(0.0, b1 / a11), 0.0))
        if a22 > 0.0:
            cands.append((0.0, max(0.0, b2 / a22)))
        return min(cands, key=lambda c: rss(*c))

    def cost(self, lam: float) -> float:
        s, k = self.sigma_kappa(lam)
        return sum((usl(n, lam, s, k) - x) ** 2 for n, x in self.points)


def search_lambda(law: Law, lo: float, hi: float, steps: int, iters: int) -> float:
    """λ minimising ``law``'s squared error (σ and κ solved for each λ) in [lo, hi]: a log
    grid of ``steps``, then ``iters`` golden-section steps around the best grid point."""
    grid = [lo * math.pow(hi / lo, i / steps) for i in range(steps + 1)]
    costs = [law.cost(g) for g in grid]
    i = min(range(len(grid)), key=lambda j: costs[j])
    a, c = grid[max(0, i - 1)], grid[min(steps, i + 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iters):
        x1 = c - ratio * (c - a)
        x2 = a + ratio * (c - a)
        if law.cost(x1) <= law.cost(x2):
            c = x2
        else:
            a = x1
    mid = (a + c) / 2.0
    return mid if law.cost(mid) <= costs[i] else grid[i]


def _search_lambda(points: Sequence[tuple[int, float]]) -> float:
    """λ for the full fit. σ, κ ≥ 0 mean the fitted X(N) ≤ λN, so the best λ is near
    max X(N)/N or above; the search starts a little below it (a noisy high point may lie
    above the curve) and goes up to five times it."""
    lo = 0.8 * max(x / n for n, x in points)
    return search_lambda(Law(points), lo, 5.0 * lo, steps=160, iters=60)


def refine(
    points: Sequence[tuple[int, float]], lam: float, sigma: float, kappa: float
) -> tuple[float, float, float]:
    """Polish (λ, σ, κ) to the least-squares optimum in throughput itself.

    The λ search solves σ and κ on the linearised law (N·λ/X − 1), which is close to, not
    exactly, the least squares of X; far from the data the difference matters (up to 11%
    at 16-32 cores on generated series). A few projected Levenberg–Marquardt steps with
    the analytic Jacobian (σ, κ clamped at 0) close it; a step is kept only when it lowers
    the squared error, so the result is never worse than the start."""
    pts = [(float(n), float(x)) for n, x in points]

    def rows(v: tuple[float, float, float]) -> Rows:
        lam_, s_, k_ = v
        out: Rows = []
        for n, x in pts:
            d = 1.0 + s_ * (n - 1.0) + k_ * n * (n - 1.0)
            g = (n / d, -lam_ * n * (n - 1.0) / (d * d), -lam_ * n * n * (n - 1.0) / (d * d))
            out.append((1.0, lam_ * n / d - x, g))
        return out

    return levenberg_marquardt(rows, (lam, sigma, kappa), iters=60, tol=1e-13)


def with_r2(
    pts: tuple[tuple[int, float], ...], lam: float, sigma: float, kappa: float
) -> ScalingFit:
    """The USL fit (λ, σ, κ) of ``pts`` with its R² where it has a residual (more core
    counts than parameters), flagged below :data:`R2_THRESHOLD`."""
    r2: float | None = None
    if len(pts) > MIN_POINTS:
        mean = sum(x for _, x in pts) / len(pts)
        ss_tot = sum(_sq(x - mean) for _, x in pts)
        ss_res = sum(_sq(usl(n, lam, sigma, kappa) - x) for n, x in pts)
        r2 = 1.0 - ss_res / ss_tot if ss_tot > 0.0 else 0.0
    note = ""
    if r2 is not None and r2 < R2_THRESHOLD:
        note = f"the measured points disagree with the fit (R²={r2:.3f}, below {R2_THRESHOLD})"
    return ScalingFit(model="usl", points=pts, lam=lam, sigma=sigma, kappa=kappa, r2=r2, note=note)


def fit(points: Sequence[tuple[int, float]], upto: int | None = None) -> ScalingFit:
    """Fit the USL to ``(cores, throughput)`` points (λ, σ and κ all fitted) on the
    points alone.

    ``upto`` is accepted for old callers and ignored: what a catalog sells never changes a
    fit or a figure. No USL (``model == "linear"``) with fewer than :data:`MIN_POINTS` core
    counts. A retrograde fit (its peak below a core count asked about) is still the model:
    it says the data bend, and the prediction follows it. R² is computed only when the fit
    has a residual (more core counts than parameters); below :data:`R2_THRESHOLD` the fit
    is flagged ``misfit`` (see :attr:`ScalingFit.misfit`), never replaced by a straight line.
    """
    del upto
    pts = tuple(sorted((int(n), float(x)) for n, x in points))
    if not pts:
        raise ValueError("no points to fit")
    distinct = {n for n, _ in pts}
    if len(distinct) != len(pts):
        raise ValueError("one throughput per core count")
    if any(n < 1 or x <= 0.0 for n, x in pts):
        raise ValueError("core counts and throughputs must be positive")
    if len(pts) < MIN_POINTS:
        return ScalingFit(
            model="linear",
            points=pts,
            note=f"{len(pts)} core count(s) measured; the USL needs {MIN_POINTS}",
        )
    lam = _search_lambda(pts)
    sigma, kappa = Law(pts).sigma_kappa(lam)
    lam, sigma, kappa = refine(pts, lam, sigma, kappa)
    return with_r2(pts, lam, sigma, kappa)
