"""What a demand is sized for at ``--peak``, and its per-second chart as a sparkline
(shared by the terminal report and the guide's "Your traffic" chapter)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sizing.demand.model import TrafficDemand

BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[int], width: int) -> tuple[str, int]:
    """The values in at most ``width`` columns (each the max of its seconds) and the
    seconds per column."""
    if not values:
        return "", 1
    per = max(1, math.ceil(len(values) / width))
    cols = [max(values[i : i + per]) for i in range(0, len(values), per)]
    top = max(cols) or 1
    line = "".join(BLOCKS[math.ceil(v / top * (len(BLOCKS) - 1))] for v in cols)
    return line, per


PEAK_WORDS = {"max": "the busiest second", "p99.9": "the p99.9 second", "p99": "the p99 second"}


def sized_figures(d: TrafficDemand, peak: str) -> tuple[float, float | None]:
    """RPS and full handshakes/s at ``peak`` (each series' own; None without TLS)."""
    hs = d.full_handshakes
    tps = hs.at(peak) if hs is not None and hs.at(peak) > 0 else None
    return d.requests.at(peak), tps


def bars(values: Sequence[int], width: int, height: int = 8) -> tuple[list[str], int]:
    """The values as a bar chart ``height`` lines high, at most ``width`` columns (each
    the max of its seconds; a short span stretched), top line first; and the columns per
    second (negative: seconds per column)."""
    line, per = sparkline(values, width)
    cols = [max(values[i : i + per]) for i in range(0, len(values), per)]
    wide = max(1, width // max(1, len(cols)))
    top = max(cols) or 1
    eighths = [round(v / top * height * 8) for v in cols]
    rows = []
    for level in range(height - 1, -1, -1):
        row = "".join(BLOCKS[min(8, max(0, e - level * 8))] * wide for e in eighths)
        rows.append(row.rstrip() if row.strip() else row[:1])
    return rows, (wide if per == 1 else -per)
