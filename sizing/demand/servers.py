"""Which files are one server's (a log and its rotations), and whether two servers'
clocks agree: over their overlap, their per-second traffic should line up unshifted."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from sizing.demand.model import iso
from sizing.demand.persecond import PerSecond, aligned

_ROTATED = re.compile(r"(\.[0-9]+)?(\.gz)?$")
MAX_LAG = 30  # seconds of clock disagreement looked for
WINDOW = 3600  # seconds of the overlap compared (its busiest hour)


def server_of(path: Path) -> str:
    """The server a file belongs to: its directory and its name without the rotation
    suffix (``/srv/a/access.log.2.gz`` → ``/srv/a/access.log``)."""
    return str(path.parent / _ROTATED.sub("", path.name))


def _corr(a: list[int], b: list[int]) -> float:
    n = len(a)
    if n < 10:
        return 0.0
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    va = sum((x - ma) ** 2 for x in a)
    vb = sum((y - mb) ** 2 for y in b)
    return cov / math.sqrt(va * vb) if va and vb else 0.0


def _span(series: PerSecond) -> tuple[int, int]:
    return series.first(), series.last()


def clock_notes(servers: dict[str, PerSecond]) -> list[str]:
    """One line per pair of servers whose logs do not overlap in time, or whose traffic
    lines up best with one shifted by a few seconds (their clocks disagree)."""
    notes = []
    names = [n for n in sorted(servers) if servers[n]]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            note = _pair(a, servers[a], b, servers[b])
            if note:
                notes.append(note)
    return notes


def _pair(a: str, sa: PerSecond, b: str, sb: PerSecond) -> str:
    (a0, a1), (b0, b1) = _span(sa), _span(sb)
    lo, hi = max(a0, b0), min(a1, b1)
    if lo > hi:
        return (
            f"{a} ({iso(a0)} to {iso(a1)}) and {b} ({iso(b0)} to {iso(b1)}) do not overlap:"
            " their sum per second is not one fleet's demand"
        )
    if hi - lo < 4 * MAX_LAG:
        return ""
    mid, top = lo, 0  # the busiest second of the two summed over the overlap
    for base, (xa, xb) in aligned([sa, sb], lo, hi):
        both = xa + xb
        if int(both.max()) > top:
            top, mid = int(both.max()), base + int(np.argmax(both))
    w0 = max(lo + MAX_LAG, mid - WINDOW // 2)
    w1 = min(hi - MAX_LAG, w0 + WINDOW)
    if w1 <= w0:
        return ""
    xs = sa.dense(w0, w1 - 1).tolist()
    ys = sb.dense(w0 - MAX_LAG, w1 - 1 + MAX_LAG).tolist()
    scores = {
        lag: _corr(xs, ys[MAX_LAG + lag : MAX_LAG + lag + w1 - w0])
        for lag in range(-MAX_LAG, MAX_LAG + 1)
    }
    best = max(scores, key=lambda k: (scores[k], -abs(k)))
    if best != 0 and scores[best] > 0.5 and scores[best] - scores[0] > 0.2:
        ahead = b if best > 0 else a
        return (
            f"the clocks of {a} and {b} seem to disagree by about {abs(best)} s ({ahead}'s"
            f" ahead): over their overlap ({iso(w0)} to {iso(w1)}) their per-second traffic"
            f" lines up best shifted so (correlation {scores[best]:.2f}, unshifted"
            f" {scores[0]:.2f}); the demand sums them as logged"
        )
    return ""
