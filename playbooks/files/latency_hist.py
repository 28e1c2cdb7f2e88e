#!/usr/bin/env python3
"""Bucket the raw latencies oha wrote (``--db-url FILE``) into a 1%-wide histogram (stdlib).

Copied to the clients' tool directory by playbooks/oha.yml; run by the window runner after
each oha window (``python3 latency_hist.py FILE``). Prints one JSON document,
``{"count", "sum_ms", "min_ms", "max_ms", "growth", "buckets": {index: count}}``, with the
bucket of a latency of ``us`` microseconds ``floor(log(us) / log(1.01))`` (0 below 1 us):
the layout of ``sizing.load.latency.Histogram``, so the controller adds the histograms of
several clients and repetitions exactly. Only the newest run in the file is read (oha
appends runs); the file is removed afterwards. ``--keep`` leaves it (tests compare the
merged percentiles with the raw latencies).

oha's ``duration`` column is the latency-corrected one (from the request's scheduled send
time under ``-q ... --latency-correction``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys

GROWTH = 1.01


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    paths = [a for a in argv if a != "--keep"]
    if len(paths) != 1:
        print("usage: latency_hist.py [--keep] OHA_DB", file=sys.stderr)
        return 2
    path = paths[0]
    if not os.path.exists(path):
        print(
            f"latency_hist: {path} does not exist (oha stored no successful request)",
            file=sys.stderr,
        )
        print(
            json.dumps(
                {
                    "count": 0,
                    "sum_ms": 0.0,
                    "min_ms": 0.0,
                    "max_ms": 0.0,
                    "growth": GROWTH,
                    "buckets": {},
                }
            )
        )
        return 0
    con = sqlite3.connect(path)
    try:
        rows = con.execute(
            "SELECT duration FROM oha WHERE run = (SELECT max(run) FROM oha)"
        ).fetchall()
    finally:
        con.close()
    log_g = math.log(GROWTH)
    buckets: dict[int, int] = {}
    total = 0.0
    lo = math.inf
    hi = 0.0
    for (seconds,) in rows:
        us = seconds * 1e6
        i = 0 if us < 1.0 else int(math.floor(math.log(us) / log_g))
        buckets[i] = buckets.get(i, 0) + 1
        total += seconds
        lo = min(lo, seconds)
        hi = max(hi, seconds)
    if not keep:
        os.remove(path)
    print(
        json.dumps(
            {
                "count": len(rows),
                "sum_ms": total * 1e3,
                "min_ms": (lo if rows else 0.0) * 1e3,
                "max_ms": hi * 1e3,
                "growth": GROWTH,
                "buckets": {str(k): v for k, v in sorted(buckets.items())},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
