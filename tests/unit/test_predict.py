"""The hand-written parts of the predictive draws (:mod:`sizing.engine.predict`) proved
against NumPy and SciPy: the closed-form USL fit with σ and κ free, and the draws of a
measured count's true median (a Student-t interval on the logs, pooled over the counts)."""

from __future__ import annotations

import math

import pytest

from sizing.engine.predict import _misfit, _pooled, bootstrap, f1_crit, free_fit, log_rss, quantile
from sizing.engine.scaling import fit, usl


@pytest.mark.parametrize(
    "sigma,kappa", [(0.03, 0.0), (0.08, 0.002), (-0.02, 0.001), (0.05, -0.001)]
)
def test_the_free_fit_passes_through_three_points_of_any_sign(sigma: float, kappa: float) -> None:
    pts = [(n, usl(n, 30000.0, sigma, kappa)) for n in (1, 2, 4)]
    got = free_fit(pts)
    assert got is not None
    assert got == pytest.approx((30000.0, sigma, kappa), rel=1e-6, abs=1e-9)


def test_the_free_fit_is_numpys_weighted_least_squares() -> None:
    np = pytest.importorskip("numpy")
    pts = [(1, 30500.0), (2, 57000.0), (4, 104000.0), (8, 171000.0), (16, 240000.0)]
    a = np.array([[1.0, n - 1.0, n * (n - 1.0)] for n, _ in pts])
    b = np.array([n / x for n, x in pts])
    w = np.array([x / n for n, x in pts])  # rows scaled by X/N: relative error
    coef = np.linalg.lstsq(a * w[:, None], b * w, rcond=None)[0]
    got = free_fit(pts)
    assert got is not None
    assert got == pytest.approx((1 / coef[0], coef[1] / coef[0], coef[2] / coef[0]), rel=1e-6)


def test_a_measured_counts_draws_are_a_pooled_student_t_interval() -> None:
    stats = pytest.importorskip("scipy.stats")
    reps = {
        1: [29000.0, 30000.0, 31500.0],
        2: [56000.0, 58000.0, 59500.0],
        4: [101000.0, 104000.0, 108000.0],
    }
    boot = bootstrap(list(reps.items()), draws=4000)
    logs = {n: [math.log(v) for v in vs] for n, vs in reps.items()}
    means = {n: sum(v) / len(v) for n, v in logs.items()}
    df = sum(len(v) - 1 for v in logs.values())
    s2 = sum((y - means[n]) ** 2 for n, v in logs.items() for y in v) / df
    half = stats.t.ppf(0.975, df) * math.sqrt(s2 / 3)
    draws = boot.point_draws(4)
    assert draws is not None
    lo, hi = quantile(draws, 0.025), quantile(draws, 0.975)
    # Monte Carlo error of 4,000 draws: a few percent of the half-width
    assert math.log(lo) == pytest.approx(means[4] - half, abs=0.08 * half)
    assert math.log(hi) == pytest.approx(means[4] + half, abs=0.08 * half)


def test_log_rss_is_the_constrained_least_squares_in_logs() -> None:
    # a USL series with σ, κ > 0 has no residual; a step faster than linear has one no
    # σ, κ ≥ 0 can remove, and it is no larger than the absolute-error fit's in logs
    exact = [(n, usl(n, 30000.0, 0.05, 0.002)) for n in (1, 2, 4, 8)]
    assert log_rss(exact) < 1e-12
    step = [(1, 30000.0), (2, 52000.0), (4, 120000.0), (8, 200000.0)]
    got = log_rss(step)
    assert got > 1e-3
    f = fit(step)
    assert got <= sum(math.log(x / f.predict(n)) ** 2 for n, x in step) + 1e-12


def test_f1_crit_is_the_squared_student_t_quantile() -> None:
    # t(6) 97.5% = 2.4469, t(27) = 2.0518 (tables)
    assert math.isclose(f1_crit(6, 1.96), 2.4469**2, rel_tol=0.01)
    assert math.isclose(f1_crit(27, 1.96), 2.0518**2, rel_tol=0.005)
    assert f1_crit(0, 1.96) == math.inf


def test_the_misfit_counts_only_beyond_what_the_noise_makes() -> None:
    # 3 runs at ±3% on a USL curve: the test at 95% calls the noise's residual a misfit
    # about 1 time in 20; a step faster than linear (2 -> 4 cores x2.3) is far beyond it
    import random

    rng = random.Random(7)
    found = 0
    for _ in range(60):
        law = [
            (
                n,
                tuple(
                    usl(n, 30000.0, 0.03, 0.001) * math.exp(rng.gauss(0, 0.03)) for _ in range(3)
                ),
            )
            for n in (1, 2, 4, 8)
        ]
        noise, _ = _pooled(law)
        found += _misfit(law, noise) > 0.0
    assert found <= 7  # 3 expected at 95%
    step = [
        (n, tuple(x * math.exp(rng.gauss(0, 0.01)) for _ in range(3)))
        for n, x in [(1, 30000.0), (2, 52000.0), (4, 120000.0), (8, 200000.0)]
    ]
    noise, _ = _pooled(step)
    assert _misfit(step, noise) > 10 * noise
