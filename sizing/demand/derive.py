"""From per-second tallies to the demand's figures: rates over the span, the busiest hour,
the size mix, request times, requests per connection and the resumption share."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sizing.demand.model import Rate, iso
from sizing.demand.persecond import PerSecond
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


def rate(series: PerSecond, start: int, end: int) -> Rate:
    """A per-second series over [start, end] (seconds without a count are 0).

    Bounded whatever the span: the blocks are walked one at a time, and what is kept is
    the histogram of the per-second counts (one entry per distinct count), from which the
    percentiles are read by nearest rank; the quiet seconds are counted, not listed (a
    percentile whose rank falls among them is 0). The average is kept unrounded, so
    peak-to-average is the figures' own ratio."""
    seconds = end - start + 1
    hist: Counter[int] = Counter()
    peak, peak_at, total = 0, start, 0
    for secs, counts in series.batches(start, end):
        top = int(counts.max())
        if top > peak:  # the first second that holds the busiest count
            peak, peak_at = top, int(secs[int(np.argmax(counts))])
        total += int(counts.sum())
        values, n = np.unique(counts, return_counts=True)
        hist.update(dict(zip(values.tolist(), n.tolist(), strict=True)))
    quiet = max(0, seconds - sum(hist.values()))
    return Rate(
        peak=peak,
        peak_at=iso(peak_at),
        p99=_rank(hist, quiet, 0.99),
        p999=_rank(hist, quiet, 0.999),
        average=total / seconds,
        start=iso(start),
        end=iso(end),
        seconds=seconds,
    )


def _rank(hist: Counter[int], quiet: int, q: float) -> int:
    """The q-quantile by nearest rank of the busy seconds' counts (``hist``: count ->
    seconds) and ``quiet`` zeros."""
    n = sum(hist.values()) + quiet
    if not n:
        return 0
    k = max(1, math.ceil(q * n))
    if k <= quiet:
        return 0
    seen = quiet
    for value in sorted(hist):
        seen += hist[value]
        if seen >= k:
            return value
    return max(hist)


def busiest_hour(series: PerSecond, start: int, end: int) -> tuple[int, list[int]]:
    """The hour the chart shows (3,600 consecutive seconds, or the span when shorter): of
    the hours that hold the busiest second, the one with the most requests; as its first
    second and its per-second counts. Bounded: only the two hours around the busiest
    second are looked at."""
    if end - start + 1 <= HOUR:
        return start, series.dense(start, end).tolist()
    peak, at = 0, None
    for secs, counts in series.batches(start, end):
        top = int(counts.max())
        if top > peak:
            peak, at = top, int(secs[int(np.argmax(counts))])
    if at is None:
        return start, [0] * HOUR
    lo, hi = max(start, at - HOUR + 1), min(at, end - HOUR + 1)
    around = series.dense(lo, hi + HOUR - 1)
    cum = np.r_[0, np.cumsum(around)]
    sums = cum[HOUR:] - cum[:-HOUR]  # each hour's requests, by its first second
    best_at = lo + int(np.argmax(sums))
    return best_at, around[best_at - lo : best_at - lo + HOUR].tolist()


OUTLIER_GAP = 7 * 86_400  # seconds: a gap this long (at least) sets a time apart
OUTLIER_SPACING = 1_000  # times the median gap between busy seconds, when that is longer
OUTLIER_SECONDS = 3  # a far group of this few busy seconds is an outlier whatever its share
OUTLIER_SHARE = 0.01  # a group of times holding less than this share of the requests


def _gaps(series: PerSecond) -> tuple[Counter[int], int]:
    """The gaps between consecutive busy seconds (gap -> how many), and the busy seconds."""
    gaps: Counter[int] = Counter()
    prev, busy = None, 0
    for secs, _ in series.batches():
        if prev is not None:
            gaps[int(secs[0]) - prev] += 1
        values, n = np.unique(np.diff(secs), return_counts=True)
        gaps.update(dict(zip(values.tolist(), n.tolist(), strict=True)))
        prev, busy = int(secs[-1]), busy + len(secs)
    return gaps, busy


def outliers(series: PerSecond) -> npt.NDArray[np.int64]:
    """The seconds far outside the bulk of the traffic: a stray line from 1970 (a host
    whose clock was not set), or years away. The busy seconds, in order, are cut into
    groups wherever the gap between two is more than OUTLIER_GAP (7 days) and more than
    OUTLIER_SPACING (1,000) times the median gap between busy seconds (the data's own
    spacing); every group but the busiest that holds less than OUTLIER_SHARE (1%) of the
    requests, or no more than OUTLIER_SECONDS (3) busy seconds, is an outlier (one stray
    line in a small log, or a counters' sample at epoch 0 among a few dozen, is more than
    1% of them). A log with a long quiet spell keeps both sides when both carry traffic.
    Bounded: the series is walked block by block, keeping the gaps' histogram and each
    group's weight."""
    none = np.empty(0, np.int64)
    gaps, busy = _gaps(series)
    if busy < 2:
        return none
    cut = max(OUTLIER_GAP, OUTLIER_SPACING * _nth(gaps, (busy - 1) // 2))  # the median
    if max(gaps) <= cut:
        return none
    groups: list[list[int]] = []  # [first second, last second, busy seconds, requests]
    prev = None
    for secs, counts in series.batches():
        cuts = (np.flatnonzero(np.diff(secs) > cut) + 1).tolist()
        for j, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(secs)], strict=True)):
            if j or prev is None or int(secs[0]) - prev > cut:
                groups.append([int(secs[a]), 0, 0, 0])
            g = groups[-1]
            g[1], g[2], g[3] = int(secs[b - 1]), g[2] + b - a, g[3] + int(counts[a:b].sum())
        prev = int(secs[-1])
    weight = np.array([g[3] for g in groups], np.int64)
    few = np.array([g[2] for g in groups], np.int64) <= OUTLIER_SECONDS
    small: npt.NDArray[np.bool_] = (weight < OUTLIER_SHARE * int(weight.sum())) | few
    small[int(np.argmax(weight))] = False
    far = [
        s
        for g, out in zip(groups, small.tolist(), strict=True)
        if out
        for s, _ in series.batches(g[0], g[1])
    ]
    return np.concatenate(far) if far else none


def _nth(hist: Counter[int], k: int) -> int:
    """The k-th smallest (from 0) of the values a histogram counts."""
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen > k:
            return value
    return max(hist)


def drop_outliers(tally: Tally) -> str:
    """Leave the outlier seconds out of the tally's series; the note that says how many
    requests, and where the first were read (empty when none)."""
    out = outliers(tally.requests)
    if not len(out):
        return ""
    before = tally.requests.total()
    where = [f"{tally.edges[s]} ({iso(s)})" for s in out.tolist() if s in tally.edges][:3]
    tally.drop(out)
    n = before - tally.requests.total()
    tally.outliers += n
    at = f": at {', '.join(where)}" if where else ""
    return (
        f"{n:,} request(s) logged at times far from the rest (more than"
        f" {OUTLIER_GAP // 86_400} days and {OUTLIER_SPACING:,} times the usual spacing"
        f" away, under {OUTLIER_SHARE:.0%} of the requests or in {OUTLIER_SECONDS} seconds or"
        f" fewer) left out of the span{at}"
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
    full = tally.full_handshakes.total()
    resumed = tally.resumed.total()
    return round(resumed / (full + resumed), 4) if full + resumed else None


def per_connection(tally: Tally) -> float | None:
    """Requests over new connections across the span (None without new connections)."""
    new = tally.new_connections.total()
    return round(tally.requests.total() / new, 3) if new else None


def totals(tally: Tally, outliers: int, sizes_logged: bool) -> Totals:
    """What was counted over the span: requests, per status class, bytes sent."""
    return Totals(
        requests=tally.requests.total(),
        classes={c: n for c in CLASSES if (n := tally.classes[c].total())},
        bytes_sent=tally.bytes_sent if sizes_logged else None,
        outliers=outliers,
    )
