"""The fit of a series with repetitions: the Universal Scalability Law most likely under
the lognormal noise its draws assume (:mod:`sizing.engine.predict`), in logs, each core
count weighted by its runs. Pure.

The least squares in throughput (:func:`sizing.engine.scaling.fit`) is kept for figures
without runs (the bundled reference data): with no repetitions there is no noise model to
prefer another. Chosen on simulated series with seeds disjoint from the calibration
study's (docs/engine.md, "The calibration study").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sizing.engine.lm import Rows, levenberg_marquardt, solve3
from sizing.engine.scaling import MIN_POINTS, ScalingFit, fit, usl, with_r2


def refine_log(
    points: Sequence[tuple[int, float]],
    weights: Sequence[float],
    start: tuple[float, float, float],
) -> tuple[float, float, float]:
    """(λ, σ ≥ 0, κ ≥ 0) minimising Σ wᵢ·(log X(Nᵢ) − log xᵢ)² from ``start``: projected
    Levenberg–Marquardt steps in logs (a step is kept only when it lowers the error, so
    the result is never worse than the start)."""
    pts = [(float(n), math.log(x), float(w)) for (n, x), w in zip(points, weights, strict=True)]

    def parts(v: tuple[float, float, float]) -> Rows:
        lam_, s_, k_ = v
        out: Rows = []
        for n, y, w in pts:
            d = 1.0 + s_ * (n - 1.0) + k_ * n * (n - 1.0)
            r = math.log(lam_ * n / d) - y if d > 0.0 else math.inf
            out.append((w, r, (1.0 / lam_, -(n - 1.0) / d, -n * (n - 1.0) / d)))
        return out

    return levenberg_marquardt(parts, start, iters=100, tol=1e-14, floor=1e-300)


def fit_runs(counts: Sequence[tuple[int, Sequence[float]]]) -> ScalingFit:
    """The fit of a series with repetitions, under the noise model its draws assume
    (:mod:`sizing.engine.predict`): lognormal runs around each count's true median, so the
    most likely law minimises Σ mᵢ·(log X(Nᵢ) − mean log of count i's runs)², each count
    weighted by its runs mᵢ. The least squares in throughput (:func:`fit`, for figures
    without runs) weights a count by its squared size, the top count ~50 times the
    first: a series the law cannot follow is then bent to its top counts' spacing, which
    cost the non-USL study series 13% at 16 cores (docs/engine.md, "The calibration
    study"). ``points`` are the counts' means, as :func:`fit`'s."""
    means = [(n, sum(vs) / len(vs)) for n, vs in counts]
    ns = [n for n, _ in counts]
    if (
        len(counts) < MIN_POINTS
        or len(set(ns)) != len(ns)
        or min(ns) < 1
        or any(v <= 0.0 for _, vs in counts for v in vs)
    ):
        return fit(means)  # no law, or what fit() refuses with its reason
    logs = [(n, math.exp(sum(math.log(v) for v in vs) / len(vs))) for n, vs in sorted(counts)]
    weights = [float(len(vs)) for _, vs in sorted(counts)]
    top = max(x / n for n, x in logs)
    best = min(
        (refine_log(logs, weights, s) for s in (_log_start(logs, weights), (top, 0.0, 0.0))),
        key=lambda v: sum(
            w * math.log(usl(n, *v) / x) ** 2 for (n, x), w in zip(logs, weights, strict=True)
        ),
    )
    return with_r2(tuple(sorted((int(n), float(x)) for n, x in means)), *best)


def _log_start(
    points: Sequence[tuple[int, float]], weights: Sequence[float]
) -> tuple[float, float, float]:
    """A start for :func:`refine_log`: N/X = a + b(N−1) + cN(N−1) (a = 1/λ, b = σ/λ,
    c = κ/λ) is linear, and weighted by w·(X/N)² its least squares is ≈ the weighted one
    in logs; of the solutions with σ, κ or both held at 0, the feasible one of least
    error in logs."""
    rows = [
        ((1.0, n - 1.0, n * (n - 1.0)), n / x, w * (x / n) ** 2)
        for (n, x), w in zip(points, weights, strict=True)
    ]
    best, start = math.inf, (max(x / n for n, x in points), 0.0, 0.0)
    for free in ((0, 1, 2), (0, 1), (0, 2)):
        # a held term is pinned at 0 by an identity row
        a = [
            [
                sum(f[i] * f[j] * w for f, _, w in rows)
                if i in free and j in free
                else float(i == j)
                for j in range(3)
            ]
            for i in range(3)
        ]
        b = [sum(f[i] * y * w for f, y, w in rows) if i in free else 0.0 for i in range(3)]
        got = solve3(a, b, tiny=1e-14 * max(abs(v) for row in a for v in row))
        if got is None or got[0] <= 0.0 or got[1] < 0.0 or got[2] < 0.0:
            continue
        p = (1.0 / got[0], got[1] / got[0], got[2] / got[0])
        err = sum(
            w * math.log(usl(n, *p) / x) ** 2 for (n, x), w in zip(points, weights, strict=True)
        )
        if err < best:
            best, start = err, p
    return start
