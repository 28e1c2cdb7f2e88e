"""One model for HT: a prediction never reverses an HT gain measured at every core count
(each HT mode fitted alone predicted HT on below HT off at 16 and 32 cores)."""

from __future__ import annotations

import random

from sizing.engine import Basis, Hardware, Workload
from sizing.engine.figures import build_series
from sizing.intervals import median_coverage, median_interval
from sizing.model import Figure

BID = "h/baremetal/static"


def _figs(ht: str, curve: dict[int, float], seed: int) -> list[Figure]:
    rng = random.Random(seed)
    out = []
    for n, v in curve.items():
        reps = tuple(v * rng.lognormvariate(0, 0.02) for _ in range(10))
        got = median_interval(reps)
        assert got is not None
        out.append(
            Figure(
                "baremetal",
                n,
                ht,
                "rps",
                sorted(reps)[5],
                "requests/s",
                "measured",
                ci_low=got[0],
                ci_high=got[1],
                coverage=median_coverage(10),
                reps=reps,
                basis=BID,
            )
        )
    return out


def _usl(n: int, s: float, k: float) -> float:
    return 30_000.0 * n / (1 + s * (n - 1) + k * n * (n - 1))


def test_ht_on_predictions_keep_the_gain_measured_at_every_count() -> None:
    # the truth: HT on carries 5% more at every core count; the noise of 10 repetitions
    # alone can bend two separate fits apart far beyond what was measured
    off = {n: _usl(n, 0.02, 0.0005) for n in (1, 2, 4, 8)}
    on = {n: 1.05 * v for n, v in off.items()}
    figs = _figs("off", off, 1) + _figs("on", on, 2)
    b = Basis(
        id=BID,
        origin="measured",
        platform="baremetal",
        hardware=Hardware("Xeon", 1, 64, 2),
        workload=Workload("static", 128),
        software="nginx",
        physical_host="h",
        figures=tuple(figs),
    )
    series = build_series(figs, bases=[b], allow_extrapolation=True)
    s_on = series[(BID, "baremetal", "on", "rps")]
    s_off = series[(BID, "baremetal", "off", "rps")]
    measured_gain = all(
        f_on.value > f_off.value for f_on, f_off in zip(s_on.exact, s_off.exact, strict=True)
    )
    assert measured_gain
    for n in (16, 32):
        a, b_ = s_on.estimate(n), s_off.estimate(n)
        assert isinstance(a, Figure) and isinstance(b_, Figure)
        assert a.value > b_.value, (n, a.value, b_.value)
        assert "HT gain measured at 4 core counts" in a.origin
        assert a.ci_low is not None and b_.ci_low is not None and a.ci_low >= b_.ci_low
    # observed figures are the measurements themselves
    four = s_on.estimate(4)
    assert isinstance(four, Figure) and four.source == "measured"
