"""From per-second tallies to the demand's figures: rates over the span, the busiest hour,
the size mix, request times, requests per connection and the resumption share."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from sizing.demand.model import Rate, iso
from sizing.demand.tally import CLASSES, SIZE_EDGES, Tally, size_label
from sizing.demand.totals import Totals

HOUR = 3600


def nearest_rank(sorted_values: Sequence[int], q: float) -> int:
    """The q-quantile by nearest rank (the smallest value with at least q of the values at
    or below it)."""
    if not sorted_values:
        return 0
    k = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[k - 1]


def rate(series: Counter[int], start: int, end: int) -> Rate:
    """A per-second series over [start, end] (seconds without a count are 0).

    Bounded by the seconds that carry traffic, never the span: the quiet seconds are
    counted, not listed (a percentile whose rank falls among them is 0). The average is
    kept unrounded, so peak-to-average is the figures' own ratio."""
    seconds = end - start + 1
    inside = {s: v for s, v in series.items() if start <= s <= end and v}
    ordered = sorted(inside.values())
    peak = ordered[-1] if ordered else 0
    peak_at = min((s for s, v in inside.items() if v == peak), default=start)
    total = sum(ordered)
    average = total / seconds if seconds else 0.0
    quiet = max(0, seconds - len(ordered))
    return Rate(
        peak=peak,
        peak_at=iso(peak_at),
        p99=_rank(ordered, quiet, 0.99),
        p999=_rank(ordered, quiet, 0.999),
        average=average,
        start=iso(start),
        end=iso(end),
        seconds=end - start + 1,
    )


def _rank(busy: list[int], quiet: int, q: float) -> int:
    """The q-quantile by nearest rank of ``busy`` (sorted) and ``quiet`` zeros."""
    n = len(busy) + quiet
    if not n:
        return 0
    k = max(1, math.ceil(q * n))
    return 0 if k <= quiet else busy[k - quiet - 1]


def busiest_hour(series: Counter[int], start: int, end: int) -> tuple[int, list[int]]:
    """The hour the chart shows (3,600 consecutive seconds, or the span when shorter): of
    the hours that hold the busiest second, the one with the most requests; as its first
    second and its per-second counts. Bounded: only the two hours around the busiest
    second are looked at."""
    if end - start + 1 <= HOUR:
        return start, [series.get(s, 0) for s in range(start, end + 1)]
    inside = [(v, s) for s, v in series.items() if start <= s <= end and v]
    if not inside:
        return start, [0] * HOUR
    peak = max(v for v, _ in inside)
    at = min(s for v, s in inside if v == peak)
    lo, hi = max(start, at - HOUR + 1), min(at, end - HOUR + 1)
    window = sum(series.get(s, 0) for s in range(lo, lo + HOUR))
    best, best_at = window, lo
    for s in range(lo + 1, hi + 1):
        window += series.get(s + HOUR - 1, 0) - series.get(s - 1, 0)
        if window > best:
            best, best_at = window, s
    return best_at, [series.get(s, 0) for s in range(best_at, best_at + HOUR)]


OUTLIER_GAP = 7 * 86_400  # seconds: a gap this long (at least) sets a time apart
OUTLIER_SPACING = 1_000  # times the median gap between busy seconds, when that is longer
OUTLIER_SHARE = 0.01  # a group of times holding less than this share of the requests


def outliers(series: Counter[int]) -> set[int]:
    """The seconds far outside the bulk of the traffic: a stray line from 1970 (a host
    whose clock was not set), or years away. The busy seconds, in order, are cut into
    groups wherever the gap between two is more than OUTLIER_GAP (7 days) and more than
    OUTLIER_SPACING (1,000) times the median gap between busy seconds (the data's own
    spacing); every group but the busiest that holds less than OUTLIER_SHARE (1%) of the
    requests is an outlier. A log with a long quiet spell keeps both sides when both
    carry traffic. Bounded by the busy seconds (a sort of them)."""
    busy = sorted(s for s, v in series.items() if v)
    if len(busy) < 2:
        return set()
    gaps = sorted(b - a for a, b in zip(busy, busy[1:], strict=False))
    cut = max(OUTLIER_GAP, OUTLIER_SPACING * gaps[len(gaps) // 2])
    if gaps[-1] <= cut:
        return set()
    groups: list[list[int]] = [[busy[0]]]
    for a, b in zip(busy, busy[1:], strict=False):
        if b - a > cut:
            groups.append([])
        groups[-1].append(b)
    total = sum(series[s] for s in busy)
    weight = [sum(series[s] for s in g) for g in groups]
    main = weight.index(max(weight))
    out: set[int] = set()
    for i, g in enumerate(groups):
        if i != main and weight[i] < OUTLIER_SHARE * total:
            out.update(g)
    return out


def drop_outliers(tally: Tally) -> str:
    """Leave the outlier seconds out of the tally's series; the note that says how many
    requests, and where the first were read (empty when none)."""
    out = outliers(tally.requests)
    if not out:
        return ""
    n = sum(tally.requests[s] for s in out)
    tally.outliers += n
    where = [f"{tally.edges[s]} ({iso(s)})" for s in sorted(out) if s in tally.edges][:3]
    tally.drop(out)
    at = f": at {', '.join(where)}" if where else ""
    return (
        f"{n:,} request(s) logged at times far from the rest (more than"
        f" {OUTLIER_GAP // 86_400} days and {OUTLIER_SPACING:,} times the usual spacing"
        f" away, under {OUTLIER_SHARE:.0%} of the requests) left out of the span{at}"
    )


def sizes(tally: Tally) -> list[tuple[str, int]]:
    """The response-size histogram, by bucket label (empty when sizes were not logged)."""
    if not any(tally.sizes):
        return []
    assert len(tally.sizes) == len(SIZE_EDGES) + 1
    return [(size_label(i), n) for i, n in enumerate(tally.sizes)]


def request_time(tally: Tally) -> tuple[int, int] | None:
    """p50 and p99 of ``$request_time`` in ms (nearest rank over every request)."""
    total = sum(tally.request_ms.values())
    if not total:
        return None
    out = []
    for q in (0.5, 0.99):
        rank, seen = max(1, math.ceil(q * total)), 0
        for ms in sorted(tally.request_ms):
            seen += tally.request_ms[ms]
            if seen >= rank:
                out.append(ms)
                break
    return out[0], out[1]


def resumption_share(tally: Tally) -> float | None:
    """Resumed handshakes over the new TLS connections (None without TLS connections)."""
    full = sum(tally.full_handshakes.values())
    resumed = sum(tally.resumed.values())
    return round(resumed / (full + resumed), 4) if full + resumed else None


def per_connection(tally: Tally) -> float | None:
    """Requests over new connections across the span (None without new connections)."""
    new = sum(tally.new_connections.values())
    return round(sum(tally.requests.values()) / new, 3) if new else None


def totals(tally: Tally, outliers: int, sizes_logged: bool) -> Totals:
    """What was counted over the span: requests, per status class, bytes sent."""
    return Totals(
        requests=sum(tally.requests.values()),
        classes={c: n for c in CLASSES if (n := sum(tally.classes[c].values()))},
        bytes_sent=tally.bytes_sent if sizes_logged else None,
        outliers=outliers,
    )
