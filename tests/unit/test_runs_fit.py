"""The fit of a series with runs (issue 38): the law most likely under the lognormal noise
the draws assume (least squares in logs, each count weighted by its runs), and the
invariants of the figure built on it: inside its interval, never relatively narrower than
the nearest measured figure, and the linear bound taken from what the truth may be, not
from medians below it."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.engine.figures import build_series
from sizing.engine.runsfit import fit_runs
from sizing.engine.scaling import fit, usl
from sizing.model import Figure

# the non-USL series of benchmarks/calibration: faster than linear from 2 to 4 cores
STEP = {1: 30000.0, 2: 52000.0, 4: 120000.0, 8: 200000.0}


def fig(cores: int, reps: list[float], basis: str = "lab") -> Figure:
    s = sorted(reps)
    return Figure(
        platform="baremetal",
        cores=cores,
        ht="off",
        profile="rps",
        value=s[len(s) // 2],
        unit="requests/s",
        source="measured",
        basis=basis,
        ci_low=s[0],
        ci_high=s[-1],
        reps=tuple(reps),
    )


@st.composite
def runs_series(draw: st.DrawFn) -> list[tuple[int, list[float]]]:
    """1/2/4 (or 1/2/4/8) cores, 2 to 10 runs each (not the same count everywhere), a USL
    truth or a step faster than linear, multiplicative noise up to ±8%."""
    lam = draw(st.floats(1000.0, 100000.0))
    sigma, kappa = draw(st.floats(0.0, 0.15)), draw(st.floats(0.0, 0.01))
    step = draw(st.booleans())
    counts = (1, 2, 4, 8) if draw(st.booleans()) else (1, 2, 4)
    out = []
    for n in counts:
        x = STEP[n] * lam / 30000.0 if step else usl(n, lam, sigma, kappa)
        k = draw(st.integers(2, 10))
        noise = draw(st.lists(st.floats(-0.08, 0.08), min_size=k, max_size=k))
        out.append((n, [x * (1 + e) for e in noise]))
    return out


def log_sse(counts: list[tuple[int, list[float]]], p: tuple[float, float, float]) -> float:
    return sum(
        len(vs) * (math.log(usl(n, *p)) - sum(math.log(v) for v in vs) / len(vs)) ** 2
        for n, vs in counts
    )


@settings(max_examples=40, deadline=None, derandomize=True)
@given(counts=runs_series())
def test_the_runs_fit_is_scipys_least_squares_in_logs(
    counts: list[tuple[int, list[float]]],
) -> None:
    """Never a worse optimum than SciPy's bounded least squares on the same weighted logs,
    started at three points (0.01% of the error, or 1e-12 absolute)."""
    np = pytest.importorskip("numpy")
    opt = pytest.importorskip("scipy.optimize")
    got = fit_runs(counts)
    assert got.lam is not None and got.sigma is not None and got.kappa is not None
    assert got.sigma >= 0.0 and got.kappa >= 0.0
    n = np.array([c for c, _ in counts], dtype=float)
    y = np.array([sum(math.log(v) for v in vs) / len(vs) for _, vs in counts])
    w = np.sqrt(np.array([len(vs) for _, vs in counts], dtype=float))

    def resid(v: Any) -> Any:
        lam, s, k = v
        return w * (np.log(lam * n / (1 + s * (n - 1) + k * n * (n - 1))) - y)

    best = math.inf
    top = float(max(math.exp(v) / c for c, v in zip(n, y, strict=True)))
    for start in ([top, 0.0, 0.0], [top * 1.5, 0.1, 0.001], [top, 0.01, 0.01]):
        res = opt.least_squares(
            resid, start, bounds=([1e-9, 0, 0], [np.inf] * 3), xtol=1e-14, ftol=1e-14, gtol=1e-14
        )
        best = min(best, float(np.sum(res.fun**2)))
    mine = log_sse(counts, (got.lam, got.sigma, got.kappa))
    assert mine <= best * 1.0001 + 1e-12
    # and never worse in logs than the fit in throughput it starts from
    base = fit([(c, sum(vs) / len(vs)) for c, vs in counts])
    assert base.lam is not None and base.sigma is not None and base.kappa is not None
    assert mine <= log_sse(counts, (base.lam, base.sigma, base.kappa)) * (1 + 1e-12)


def test_a_series_with_runs_is_predicted_by_its_fit_in_logs_and_one_without_is_not() -> None:
    runs = [(n, [x * 0.99, x, x * 1.01]) for n, x in STEP.items()]
    (s,) = build_series([fig(n, vs) for n, vs in runs], allow_extrapolation=True).values()
    assert s.at(16).value == pytest.approx(fit_runs(runs).predict(16), rel=1e-12)
    # the throughput fit bends the step to its top counts' spacing: 13% lower at 16 cores
    # than the fit in logs (the study's truth there is 300,000)
    means = [(n, sum(vs) / 3) for n, vs in runs]
    assert fit(means).predict(16) < 0.93 * s.at(16).value
    # figures without runs (reference data) keep the least squares in throughput
    one = [
        Figure(
            platform="baremetal",
            cores=n,
            ht="off",
            profile="rps",
            value=x,
            unit="requests/s",
            source="reference",
            basis="ref",
        )
        for n, x in means
    ]
    (r,) = build_series(one, allow_extrapolation=True).values()
    assert r.at(16).value == pytest.approx(fit(means).predict(16), rel=1e-12)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(counts=runs_series(), scale=st.floats(0.01, 100.0))
def test_the_runs_fit_does_not_depend_on_the_unit(
    counts: list[tuple[int, list[float]]], scale: float
) -> None:
    # requests per second or per minute: the same curve, scaled
    a = fit_runs(counts)
    b = fit_runs([(n, [v * scale for v in vs]) for n, vs in counts])
    for cores in (16, 32):
        assert b.predict(cores) == pytest.approx(a.predict(cores) * scale, rel=1e-5)


@pytest.mark.parametrize("runs", [(0.97, 0.98, 0.99), (0.95, 0.97, 0.99)])
def test_medians_below_a_linear_truth_do_not_cap_the_interval_below_it(
    runs: tuple[float, ...],
) -> None:
    # every run below the truth (30,000 per core): the estimate is held to linear scaling
    # from the measured medians, the interval only to each draw's own, so it reaches above
    figs = [fig(n, [30000.0 * n * f for f in runs]) for n in (1, 2, 4, 8)]
    (s,) = build_series(figs, allow_extrapolation=True).values()
    for cores in (16, 32):
        got = s.at(cores)
        assert got.ci_high is not None
        bound = cores * s.linear_cap_per_core
        assert got.value <= bound * (1 + 1e-9) < got.ci_high


def test_a_step_faster_than_linear_is_inside_an_interval_no_narrower_than_measured() -> None:
    runs = [(n, [x * 0.97, x, x * 1.03]) for n, x in STEP.items()]
    figs = [fig(n, vs) for n, vs in runs]
    (s,) = build_series(figs, allow_extrapolation=True).values()
    eight = figs[-1]
    assert eight.ci_low is not None and eight.ci_high is not None
    for cores in (12, 16, 32):
        got = s.at(cores)
        assert got.ci_low is not None and got.ci_high is not None and got.coverage == 0.95
        assert 0.0 < got.ci_low <= got.value <= got.ci_high
        assert got.ci_low / got.value <= eight.ci_low / eight.value + 1e-12
        assert got.ci_high / got.value >= eight.ci_high / eight.value - 1e-12
