"""The predictive draws of a series (a :class:`sizing.engine.series.Series`, typed ``Any``
here: the series imports this module) at a core count, before the monotone envelope
(:meth:`Series.draws <sizing.engine.series.Series.draws>` applies it): a measured count's
median draws, the law's, a line between two measured counts, a borrowed shape's, or a
floor's (the draws of the count it rests on)."""

from __future__ import annotations

from typing import Any

from sizing.engine.predict import Bootstrap
from sizing.engine.reach import floor_figure

__all__ = ["raw_draws"]


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
    line: tuple[float, ...] | None = None
    if inside:
        a, b = s._neighbours(exact, cores)
        da = boot.point_draws(a.cores)
        # a lower bound has no draws: its value is the least the truth can be
        db = tuple(b.value for _ in da or ()) if b.lower_bound else boot.point_draws(b.cores)
        if da is not None and db is not None:
            t = (cores - a.cores) / (b.cores - a.cores)
            line = tuple(min(cap, x + (y - x) * t) for x, y in zip(da, db, strict=True))
        if b.lower_bound and line is not None and s.fit.usable and boot.params:
            law = boot.curve_draws(cores) or ()
            return tuple(max(min(v, cap), w) for v, w in zip(law, line, strict=False))
    if s.fit.usable and boot.params:
        curve = boot.curve_draws(cores)
        return None if curve is None else tuple(min(v, cap) for v in curve)
    if inside:
        return line
    if s.shape is not None:
        anchor = hi if cores > hi.cores else lo
        ratio = s.shape.ratio(anchor.cores, cores)
        da = boot.point_draws(anchor.cores)
        if ratio is not None and da is not None:
            return tuple(min(cap, x * ratio) for x in da)
    return None
