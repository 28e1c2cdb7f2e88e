"""How far a series reaches beyond its measured core counts, by one rule on every basis.

**The floor.** A server of the same CPU with more cores than were ever measured carries at
least what the largest measured count carries (it can leave the extra cores idle): beyond
the largest exact count, and unless extrapolation is asked for, the figure is a *floor*
(``bound == "lower"``, kind ``floor``), labelled "at least (not measured beyond N
cores)", sized on the low end of the figure it rests on. A lower bound measured on the
way (a client-bound point above the last exact count) is a floor too, never a reason to
refuse: the floor is the larger of the two. The truth at N cores is at least the truth
at the floor's count, so the floor's draws are that count's draws (a fleet's stated
confidence on a floor understates it, never overstates it).

**Monotone in cores.** More cores of one CPU never carry less, whatever made the figure (a
retrograde fit beyond the data, an interpolation through a noisy dip, a floor beside an
extrapolation): the figure at N is raised, at each end of its interval and draw by draw,
to the most any smaller count of the same series carries (:func:`envelope`).

:func:`measure_hint` is the run that would replace a floor with a figure, as typed.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import replace

from sizing.model import OBSERVED, Figure, FigureKind

__all__ = [
    "FLOOR",
    "envelope",
    "envelope_draws",
    "floor_figure",
    "lower_counts",
    "measure_hint",
    "raised_to",
]

FLOOR = "floor"  # a figure's flag: "at least" what a smaller count carries
MONOTONE = "monotone"  # a figure's flag: raised to what a smaller count carries
# the envelope looks at every smaller count up to this, then at a geometric grid
DENSE_UP_TO = 128


def floor_figure(
    observed: Sequence[Figure], exact: Sequence[Figure], cores: int, name: str
) -> Figure:
    """The floor at ``cores`` beyond the largest exact count of ``exact`` (module doc):
    the larger (on its low end) of the top exact figure and any lower bound measured
    between it and ``cores``. With no exact figure at all (every point client-bound), the
    largest lower bound measured at or below ``cores``."""
    top = [max(exact, key=lambda f: f.cores)] if exact else []
    above = top[0].cores if top else 0
    bounds = [
        f
        for f in observed
        if f.lower_bound and "erratic" not in f.flags and above < f.cores <= cores
    ]
    anchor = max([*top, *bounds], key=lambda f: (f.conservative, f.cores))
    measured_top = max(f.cores for f in [*top, *bounds])
    what = "lower bound" if anchor.lower_bound else "figure"
    made = ""
    if anchor.source in (FigureKind.TRANSLATED, FigureKind.ASSUMED):  # says what it rests on
        made = f"; on figures {anchor.origin}"
    return replace(
        anchor,
        cores=cores,
        source=FigureKind.FLOOR,
        origin=(
            f"at least (not measured beyond {measured_top} core{'s' if measured_top > 1 else ''}):"
            f" the {anchor.cores}-core "
            f"{what} of {name}; more cores of the same CPU carry at least as much{made}"
        ),
        ci_low=anchor.conservative,
        ci_high=None,
        bound="lower",
        flags=tuple(dict.fromkeys((*anchor.flags, FLOOR))),
        reps=(),
        # a measured lower bound's interval says as much of the truth's floor as an exact
        # figure's low end does: the server carried at least what it served
        coverage=anchor.coverage,
        interval=(
            f"its low end is the {anchor.cores}-core {what}'s ({anchor.interval})"
            if anchor.interval
            else ""
        ),
    )


def lower_counts(cores: int) -> list[int]:
    """The smaller counts the envelope at ``cores`` looks at: every one up to
    :data:`DENSE_UP_TO`, then a geometric grid (about 5% apart) below ``cores``."""
    dense = list(range(1, min(cores, DENSE_UP_TO + 1)))
    out = set(dense)
    m = float(cores)
    while m > DENSE_UP_TO:
        m /= 1.05
        out.add(int(m))
    return sorted(n for n in out if 1 <= n < cores)


def _ends(f: Figure) -> tuple[float, float, float]:
    """(low, value, high) of a figure; a lower bound's (a floor's) high end is unbounded."""
    high = math.inf if f.lower_bound else (f.ci_high if f.ci_high is not None else f.value)
    return f.conservative, f.value, high


def envelope(got: Figure, smaller: Sequence[Figure]) -> Figure:
    """``got`` raised, at each end, to the most any of the ``smaller`` figures (the same
    series at fewer cores) carries; labelled when raised. A figure observed at its own
    count (measured, published) is never changed; a lower bound's value is raised to
    what the smaller counts certainly carry (their low ends), not to their estimates."""
    if got.source in OBSERVED:
        return got
    low, value, high = _ends(got)
    best_low, best_value, best_high = low, value, high
    raised_by: Figure | None = None
    for f in smaller:
        lo, v, hi = _ends(f)
        v = lo if (got.lower_bound or f.lower_bound) else v
        hi = lo if f.lower_bound else hi  # a lower bound claims no high end
        if v > best_value or lo > best_low:
            if raised_by is None or v > best_value:
                raised_by = f
        best_low, best_value, best_high = max(best_low, lo), max(best_value, v), max(best_high, hi)
    if (best_low, best_value, best_high) == (low, value, high):
        return got
    origin = got.origin
    if raised_by is not None:
        origin = (
            f"{origin}; raised to what {raised_by.cores} cores carry "
            "(more cores of the same CPU never carry less)"
        ).lstrip("; ")
    return replace(
        got,
        value=best_value,
        ci_low=best_low if (got.ci_low is not None or best_low > low) else None,
        ci_high=None
        if math.isinf(best_high) or got.ci_high is None and best_high == high
        else best_high,
        sized=None if got.sized is None else best_low,
        origin=origin,
        flags=tuple(dict.fromkeys((*got.flags, MONOTONE))) if raised_by is not None else got.flags,
    )


def envelope_draws(
    got: tuple[float, ...] | None, smaller: Sequence[tuple[float, ...] | None]
) -> tuple[float, ...] | None:
    """``got``'s draws raised, draw by draw, to the most the smaller counts' draws carry
    (only draws of the same length: the same bootstrap)."""
    if got is None:
        return None
    out = list(got)
    for d in smaller:
        if d is None or len(d) != len(out):
            continue
        out = [max(a, b) for a, b in zip(out, d, strict=True)]
    return tuple(out)


def measure_hint(
    cores: int,
    sockets: int,
    inventory: str = "",
    host: tuple[int, int] | None = None,
    *,
    threads: int | None = None,
    own_client: bool = False,
) -> tuple[str, str]:
    """The run that would size a server of ``cores`` cores on ``sockets`` sockets on its
    own figures, as typed: one socket's count, then both (``sizing run -i lab.yml --cores
    16,32``), and a note. ``host`` (sockets, cores per socket) of the measured host caps
    the counts at what it can measure, and the note says so: a host that is its own load
    generator (``own_client``) keeps one core for it, and one without SMT (``threads`` 1)
    is measured with hyper-threading off. When the host can measure none of the counts,
    the note says what to add instead of a command that would be refused."""
    per = max(1, cores // max(1, sockets))
    counts = [per, cores] if sockets > 1 else [cores]
    note = ""
    ht = "off" if threads == 1 else "both"
    inv = f"-i {shlex.quote(inventory)} " if inventory else "-i INVENTORY "
    if host is not None:
        h_sockets, h_per = host
        room = h_sockets * h_per - (1 if own_client else 0)
        if room < 1:
            return (
                f"sizing run {inv}--cores {cores} --ht {ht}",
                " (the lab's host has no core left beside its load generator: add a client"
                " host to the inventory first, inventories/lab.yml shows how)",
            )
        capped = sorted({min(per, h_per, room), min(cores, room)})
        if capped != sorted(set(counts)):
            keeps = " and keeps one for its load generator" if own_client else ""
            note = (
                f" (the lab's host has {h_sockets} × {h_per} cores{keeps}: the nearest it"
                " can measure; beyond it the server stays on a floor; a client host in the"
                " inventory frees the last core)"
                if own_client
                else f" (the lab's host has {h_sockets} × {h_per} cores: the nearest it can "
                "measure; beyond it the server stays on a floor)"
            )
        counts = capped
    joined = ",".join(str(n) for n in sorted(set(counts)))
    return f"sizing run {inv}--cores {joined} --ht {ht}", note


def raised_to(got: Figure | str, bound: Figure) -> Figure | str:
    """``got`` raised to ``bound``'s low end where it says less (a lower bound measured at
    the same count); a refusal stays one, and with nothing else the bound is the figure."""
    if isinstance(got, str):
        return bound
    least = bound.conservative
    if got.conservative >= least:
        return got
    return replace(
        got,
        value=max(got.value, least),
        ci_low=least,
        ci_high=None if got.ci_high is None else max(got.ci_high, least),
        sized=None if got.sized is None else max(got.sized, least),
        flags=tuple(dict.fromkeys((*got.flags, "client-bound"))),
        origin=f"{got.origin}; raised to the {bound.cores}-core lower bound ({bound.origin})",
    )
