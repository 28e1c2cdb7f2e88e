"""The knee and the SLO search on synthetic latency curves (sizing.knee)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from sizing.errors import UsageError
from sizing.knee import (
    LatencyPoint,
    Slo,
    capacity_from_curve,
    knee,
    search,
)
from sizing.measure.rates import soak_jumps
from sizing.option_text import parse_duration_s, parse_limit_ms, parse_rates, parse_slo
from sizing.records import SoakRep

SLO = Slo("p95", 10.0)
Curve = Callable[[float], LatencyPoint]


def point(rate: float, p95: float, errors: float = 0.0) -> LatencyPoint:
    return LatencyPoint(
        rate=rate,
        mean_ms=p95 / 2,
        p50_ms=p95 / 3,
        p95_ms=p95,
        p99_ms=p95 * 1.5,
        max_ms=p95 * 3,
        error_ratio=errors,
    )


def queue(cap: float, base: float = 0.5) -> Curve:
    """A single queue: p95 = base (1 + 2 r / (cap - r)), overload beyond ``cap``."""
    return lambda r: point(r, base + 2 * base * r / (cap - r) if r < cap else 5000.0)


def exponential(cap: float, base: float = 0.5) -> Curve:
    return lambda r: point(r, base * math.exp(min(4 * r / cap, 50.0)))


def crossing(curve: Curve, lo: float = 1.0, hi: float = 1e7) -> float:
    """The true highest rate meeting the SLO (bisection to 0.01 request/s)."""
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if SLO.met(curve(mid)) else (lo, mid)
    return lo


def binary_probes(curve: Curve, lo: float, hi: float) -> int:
    n = 0
    while (hi - lo) / lo > 0.02:
        mid = round((lo + hi) / 2)
        lo, hi = (mid, hi) if SLO.met(curve(mid)) else (lo, mid)
        n += 1
    return n


SHAPES = [(kind, cap) for kind in ("queue", "exp") for cap in (3100, 4321, 5000, 7200, 8765)]


@pytest.mark.parametrize(("kind", "cap"), SHAPES)
def test_search_reaches_two_percent_from_a_sweep(kind: str, cap: float) -> None:
    curve = queue(cap) if kind == "queue" else exponential(cap)
    sweep = [curve(r) for r in range(1000, 10001, 1000)]
    res = search(curve, SLO, curve=sweep)
    true = crossing(curve)
    assert res.converged and res.capacity is not None
    assert SLO.met(curve(res.capacity))  # a measured rate that met the SLO...
    assert true * 0.98 <= res.capacity <= true  # ...within 2% below the true crossing
    lo, hi = res.bracket
    assert lo is not None and hi is not None and (hi - lo) / lo <= 0.02
    # never more than two probes beyond a plain binary search of the sweep's bracket
    swept = capacity_from_curve(sweep, SLO)
    assert swept is not None
    assert res.probe_count <= binary_probes(curve, swept, swept + 1000) + 2


def test_search_beats_binary_search_overall() -> None:
    ours = theirs = 0
    for kind, cap in SHAPES:
        curve = queue(cap) if kind == "queue" else exponential(cap)
        sweep = [curve(r) for r in range(1000, 10001, 1000)]
        swept = capacity_from_curve(sweep, SLO)
        assert swept is not None
        ours += search(curve, SLO, curve=sweep).probe_count
        theirs += binary_probes(curve, swept, swept + 1000)
    assert ours < theirs


def test_search_without_a_sweep_doubles_then_narrows() -> None:
    curve = queue(60000)
    res = search(curve, SLO, start=1000)
    assert res.converged and res.capacity is not None
    assert crossing(curve) * 0.98 <= res.capacity <= crossing(curve)
    assert [p.rate for p in res.probes[:3]] == [1000, 2000, 4000]


def test_search_measures_the_ceiling_then_stops() -> None:
    # Always met: doubling from 1,000 would pass 20,000; the last step is cut to it.
    res = search(lambda r: point(r, 1.0), SLO, start=1000, ceiling=20_000)
    assert [p.rate for p in res.probes] == [1000, 2000, 4000, 8000, 16000, 20000]
    assert res.capacity == 20_000 and res.bracket == (20_000, None)
    assert not res.converged and "ceiling" in res.reason
    # A sweep that already measured the ceiling: nothing more to probe.
    res = search(lambda r: point(r, 1.0), SLO, curve=[point(20_000, 1.0)], ceiling=20_000)
    assert res.probes == [] and res.capacity == 20_000 and not res.converged


def test_search_halves_when_the_first_rate_fails() -> None:
    curve = queue(300)
    res = search(curve, SLO, start=1000)
    assert res.capacity is not None and crossing(curve) * 0.98 <= res.capacity


def test_search_reports_an_slo_nothing_meets() -> None:
    res = search(lambda r: point(r, 50.0), SLO, start=8, floor=1)
    assert res.capacity is None and "misses the SLO" in res.reason


def test_search_is_bounded_on_noise() -> None:
    rng = random.Random(7)
    noisy = queue(5000)
    res = search(
        lambda r: point(r, noisy(r).p95_ms * rng.uniform(0.7, 1.4)),
        SLO,
        curve=[noisy(r) for r in range(1000, 10001, 1000)],
        max_probes=12,
    )
    assert res.probe_count <= 12 and res.capacity is not None
    assert 3500 <= res.capacity <= 5000


def test_errors_fail_the_slo() -> None:
    assert not SLO.met(point(100, 1.0, errors=0.01))
    assert SLO.met(point(100, 10.0))


def test_knee_is_the_last_rate_before_latency_explodes() -> None:
    pts = [
        point(r, p)
        for r, p in [
            (1000, 1.7),
            (2000, 2.3),
            (3000, 2.2),
            (4000, 2.3),
            (5000, 2.7),
            (6000, 3.0),
            (7000, 4.3),
            (8000, 6860.0),
        ]
    ]
    k = knee(pts)  # the article's NGINX curve, 10-KB file: the knee at 7,000 RPS
    assert k is not None and k.rate == 7000
    assert knee(pts[:5]) is None  # no knee within a flat sweep
    assert knee([point(1000, 1.0), point(2000, 100.0)]) is not None


def test_capacity_from_curve_stops_at_the_first_failure() -> None:
    pts = [point(1000, 2), point(2000, 12), point(3000, 5)]
    assert capacity_from_curve(pts, SLO) == 1000
    assert capacity_from_curve([point(1000, 20)], SLO) is None


def test_parsers() -> None:
    assert parse_rates("1000:10000:1000") == tuple(range(1000, 10001, 1000))
    assert parse_rates("500, 250,500") == (250, 500)
    for bad in ("0:10:1", "10:1:1", "a,b", "1:2", ""):
        with pytest.raises(UsageError):
            parse_rates(bad)
    assert parse_slo("p95=10ms") == Slo("p95", 10.0)
    assert parse_slo("P99<=1.5s") == Slo("p99", 1500.0)
    assert parse_slo("mean=800us").limit_ms == pytest.approx(0.8)
    assert parse_slo("p95=10ms").label == "p95<=10ms"
    for bad in ("p95", "p97=10ms", "p95=-1ms", "p95=0ms"):
        with pytest.raises(UsageError):
            parse_slo(bad)
    assert parse_limit_ms("10ms", "--p95") == 10.0 and parse_limit_ms("0.5s", "--p95") == 500
    assert parse_duration_s("10m", "--soak") == 600 and parse_duration_s("90", "--soak") == 90
    with pytest.raises(UsageError):
        parse_duration_s("soon", "--soak")


def test_soak_jumps_find_the_credit_exhaustion() -> None:
    # the article's Avi SE table at 2,500 RPS: run 17 onwards jumps (p95 in ms)
    p95 = [
        3.2,
        10.3,
        3.4,
        3.2,
        3.4,
        10.2,
        3.3,
        3.3,
        3.3,
        10.4,
        3.4,
        3.4,
        3.2,
        3.2,
        10.5,
        3.3,
        35350,
        50500,
        47500,
        47800,
    ]
    series = [SoakRep(i + 1, p95_ms=v, mean_ms=v / 2) for i, v in enumerate(p95)]
    assert soak_jumps(series) == [2, 6, 10, 15, 17, 18, 19, 20]
    steady = [SoakRep(i, p95_ms=3.0, mean_ms=1.0, server_steal=0.1) for i in (1, 2, 3)]
    assert soak_jumps(steady) == []
    steady[1] = SoakRep(2, p95_ms=3.0, mean_ms=1.0, server_steal=12.0)
    assert soak_jumps(steady) == [2]


def test_a_sweep_whose_every_rate_failed_is_no_figure() -> None:
    """A dead upstream: every request of every rate an error, latency flat. That is a knee
    below the sweep, not 'flat over the whole sweep' with the highest rate as the figure
    (a real run printed 'median 5,000 req/s' and 'no knee' over 100% errors)."""
    from sizing.knee import below_sweep
    from sizing.measure.fixedrate import _Ceiling, _figure

    dead = [point(r, 3000.0, errors=1.0) for r in (1000, 2000, 3000, 4000, 5000)]
    assert knee(dead) is None and below_sweep(dead) == dead[0]
    flags: list[str] = []
    problems: list[str] = []
    value = _figure(
        None, None, None, dead, _Ceiling(8000.0, 1, 8000), "vegeta", flags, problems, ""
    )
    assert value is None and flags == ["knee-below"], (value, flags)
    assert "1,000 requests/s, was already past the knee" in problems[0]
    assert "100.00% errors" in problems[0]
    # A flat, error-free sweep still has its knee above it, and the highest rate stands.
    flat = [point(r, 2.0) for r in (1000, 2000, 3000)]
    flags, problems = [], []
    assert below_sweep(flat) is None
    assert (
        _figure(None, None, None, flat, _Ceiling(8000.0, 1, 8000), "vegeta", flags, problems, "")
        == 3000
    )
    assert flags == ["no-knee"]
