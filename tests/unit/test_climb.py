"""The climb to the knee and its interval (sizing.knee.climb_next, knee_interval), and
exact histogram merging (sizing.load.latency)."""

from __future__ import annotations

import random

import pytest

from sizing.knee import CLIMB_FACTOR, REFINE_RATIO, LatencyPoint, climb_next, knee_interval
from sizing.load.latency import (
    HIST_GROWTH,
    Histogram,
    LatencyReport,
    bucket_of,
    merge_histograms,
    merge_latency,
)


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


def climb(cap: float, ceiling: float, start: float = 1000.0) -> tuple[list[float], str]:
    """Run a climb against a server whose p95 is 0.5 ms below ``cap`` and 50 ms above."""
    pts = [point(start, 0.5 if start < cap else 50.0)]
    for _ in range(40):  # bounded
        nxt, why = climb_next(pts, ceiling=ceiling)
        if nxt is None:
            return [p.rate for p in sorted(pts, key=lambda p: p.rate)], why
        pts.append(point(nxt, 0.5 if nxt < cap else 50.0))
    raise AssertionError("the climb did not stop")


def test_climb_doubles_then_bisects_to_a_narrow_interval() -> None:
    rates, why = climb(cap=37_000, ceiling=1e6)
    assert why == ""
    assert {1000 * CLIMB_FACTOR**i for i in range(7)} <= set(rates)  # 1k .. 64k
    pts = [point(r, 0.5 if r < 37_000 else 50.0) for r in rates]
    good, bad = knee_interval(pts) or (0, 0)
    assert good < 37_000 <= bad and bad / good <= REFINE_RATIO
    assert len(rates) <= 12


def test_climb_stops_at_the_clients_ceiling_without_a_knee() -> None:
    rates, why = climb(cap=1e9, ceiling=20_000)
    assert rates[-1] == 20_000 and "most the clients can offer" in why
    assert knee_interval([point(r, 0.5) for r in rates]) is None


def test_errors_are_a_knee_and_a_bad_first_rate_stops() -> None:
    pts = [point(1000, 0.5), point(2000, 0.5, errors=0.01)]
    assert knee_interval(pts) == (1000, 2000)
    nxt, _ = climb_next(pts, ceiling=1e6)
    assert nxt == 1414
    nxt, why = climb_next([point(1000, 0.5, errors=0.5)], ceiling=1e6)
    assert nxt is None and "already fails" in why


def test_histograms_merge_exactly_and_percentiles_follow_the_union() -> None:
    rng = random.Random(7)
    fast = [rng.uniform(0.2, 1.0) for _ in range(9000)]  # ms
    slow = [rng.uniform(5.0, 50.0) for _ in range(1000)]

    def hist(xs: list[float]) -> Histogram:
        b: dict[int, int] = {}
        for x in xs:
            i = bucket_of(x * 1000)
            b[i] = b.get(i, 0) + 1
        return Histogram(len(xs), sum(xs), min(xs), max(xs), b)

    a, b = hist(fast), hist(slow)
    m = merge_histograms([a, b])
    assert m is not None and m.count == 10_000 and m.min_ms == min(fast)
    union = sorted(fast + slow)
    for p in (50.0, 95.0, 99.0):
        exact = union[int(p / 100 * len(union)) - 1]
        assert exact <= m.percentile(p) <= exact * HIST_GROWTH**2, p
    # merge_latency uses the histograms when every report carries one
    reps = [
        LatencyReport(h.count, h.min_ms, h.max_ms, h.mean_ms, ((50.0, 1.0),), histogram=h)
        for h in (a, b)
    ]
    merged = merge_latency(reps, percentiles=(95.0,))
    assert merged is not None and merged.histogram is not None
    assert merged.percentiles_ms[95.0] == pytest.approx(m.percentile(95.0))
    # the average of the two clients' p99 is far from the union's p99
    avg = (a.percentile(99.0) + b.percentile(99.0)) / 2
    assert abs(avg - m.percentile(99.0)) > 0.2 * m.percentile(99.0)
    assert Histogram.from_json(m.to_json()) == m


def test_histogram_json_is_checked() -> None:
    with pytest.raises(ValueError, match="count"):
        Histogram.from_json(
            {"count": 3, "sum_ms": 1, "min_ms": 1, "max_ms": 1, "buckets": {"5": 2}}
        )
    with pytest.raises(ValueError, match="growth"):
        Histogram.from_json(
            {"count": 0, "sum_ms": 0, "min_ms": 0, "max_ms": 0, "growth": 1.1, "buckets": {}}
        )
