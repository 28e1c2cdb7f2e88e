"""The drift flag of a run's points, decided where a run's points are known: on reading.

A trend across one point's repetitions is only worth a flag when it stands out among the
run's other points (:mod:`sizing.trend`: Mann–Kendall per point, Benjamini–Hochberg over
the run). A point alone cannot know that when it is measured, so the store decides it
every time it reads a run back, from the stored repetitions: every reader (``results``,
``--compare``, the guide, the engine's sources, the end of ``run``) sees the same flag and
the same reason, and runs stored before this rule (flagged per point at p < 0.05, with a
sentence in their reason) read back under it too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from sizing.model import Sample, Status
from sizing.store.rows import StoredPoint
from sizing.trend import run_drift

__all__ = ["DRIFT", "timed_values", "with_run_drift"]

DRIFT = "drift"

# the sentence a point's reason carried when drift was decided per point at measurement
_OLD_WHY = re.compile(
    r"(; )?the repetitions (rise|fall) in order \([^)]*\): the host changed under the run"
)
_NEW_WHY = re.compile(r"(; )?drift: values [^;]*")


def timed_values(samples: Sequence[tuple[int, Sample]]) -> list[float]:
    """The timed repetitions' aggregate figures of a point, in order (not the warm-up,
    not the per-client samples, not a sweep's windows at their offered rates).
    :meth:`sizing.store.Store.points` reads the same values in SQL."""
    return [
        s.value
        for rep, s in samples
        if rep >= 1
        and not s.metric.endswith(".client")
        and not s.metadata.warmup
        # an open-loop sweep's windows are different rates, not repetitions of one
        and s.metadata.rate is None
    ]


def _without_drift(reason: str) -> str:
    """A stored reason without a drift sentence (either rule's)."""
    out = _NEW_WHY.sub("", _OLD_WHY.sub("", reason))
    return out.removeprefix("; ")


def with_run_drift(
    points: Sequence[StoredPoint], values: Mapping[int, Sequence[float]]
) -> list[StoredPoint]:
    """``points`` with the ``drift`` flag and its reason decided per run (``values``: each
    point's timed repetitions by point id); every stored drift flag is replaced."""
    runs: dict[int, dict[int, Sequence[float]]] = defaultdict(dict)
    for p in points:
        if p.result.status in (Status.MEASURED, Status.INVALID) and p.id in values:
            runs[p.run_id][p.id] = values[p.id]
    drifting: dict[int, str] = {}
    for series in runs.values():
        drifting.update(run_drift(series))
    out: list[StoredPoint] = []
    for p in points:
        r = p.result
        flags = tuple(f for f in r.flags if f != DRIFT)
        reason = _without_drift(r.reason)
        why = drifting.get(p.id)
        if why is not None:
            flags = (*flags, DRIFT)
            reason = f"{reason}; {why}" if reason else why
        if flags != r.flags or reason != r.reason:
            p = replace(p, result=replace(r, flags=flags, reason=reason))
        out.append(p)
    return out
