"""The predictive draws of a series (a :class:`sizing.engine.series.Series`, typed ``Any``
here: the series imports this module) at a core count, before the monotone envelope
(:meth:`Series.draws <sizing.engine.series.Series.draws>` applies it): a measured count's
median draws, the law's, a line between two measured counts, a borrowed shape's, or a
floor's (the draws of the count it rests on); and the draws after the envelope
(:func:`enveloped_draws`)."""

from __future__ import annotations

import math
from typing import Any

from sizing.engine.predict import Bootstrap
from sizing.engine.reach import DENSE_UP_TO, envelope_draws, floor_figure, lower_counts

__all__ = ["enveloped_draws", "raw_draws"]


def raw_draws(s: Any, cores: int) -> tuple[float, ...] | None:
    """The bootstrap draws of this series' capacity at ``cores`` (None: no
    repetitions to draw from): a measured count's median, the law's X(N), a line
    between two measured counts' medians, or the anchor's median times a borrowed
    shape; each held to the physical ceilings, and a law's draw to its own linear bound
    (:mod:`sizing.engine.predict`)."""
    boot: Bootstrap | None = s.boot
    if boot is None or boot.empty:
        return None
    cap = s.limit(cores)
    got = boot.point_draws(cores)
    if got is not None:
        return got
    exact = sorted(s.exact, key=lambda f: f.cores)
    if not exact:
        return None
    lo, hi = exact[0], exact[-1]
    inside = lo.cores <= cores <= hi.cores or s._upper_bound_above(cores) is not None
    if not inside and cores > hi.cores and not s.allow_extrapolation:
        # a floor's draws are those of the count it rests on (none on a lower bound)
        floor = floor_figure(s.observed, exact, cores, s.name)
        return None if floor.ci_low != hi.conservative else boot.point_draws(hi.cores)
    law = s.fit.usable and bool(boot.params)
    if inside:
        a, b = s._neighbours(exact, cores)
        if b.lower_bound or not law:  # the line is used: made only then
            line = _line(boot, a, b, cores, cap)
            if not law:
                return line
            if line is not None:
                under = boot.curve_draws(cores) or ()
                return tuple(max(min(v, cap), w) for v, w in zip(under, line, strict=False))
    if law:
        curve = boot.curve_draws(cores)
        if curve is None or cap == math.inf:  # min(v, inf) is v: the curve's own draws
            return curve
        return tuple(min(v, cap) for v in curve)
    if s.shape is not None:
        anchor = hi if cores > hi.cores else lo
        ratio = s.shape.ratio(anchor.cores, cores)
        da = boot.point_draws(anchor.cores)
        if ratio is not None and da is not None:
            return tuple(min(cap, x * ratio) for x in da)
    return None


def _line(boot: Bootstrap, a: Any, b: Any, cores: int, cap: float) -> tuple[float, ...] | None:
    """The draws on the straight line between the counts ``a`` and ``b`` (figures), each
    held to ``cap``; None when either end has no draws."""
    da = boot.point_draws(a.cores)
    # a lower bound has no draws: its value is the least the truth can be
    db = tuple(b.value for _ in da or ()) if b.lower_bound else boot.point_draws(b.cores)
    if da is None or db is None:
        return None
    t = (cores - a.cores) / (b.cores - a.cores)
    return tuple(min(cap, x + (y - x) * t) for x, y in zip(da, db, strict=True))


def enveloped_draws(s: Any, cores: int) -> tuple[float, ...] | None:
    """The series' draws at ``cores``, each raised to the most the same draw carries at
    a smaller count (:func:`~sizing.engine.reach.envelope_draws` over
    :func:`~sizing.engine.reach.lower_counts`)."""
    got: tuple[float, ...] | None = s._draws_at(cores)
    if got is None:
        return None
    if cores <= DENSE_UP_TO + 1:  # every smaller count: their running most, kept
        return envelope_draws(got, list(_most_below(s, cores).values()))
    return envelope_draws(got, [s._draws_at(m) for m in lower_counts(cores)])


def _most_below(s: Any, cores: int) -> dict[int, tuple[float, ...]]:
    """Draw by draw, the most that the counts below ``cores`` carry (by the draws'
    length, as :func:`~sizing.engine.reach.envelope_draws` pairs them): kept in the
    series' memo per count, so the envelope at every count of a table costs one step, not
    a pass over each smaller count."""
    memo: dict[Any, Any] = s._memo
    key = ("below", cores)
    if key not in memo:
        got: dict[int, tuple[float, ...]] = {}
        if cores > 1:
            got = dict(_most_below(s, cores - 1))
            new: tuple[float, ...] | None = s._draws_at(cores - 1)
            if new is not None:
                prev = got.get(len(new))
                if prev is not None:
                    new = tuple(max(a, b) for a, b in zip(prev, new, strict=True))
                got[len(new)] = new
        memo[key] = got
    kept: dict[int, tuple[float, ...]] = memo[key]
    return kept
