"""No series the store can hold crashes the engine (issue 45): two runs at one core count,
identical runs, rates from 10^-3 to 10^12 per second (and 0), one to four core counts,
erratic figures. Each gives an answer or a refusal in words, never an exception.

The series are stored points as a run stores them (:func:`tests.labgen.series_points`),
read into figures by the sources layer's own reader (:func:`measured_figure`), then
through what ``recommend``, ``table`` and the guide's chart build from them. The number
of generated series is ``SIZING_EDGE_EXAMPLES`` (default 150 here; 3,000 were run once
for the branch: its report quotes it)."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.engine import CostCatalog, Demand, ServerOffer, build_table, recommend
from sizing.engine.figures import build_series
from sizing.engine.predict import VARIANCE_TAIL, bootstrap, chi2_low, remembering
from sizing.errors import SizingError
from sizing.model import RATE_CEILING, RATE_FLOOR, Figure
from sizing.report.explain import explain
from sizing.sources.bases import measured_figure
from tests.labgen import series_points

EXAMPLES = int(os.environ.get("SIZING_EDGE_EXAMPLES", "150"))
CATALOG = CostCatalog(servers=tuple(ServerOffer(n, 300.0 * n + 500) for n in (1, 2, 4, 8, 16)))
PAIRS = [(60156.0, 78202.8), (60208.0, 48166.4)]  # the issue's: both overflowed exp


def figures(series: dict[int, Sequence[float]], profile: str = "rps") -> list[Figure]:
    """The engine's figures of stored points, as the sources layer reads them."""
    out = []
    for result, samples in series_points(series, profile=profile):
        reps = [s.value for rep, s in samples if rep >= 1 and not s.metric.endswith(".client")]
        f = measured_figure(result, reps, "baremetal", profile, "run 1, r640-01")
        out.append(Figure(**{**f.__dict__, "basis": "r640-01/baremetal/static-128b"}))
    return out


def test_the_two_pairs_of_the_issue_draw_finite_medians() -> None:
    for pair in PAIRS:
        boot = bootstrap([(1, pair)])  # raised OverflowError
        draws = boot.point_draws(1)
        assert draws is not None and len(draws) == 200
        assert all(RATE_FLOOR <= x <= RATE_CEILING for x in draws)


def test_the_variance_bound_is_its_posteriors_99_9_percent_quantile() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 5, 9, 30, 200):
        want = float(stats.chi2.ppf(VARIANCE_TAIL, df))
        assert chi2_low(df, VARIANCE_TAIL) == pytest.approx(want, rel=1e-9)


class _Tails(random.Random):
    """A generator whose every variance draw is the χ² tail's worst (near 0) and whose
    normal draws alternate at ±40 sd: what 1 series in 200 met, every time."""

    def gammavariate(self, alpha: float, beta: float) -> float:
        return 1e-300

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        self._sign = -getattr(self, "_sign", 1.0)
        return mu + 40.0 * sigma * self._sign


def test_the_worst_draws_stay_finite_and_within_the_stored_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(random, "Random", _Tails)
    counts = [(1, (1e-3, 3e-3)), (2, (2e-3,)), (4, (9e11,))]
    for series in ([(1, PAIRS[0])], counts, [(1, (1e12, 1e12)), (8, (1e12, 5e11))]):
        boot = bootstrap(series)
        for m in boot.medians:
            assert all(RATE_FLOOR <= x <= RATE_CEILING for x in m)
        for cores in (1, 3, 16, 64):
            for x in boot.curve_draws(cores) or ():
                assert math.isfinite(x) and x >= 0.0


@st.composite
def stored_series(draw: st.DrawFn) -> tuple[dict[int, list[float]], str]:
    """One host's series as the store can hold it: 1-4 core counts, 1-5 runs each (2 often),
    a median from 10^-3 to 10^12, runs identical, noisy, wide, erratic or 0."""
    counts = draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4, unique=True))
    base = 10.0 ** draw(st.floats(-3.0, 12.0))
    out: dict[int, list[float]] = {}
    for n in counts:
        median = min(RATE_CEILING, base * n ** draw(st.floats(0.0, 1.3)))
        k = draw(st.sampled_from([1, 2, 2, 2, 3, 5]))
        kind = draw(st.sampled_from(["same", "noise", "wide", "erratic", "zero"]))
        runs = []
        for _ in range(k):
            f = {
                "same": 1.0,
                "noise": 1.0 + draw(st.floats(-0.1, 0.1)),
                "wide": draw(st.floats(0.4, 2.5)),
                "erratic": draw(st.sampled_from([1.0, 0.25, 4.0])),
                "zero": draw(st.sampled_from([1.0, 0.0])),
            }[kind]
            runs.append(0.0 if f == 0.0 else min(RATE_CEILING, max(RATE_FLOOR, median * f)))
        out[n] = runs
    return out, draw(st.sampled_from(["rps", "tps"]))


def _figure_ok(f: Figure) -> None:
    for v in (f.value, f.ci_low, f.ci_high):
        assert v is None or (math.isfinite(v) and v >= 0.0), f


def _answer(figs: list[Figure], profile: str, rate: float, extra: dict[str, Any]) -> None:
    """``recommend`` and ``table``'s data and words: an answer, or a refusal in words."""
    demand = Demand(**{profile: rate})
    got = recommend(figs, CATALOG, demand, article_prices=True, **extra)
    for c in (got.recommendation, *got.alternatives):
        if c is not None:
            assert c.servers >= 1 and math.isfinite(c.total_cost)
            for f in c.figures:
                _figure_ok(f)
    assert all(isinstance(line, str) for line in explain(got))
    how = {k: v for k, v in extra.items() if k != "confidence"}
    table = build_table(figs, CATALOG, article_prices=True, **how)
    for row in table.rows:
        for cell in row.cells:
            for v in (cell.value, cell.per_core, cell.cost_per_unit, cell.overhead_pct):
                assert v is None or math.isfinite(v), cell


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    stored=stored_series(),
    rate=st.sampled_from([1.0, 5000.0, 2e5, 1e9]),
    allow=st.booleans(),
    confidence=st.sampled_from([None, 0.9]),
)
def test_every_stored_series_gives_an_answer_or_a_refusal(
    stored: tuple[dict[int, list[float]], str], rate: float, allow: bool, confidence: float | None
) -> None:
    series, profile = stored
    figs = figures(series, profile)
    # 40 draws, not 200: the same draws' code, five times as many series a second (the
    # tails 200 draws would meet are forced in test_the_worst_draws_stay_finite...)
    boot = remembering(lambda counts: bootstrap(counts, draws=40))
    for s in build_series(figs, allow_extrapolation=allow, bootstrapper=boot).values():
        for cores in (1, 2, 3, 4, 6, 8, 16, 32, 64):
            got = s.estimate(cores)
            if not isinstance(got, str):
                _figure_ok(got)
            for x in s.draws(cores) or ():
                assert math.isfinite(x) and x >= 0.0
    extra: dict[str, Any] = {"allow_extrapolation": allow, "bootstrapper": boot}
    try:
        _answer(figs, profile, rate, {**extra, "confidence": confidence})
    except SizingError as exc:  # a refusal in one line (e.g. --confidence without runs)
        assert "\n" not in str(exc)
        _answer(figs, profile, rate, extra)
