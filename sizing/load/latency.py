"""Latency distributions of load-generator clients, and merging several of them.

Each client reports its own distribution (``wrk_report.lua``: the latency at a fine grid
of percentiles, plus min, max, mean and request count). The distribution of all requests
of a point is the *mixture* of the clients' distributions, each weighted by its request
count: the merged CDF is ``F(x) = sum_i w_i F_i(x)`` with ``w_i = n_i / sum n``, and the
merged percentile ``p`` is the ``x`` where ``F(x) = p``. Averaging or taking the maximum
of per-client percentiles is wrong (a slow client with few requests would move the
average p99 as much as a busy one, and the maximum is the worst client, not the point).

Between the reported percentiles a client's CDF is taken as linear, which is exact at the
grid points and as fine as the grid in between.

**Histograms.** A client that reports a :class:`Histogram` (oha's raw latencies, bucketed on
the client by ``playbooks/files/latency_hist.py``) is merged exactly instead: the counts of
equal buckets add up, so the merged percentiles are those of the union of every client's
(and every repetition's) requests, to the bucket width (1%). When every report of a merge
carries one, :func:`merge_latency` uses them. Pure functions, no I/O.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sizing import records

__all__ = [
    "HIST_GROWTH",
    "Histogram",
    "LatencyReport",
    "MergedLatency",
    "bucket_of",
    "merge_histograms",
    "merge_latency",
]

HIST_GROWTH = 1.01  # bucket i holds latencies in [1.01**i, 1.01**(i+1)) microseconds


def bucket_of(us: float) -> int:
    """The histogram bucket of a latency in microseconds (below 1 us: bucket 0)."""
    return 0 if us < 1.0 else int(math.floor(math.log(us) / math.log(HIST_GROWTH)))


@dataclass(frozen=True)
class Histogram:
    """Every request's latency, bucketed 1% wide (log-spaced, in microseconds).

    ``buckets`` maps a bucket index (:func:`bucket_of`) to its request count; ``sum_ms``,
    ``min_ms`` and ``max_ms`` are exact. Histograms of one layout add up exactly.
    """

    count: int
    sum_ms: float
    min_ms: float
    max_ms: float
    buckets: Mapping[int, int] = field(default_factory=dict)

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile (ms): the upper edge of the bucket holding that rank,
        kept within [min, max] (at most 1% above the exact value)."""
        if self.count <= 0:
            raise ValueError("an empty histogram has no percentiles")
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            if seen >= rank:
                edge_ms = HIST_GROWTH ** (i + 1) / 1000.0
                return min(max(edge_ms, self.min_ms), self.max_ms)
        return self.max_ms

    @property
    def mean_ms(self) -> float:
        return self.sum_ms / self.count if self.count else 0.0

    def to_json(self) -> dict[str, object]:
        """A JSON-able form (bucket indices as strings, as JSON keys must be)."""
        return {
            "count": self.count,
            "sum_ms": self.sum_ms,
            "min_ms": self.min_ms,
            "max_ms": self.max_ms,
            "growth": HIST_GROWTH,
            "buckets": {str(k): v for k, v in sorted(self.buckets.items())},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> Histogram:
        """Read :meth:`to_json`'s (or ``latency_hist.py``'s) form; raises ValueError."""
        if float(doc.get("growth", HIST_GROWTH)) != HIST_GROWTH:  # type: ignore[arg-type]
            raise ValueError(f"histogram growth {doc.get('growth')} is not {HIST_GROWTH}")
        raw = doc.get("buckets")
        if not isinstance(raw, Mapping):
            raise ValueError("histogram has no buckets")
        buckets = {int(k): int(v) for k, v in raw.items()}
        count = int(doc["count"])  # type: ignore[call-overload]
        if count != sum(buckets.values()) or min(buckets.values(), default=0) < 0:
            raise ValueError("histogram count does not match its buckets")
        total, low, high = (_number(doc, k) for k in ("sum_ms", "min_ms", "max_ms"))
        return cls(count, total, low, high, buckets)


def _number(doc: Mapping[str, object], key: str) -> float:
    """``doc[key]`` as a float, or ValueError naming the key."""
    value = doc[key]
    if not isinstance(value, (int, float, str)):
        raise ValueError(f"histogram {key} is not a number: {value!r}")
    return float(value)


def merge_histograms(hists: Sequence[Histogram]) -> Histogram | None:
    """The histogram of the union of the requests of ``hists`` (exact: counts add up)."""
    used = [h for h in hists if h.count > 0]
    if not used:
        return None
    buckets: dict[int, int] = {}
    for h in used:
        for i, n in h.buckets.items():
            buckets[i] = buckets.get(i, 0) + n
    return Histogram(
        count=sum(h.count for h in used),
        sum_ms=sum(h.sum_ms for h in used),
        min_ms=min(h.min_ms for h in used),
        max_ms=max(h.max_ms for h in used),
        buckets=buckets,
    )


@dataclass(frozen=True)
class LatencyReport:
    """What ``playbooks/files/wrk_report.lua`` prints: one client's latency distribution.

    ``cdf`` holds (percentile, milliseconds) pairs in increasing order; ``count`` is the
    number of requests the distribution describes, the weight when distributions of
    several clients are merged.
    """

    count: int
    min_ms: float
    max_ms: float
    mean_ms: float
    cdf: tuple[tuple[float, float], ...]
    requests: int = 0
    errors: int = 0
    histogram: Histogram | None = None


SUMMARY_PERCENTILES = (50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


@dataclass(frozen=True)
class MergedLatency:
    """The latency distribution of all requests of several clients (milliseconds)."""

    count: int
    min_ms: float
    max_ms: float
    mean_ms: float
    percentiles_ms: dict[float, float]
    clients: int
    histogram: Histogram | None = None  # when every merged report carried one

    def record(self) -> records.MergedLatencyRecord:
        """The stored record of this distribution (``latency_p99_ms`` ...)."""
        return records.MergedLatencyRecord.of(
            self.percentiles_ms,
            count=self.count,
            min_ms=self.min_ms,
            mean_ms=self.mean_ms,
            max_ms=self.max_ms,
            clients=self.clients,
        )


def _points(r: LatencyReport) -> list[tuple[float, float]]:
    """(value_ms, cumulative fraction) knots of one client's CDF, from 0 to 1."""
    knots = [(r.min_ms, 0.0)]
    for p, v in r.cdf:
        knots.append((max(v, knots[-1][0]), p / 100.0))
    knots.append((max(r.max_ms, knots[-1][0]), 1.0))
    return knots


def _cdf_at(knots: Sequence[tuple[float, float]], x: float, *, left: bool = False) -> float:
    """The piecewise-linear CDF through ``knots`` at ``x``.

    Several knots at one value make a vertical step: ``left=False`` gives its top (the
    CDF proper), ``left=True`` its bottom (the limit from the left).
    """
    xs = [k[0] for k in knots]
    if left:
        if x <= xs[0]:
            return 0.0
        if x > xs[-1]:
            return 1.0
        i = bisect.bisect_left(xs, x)  # knots[i-1].x < x <= knots[i].x
    else:
        if x < xs[0]:
            return 0.0
        if x >= xs[-1]:
            return 1.0
        i = bisect.bisect_right(xs, x)  # knots[i-1].x <= x < knots[i].x
    (x0, f0), (x1, f1) = knots[i - 1], knots[i]
    if x1 == x0:
        return f1
    return f0 + (f1 - f0) * (x - x0) / (x1 - x0)


def merge_latency(
    reports: Sequence[LatencyReport],
    percentiles: Sequence[float] = SUMMARY_PERCENTILES,
) -> MergedLatency | None:
    """Merge per-client distributions weighted by request count; None when nothing to merge.

    The merged percentile ``p`` is found exactly on the piecewise-linear mixture CDF:
    between two consecutive knots of the union of all clients' knots every client's CDF is
    linear, so the mixture is too, and the crossing is interpolated in closed form (steps,
    where many requests share one latency, are vertical segments of the curve).
    """
    hists = [r.histogram for r in reports if r.count > 0]
    if hists and all(h is not None and h.count > 0 for h in hists):
        merged = merge_histograms([h for h in hists if h is not None])
        if merged is not None:
            return MergedLatency(
                count=merged.count,
                min_ms=merged.min_ms,
                max_ms=merged.max_ms,
                mean_ms=merged.mean_ms,
                percentiles_ms={p: merged.percentile(p) for p in percentiles},
                clients=len(hists),
                histogram=merged,
            )
    used = [r for r in reports if r.count > 0 and r.cdf]
    if not used:
        return None
    total = sum(r.count for r in used)
    weights = [r.count / total for r in used]
    curves = [_points(r) for r in used]
    xs = sorted({x for knots in curves for x, _ in knots})

    def mixture(x: float, left: bool) -> float:
        return sum(w * _cdf_at(k, x, left=left) for w, k in zip(weights, curves, strict=True))

    # The mixture as a monotone polyline: at each knot its bottom, then its top.
    line: list[tuple[float, float]] = []
    for x in xs:
        line.append((x, mixture(x, True)))
        line.append((x, mixture(x, False)))
    out: dict[float, float] = {}
    for p in percentiles:
        target = min(max(p / 100.0, 0.0), 1.0)
        value = line[-1][0]
        for (x0, f0), (x1, f1) in zip(line, line[1:], strict=False):
            if f1 >= target - 1e-12:
                value = x1 if f1 <= f0 else x0 + (x1 - x0) * max(0.0, target - f0) / (f1 - f0)
                break
        out[p] = value
    return MergedLatency(
        count=total,
        min_ms=min(r.min_ms for r in used),
        max_ms=max(r.max_ms for r in used),
        mean_ms=sum(w * r.mean_ms for w, r in zip(weights, used, strict=True)),
        percentiles_ms=out,
        clients=len(used),
    )
