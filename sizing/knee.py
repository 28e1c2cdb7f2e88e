"""Latency against offered rate: the knee, the SLO capacity and the search for it.

Pure functions, no I/O. The sweep (``sizing.measure.fixedrate``) supplies measured points; the
engine and the guide read the results.

* **SLO.** ``p95=10ms`` (also ``p50``, ``p99``, ``mean``, ``max``): a rate *meets* the SLO
  when that statistic of its latencies is at most the limit and no request failed beyond
  the error allowance.
* **SLO capacity.** The highest offered rate that meets the SLO. From a sweep alone it is
  known only to the sweep's step; :func:`search` narrows it to ±2% by probing new rates.
* **Knee.** Where latency spikes (the latency article's "latency spike"): the last swept
  rate whose p95 stays within ``KNEE_FACTOR`` times the low-load p95 (the median of the
  lowest rates' p95) or within ``KNEE_FLOOR_MS``, whichever is higher, when a later rate
  exceeds it. With no SLO given this is the point's capacity; it is also what the guide's
  charts mark. The knee is known only to an interval: the last good and the first bad rate
  (:func:`knee_interval`).
* **Climb.** Without a list of rates the sweep does not walk a fixed list: it climbs
  (:func:`climb_next`) geometrically, ``CLIMB_FACTOR`` per step from a low rate, until a
  rate is bad (p95 beyond the knee limit, or errors), then bisects between the last good
  and the first bad rate until they are ``REFINE_RATIO`` apart. It stops at a ceiling (what
  the clients can offer) or when the generator falls behind: then no knee was reached and
  the highest good rate is only a lower bound.

**The search** keeps a bracket ``[lo, hi]``: ``lo`` met the SLO, ``hi`` did not (from the
sweep, or found by doubling). The first probe interpolates the latency statistic between
the bracket's ends (see :func:`_interpolate`), kept within the middle 80% of the bracket;
the second confirms, one tolerance beyond it on the other side: when the interpolation was
good this closes the bracket in two probes. After that it bisects, so it never takes more
than two probes beyond a plain binary search, whatever the curve looks like. It stops
when ``(hi - lo) / lo <= tolerance`` and returns ``lo``: a rate that was measured to meet
the SLO, within the tolerance of one that did not.
Measurements are noisy: a non-monotonic curve only moves the answer within the bracket.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sizing.errors import UsageError
from sizing.records import LatencyPoint

__all__ = [
    "KNEE_FACTOR",
    "KNEE_FLOOR_MS",
    "LatencyPoint",
    "SearchResult",
    "Slo",
    "capacity_from_curve",
    "climb_next",
    "knee",
    "knee_interval",
    "knee_limit",
    "search",
]

KNEE_FACTOR = 3.0  # p95 above 3x its low-load value: latency has left the flat part
# ...but never a knee below 5 ms of p95: on fast servers a sub-millisecond p95 triples with
# timer and scheduling noise long before a queue builds. The latency article calls its
# NGINX p95 of 4.0 to 5.2 ms at 2,000 to 6,000 RPS (10-KB file) the flat part, before the
# spike it ties to 100% CPU.
KNEE_FLOOR_MS = 5.0
TOLERANCE = 0.02  # ±2%
MAX_PROBES = 16
STATS = ("mean", "p50", "p90", "p95", "p99", "max")
CLIMB_FACTOR = 2.0  # each climbing step offers twice the last good rate
REFINE_RATIO = 1.1  # ...then bisects until the knee's interval is 10% wide
MAX_CLIMB_STEPS = 16  # rates measured by one climb, refinements included


@dataclass(frozen=True)
class Slo:
    """A latency objective: ``stat`` at most ``limit_ms``, errors at most ``max_errors``."""

    stat: str
    limit_ms: float
    max_errors: float = 0.001

    def met(self, p: LatencyPoint) -> bool:
        return p.error_ratio <= self.max_errors and p.stat(self.stat) <= self.limit_ms

    @property
    def label(self) -> str:
        """``p95<=10ms``: the suffix of the engine's profile name ``rps@p95<=10ms``."""
        return f"{self.stat}<={self.limit_ms:g}ms"

    def __str__(self) -> str:
        return f"{self.stat}={self.limit_ms:g}ms"


def knee(points: Sequence[LatencyPoint], factor: float = KNEE_FACTOR) -> LatencyPoint | None:
    """The last rate before latency spikes (see the module docstring), or None when the
    curve never leaves its flat part (no knee within the sweep) or starts beyond it."""
    pts = sorted(points, key=lambda p: p.rate)
    if len(pts) < 2:
        return None
    limit = _knee_limit(pts, factor)
    last_ok: LatencyPoint | None = None
    for p in pts:
        if _bad(p, limit):
            return last_ok
        last_ok = p
    return None


def knee_limit(points: Sequence[LatencyPoint], factor: float = KNEE_FACTOR) -> float | None:
    """The p95 (ms) beyond which a rate is past the knee: ``factor`` x the low-load p95, at
    least ``KNEE_FLOOR_MS``; None without a measured rate."""
    pts = sorted(points, key=lambda p: p.rate)
    return _knee_limit(pts, factor) if pts else None


def _knee_limit(pts: Sequence[LatencyPoint], factor: float) -> float:
    base = statistics.median(p.p95_ms for p in pts[: max(1, min(3, len(pts) // 3))])
    return max(factor * base, KNEE_FLOOR_MS)


def _bad(p: LatencyPoint, limit: float) -> bool:
    return p.p95_ms > limit or p.error_ratio > 0.001


def below_sweep(points: Sequence[LatencyPoint], factor: float = KNEE_FACTOR) -> LatencyPoint | None:
    """The lowest rate when it is already past the knee (p95 beyond the knee limit, or
    errors): the knee lies below the sweep, and no rate of it is a figure. None otherwise."""
    pts = sorted(points, key=lambda p: p.rate)
    if not pts:
        return None
    return pts[0] if _bad(pts[0], _knee_limit(pts, factor)) else None


def knee_interval(
    points: Sequence[LatencyPoint], factor: float = KNEE_FACTOR
) -> tuple[float, float] | None:
    """(last good rate, first bad rate) around the knee, or None when no rate is bad or
    the first one already is (the knee is then below the sweep)."""
    pts = sorted(points, key=lambda p: p.rate)
    if len(pts) < 2:
        return None
    limit = _knee_limit(pts, factor)
    last_ok: LatencyPoint | None = None
    for p in pts:
        if _bad(p, limit):
            return (last_ok.rate, p.rate) if last_ok is not None else None
        last_ok = p
    return None


def climb_next(
    points: Sequence[LatencyPoint],
    *,
    ceiling: float,
    factor: float = KNEE_FACTOR,
    step: float = CLIMB_FACTOR,
    refine: float = REFINE_RATIO,
    max_steps: int = MAX_CLIMB_STEPS,
) -> tuple[float | None, str]:
    """The next rate of a climb to the knee, or (None, why it stops) (module docstring).

    ``points`` are the rates measured so far (the first one, the lowest, sets the low-load
    p95); ``ceiling`` is the most the clients can offer.
    """
    pts = sorted(points, key=lambda p: p.rate)
    if not pts:
        raise UsageError("a climb starts from one measured rate")
    if len(pts) >= max_steps:
        return None, f"the climb's budget of {max_steps} rates is spent"
    limit = _knee_limit(pts, factor)
    if _bad(pts[0], limit) and len(pts) == 1:
        return None, f"the lowest rate, {pts[0].rate:,.0f}/s, already fails"
    interval = knee_interval(pts, factor)
    if interval is not None:
        good, bad = interval
        if bad / good <= refine:
            return None, ""
        nxt = float(round(math.sqrt(good * bad)))
        return (nxt, "") if good < nxt < bad else (None, "")
    top = pts[-1].rate
    if top >= ceiling:
        return None, (
            f"no knee up to {top:,.0f} requests/s, the most the clients can offer: "
            "the knee lies above it"
        )
    return float(round(min(top * step, ceiling))), ""


def capacity_from_curve(points: Sequence[LatencyPoint], slo: Slo) -> float | None:
    """The highest swept rate meeting ``slo`` with every lower rate meeting it too, or
    None when the lowest rate already fails. Known only to the sweep's step."""
    best: float | None = None
    for p in sorted(points, key=lambda p: p.rate):
        if not slo.met(p):
            break
        best = p.rate
    return best


@dataclass
class SearchResult:
    """What :func:`search` found. ``capacity`` is None when even ``floor`` failed."""

    capacity: float | None
    bracket: tuple[float | None, float | None]  # (highest met, lowest failed)
    probes: list[LatencyPoint] = field(default_factory=list)
    converged: bool = False
    reason: str = ""

    @property
    def probe_count(self) -> int:
        return len(self.probes)


def _interpolate(lo: LatencyPoint, hi: LatencyPoint, slo: Slo) -> float:
    """Where the statistic crosses the limit between ``lo`` and ``hi``.

    The mean of two models of a saturating server: latency exponential in the rate
    (log-linear) and latency hyperbolic in the headroom, ``L ~ 1/(capacity - rate)`` as in
    a single queue (1/L linear). Real curves lie between the two.
    """
    a, b, limit = lo.stat(slo.stat), hi.stat(slo.stat), slo.limit_ms
    if a <= 0 or b <= a or not a <= limit <= b or hi.error_ratio > slo.max_errors:
        return (lo.rate + hi.rate) / 2
    t_log = (math.log(limit) - math.log(a)) / (math.log(b) - math.log(a))
    t_inv = (1 / a - 1 / limit) / (1 / a - 1 / b)
    return lo.rate + (t_log + t_inv) / 2 * (hi.rate - lo.rate)


def search(
    probe: Callable[[float], LatencyPoint],
    slo: Slo,
    *,
    curve: Sequence[LatencyPoint] = (),
    start: float = 1000.0,
    ceiling: float = 10_000_000.0,
    floor: float = 1.0,
    tolerance: float = TOLERANCE,
    max_probes: int = MAX_PROBES,
) -> SearchResult:
    """The highest rate meeting ``slo`` to within ``tolerance`` (see the module docstring).

    ``probe(rate)`` measures one rate; ``curve`` holds rates already measured (a sweep),
    which set the first bracket. Without a failing rate in ``curve`` the rate doubles from
    the highest met one (or ``start``) until one fails or ``ceiling`` is measured and met
    (the last step is cut to the ceiling); without a met rate it halves down to ``floor``.
    """
    if not 0 < tolerance < 1:
        raise UsageError(f"tolerance must be between 0 and 1, not {tolerance}")
    probes: list[LatencyPoint] = []
    known = sorted(curve, key=lambda p: p.rate)
    met = [p for p in known if slo.met(p)]
    failed = [p for p in known if not slo.met(p)]
    lo = max(met, key=lambda p: p.rate) if met else None
    # the lowest failure above the highest success: noise below it does not move lo
    above = [p for p in failed if lo is None or p.rate > lo.rate]
    hi = min(above, key=lambda p: p.rate) if above else None

    def measure(rate: float) -> LatencyPoint:
        p = probe(float(round(rate)))
        probes.append(p)
        return p

    while hi is None and len(probes) < max_probes:  # grow until something fails
        if lo is not None and lo.rate >= ceiling:  # the ceiling itself was measured and met
            return SearchResult(
                lo.rate,
                (lo.rate, None),
                probes,
                False,
                f"still met the SLO at the ceiling {ceiling:g}",
            )
        p = measure(min(lo.rate * 2 if lo is not None else start, ceiling))
        if slo.met(p):
            lo = p
        else:
            hi = p
    while lo is None and hi is not None and len(probes) < max_probes:  # shrink until met
        if hi.rate / 2 < floor:
            return SearchResult(
                None, (None, hi.rate), probes, True, f"even {hi.rate:g} requests/s misses the SLO"
            )
        p = measure(hi.rate / 2)
        if slo.met(p):
            lo = p
        else:
            hi = p
    if lo is None or hi is None:
        return SearchResult(
            lo.rate if lo else None,
            (lo.rate if lo else None, hi.rate if hi else None),
            probes,
            False,
            "probe budget spent",
        )
    return _narrow(lo, hi, slo, measure, probes, tolerance, max_probes)


def _narrow(
    lo: LatencyPoint,
    hi: LatencyPoint,
    slo: Slo,
    measure: Callable[[float], LatencyPoint],
    probes: list[LatencyPoint],
    tolerance: float,
    max_probes: int,
) -> SearchResult:
    """Narrow the bracket (lo met, hi missed) to ``tolerance``: interpolate, confirm one
    tolerance beyond the side the last probe moved, then bisect."""
    step = 0
    while (hi.rate - lo.rate) / lo.rate > tolerance:
        if len(probes) >= max_probes:
            return SearchResult(
                lo.rate, (lo.rate, hi.rate), probes, False, f"probe budget ({max_probes}) spent"
            )
        guess = _guess(min(step, 2), lo, hi, slo, probes[-1] if probes else None, tolerance)
        step += 1
        rate = float(round(guess))
        if rate <= lo.rate or rate >= hi.rate:  # the bracket is a few requests wide
            break
        p = measure(rate)
        if slo.met(p):
            lo = p
        else:
            hi = p
    return SearchResult(lo.rate, (lo.rate, hi.rate), probes, True, "")


def _guess(
    phase: int,
    lo: LatencyPoint,
    hi: LatencyPoint,
    slo: Slo,
    last: LatencyPoint | None,
    tolerance: float,
) -> float:
    """The next rate to probe inside the bracket, by phase (see :func:`_narrow`)."""
    width = hi.rate - lo.rate
    mid = lo.rate + width / 2
    if phase == 0:  # interpolate, kept inside the middle 80% of the bracket
        guess = _interpolate(lo, hi, slo)
        return min(max(guess, lo.rate + 0.1 * width), hi.rate - 0.1 * width)
    if phase == 1:  # confirm: one tolerance beyond the side the last probe moved
        if last is lo:
            return min(lo.rate * (1 + tolerance), mid)
        return max(hi.rate / (1 + tolerance), mid)
    return mid  # then bisect: never more than two probes beyond a plain binary search
