"""What a stored number may be, decided at the edge and on reading.

A figure is a finite number. A rate (a unit per second: requests/s, handshakes/s) is 0 or
lies from :data:`sizing.model.RATE_FLOOR` to :data:`~sizing.model.RATE_CEILING` per
second: a point measured for seconds cannot show one event in 17 minutes, and no server
carries 10^12 a second. A point's value, its interval's ends and its spread are never
negative, and no number reaches above the ceiling. Other samples (a latency in ms, a
gateway's added latency, which may be below zero) must be finite and within ±10^12.

``sizing import`` refuses a recovery record outside these (:func:`record_problems`: the
field named, the file and line by the caller). A point stored outside them before the
check existed (an older import) reads back ``invalid`` with the reason
(:func:`with_ranges`), so no command sizes on it and ``sizing results`` says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sizing.model import RATE_CEILING, RATE_FLOOR, Status
from sizing.store.rows import StoredPoint

__all__ = ["OUT_OF_RANGE", "number_problem", "record_problems", "with_ranges"]

OUT_OF_RANGE = "out-of-range"


def is_rate(unit: str) -> bool:
    """Whether a unit is a rate (per second)."""
    return unit.strip().endswith("/s")


def number_problem(value: Any, *, rate: bool, signed: bool = False) -> str | None:
    """Why ``value`` cannot be stored (None: it can). ``rate``: a unit per second;
    ``signed``: a difference, which may be below zero."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number"
    v = float(value)
    if not math.isfinite(v):
        return f"{v} is not a finite number"
    if v < 0.0 and not signed:
        return f"{v:g} is negative"
    if abs(v) > RATE_CEILING:
        return f"{v:g} is absurd (above {RATE_CEILING:g})"
    if rate and 0.0 < v < RATE_FLOOR:
        return f"{v:g}/s is absurd (a rate below {RATE_FLOOR:g}/s)"
    return None


def record_problems(rec: Mapping[str, Any]) -> list[str]:
    """``field: why`` for every number of a recovery record that cannot be stored."""
    rate = is_rate(str(rec.get("unit", "")))
    out: list[str] = []
    for name in ("value", "ci_low", "ci_high", "spread"):
        v = rec.get(name)
        if v is not None:
            why = number_problem(v, rate=rate and name != "spread")
            if why:
                out.append(f"{name}: {why}")
    for i, s in enumerate(rec.get("samples") or ()):
        if not isinstance(s, list | tuple) or len(s) < 3:
            continue  # its shape is read (and refused) by the record's reader
        unit = str(s[3]) if len(s) > 3 else ""
        why = number_problem(s[2], rate=is_rate(unit), signed=not is_rate(unit))
        if why:
            out.append(f"samples[{i}] ({s[1]}) value: {why}")
    return out


def _problem(p: StoredPoint, values: Sequence[float]) -> str | None:
    """Why a measured point's figure cannot be sized on (None: it can)."""
    r = p.result
    rate = is_rate(r.unit) or not r.unit
    # a latency point's timed samples are latencies (ms), not its rate
    reps_rate = rate and r.metadata.workload.mode != "fixed-rate"
    checks = [(r.value, rate), *((v, reps_rate) for v in values)]
    for v, per_second in checks:
        if v is not None:
            why = number_problem(v, rate=per_second)
            if why:
                return why
    return None


def with_ranges(
    points: Sequence[StoredPoint], values: Mapping[int, Sequence[float]]
) -> list[StoredPoint]:
    """``points`` with every measured one whose value or timed repetition (``values``, by
    point id) is outside the stored range read back ``invalid``, flagged
    :data:`OUT_OF_RANGE` with the reason."""
    out: list[StoredPoint] = []
    for p in points:
        why = None
        if p.result.status is Status.MEASURED:
            why = _problem(p, values.get(p.id, ()))
        if why is None:
            out.append(p)
            continue
        reason = "; ".join(
            filter(None, [p.result.reason, f"stored figure out of range: {why}; not sized on"])
        )
        flags = tuple(dict.fromkeys((*p.result.flags, OUT_OF_RANGE)))
        result = replace(p.result, status=Status.INVALID, reason=reason, flags=flags)
        out.append(replace(p, result=result))
    return out
