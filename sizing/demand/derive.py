"""From per-second tallies to the demand's figures: rates over the span, the busiest hour,
the size mix, request times, requests per connection and the resumption share."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from sizing.demand.model import Rate, iso
from sizing.demand.tally import SIZE_EDGES, Tally, size_label

HOUR = 3600


def nearest_rank(sorted_values: Sequence[int], q: float) -> int:
    """The q-quantile by nearest rank (the smallest value with at least q of the values at
    or below it)."""
    if not sorted_values:
        return 0
    k = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[k - 1]


def rate(series: Counter[int], start: int, end: int, step: float = 1.0) -> Rate:
    """A per-second series over [start, end] (seconds without a count are 0). ``step`` is
    the width of one value (1 s for logs; the scrape interval for counters, whose values
    are already rates)."""
    seconds = end - start + 1
    values = [series.get(s, 0) for s in range(start, end + 1)] if step == 1.0 else []
    if step != 1.0:
        values = list(series.values())
    ordered = sorted(values)
    peak = ordered[-1] if ordered else 0
    peak_at = next((s for s in range(start, end + 1) if series.get(s, 0) == peak), start)
    total = sum(series.values())
    average = total / seconds if step == 1.0 else (sum(values) / len(values) if values else 0)
    return Rate(
        peak=peak,
        peak_at=iso(peak_at),
        p99=nearest_rank(ordered, 0.99),
        p999=nearest_rank(ordered, 0.999),
        average=round(average, 3),
        start=iso(start),
        end=iso(end),
        seconds=seconds,
    )


def busiest_hour(series: Counter[int], start: int, end: int) -> tuple[int, list[int]]:
    """The hour (3,600 consecutive seconds, or the span when shorter) with the most
    requests, as its first second and its per-second counts."""
    if end - start + 1 <= HOUR:
        return start, [series.get(s, 0) for s in range(start, end + 1)]
    best, best_at = -1, start
    window = sum(series.get(s, 0) for s in range(start, start + HOUR))
    for s in range(start, end - HOUR + 2):
        if window > best:
            best, best_at = window, s
        window += series.get(s + HOUR, 0) - series.get(s, 0)
    return best_at, [series.get(s, 0) for s in range(best_at, best_at + HOUR)]


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
