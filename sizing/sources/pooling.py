"""Several hosts or runs of one basis: pooled when their figures agree within their
intervals, sized on the lowest (and said) when they do not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sizing.ceilings import Bound
from sizing.intervals import interval_words, median, median_coverage, median_interval

if TYPE_CHECKING:
    from sizing.engine.basis import Basis
    from sizing.model import Figure


def agree(a: Figure, b: Figure) -> bool:
    """Whether two figures of one configuration agree: their intervals overlap (a figure
    without an interval is its value)."""
    lo_a, hi_a = (a.ci_low, a.ci_high) if a.ci_low is not None else (a.value, a.value)
    lo_b, hi_b = (b.ci_low, b.ci_high) if b.ci_low is not None else (b.value, b.value)
    assert lo_a is not None and hi_a is not None and lo_b is not None and hi_b is not None
    return lo_a <= hi_b and lo_b <= hi_a


def combine(figs: Sequence[Figure], what: str) -> Figure:
    """One figure from several measurements of one configuration (runs of one host, or
    hosts of one basis identity): never the newest alone.

    They **agree** (every pair of intervals overlaps): pooled, the median of all their
    repetitions, with the interval of that median widened to take in every measurement's
    own median (the spread between runs or hosts adds to the repetitions' own), origin
    "pooled ...". They **disagree**: the conservative (lowest) one is sized, flagged
    ``disagree``, and its origin names the others and their figures."""
    if len(figs) == 1:
        return figs[0]
    if all(agree(a, b) for i, a in enumerate(figs) for b in figs[i + 1 :]):
        reps = tuple(v for f in figs for v in (f.reps or (f.value,)))
        n = len(reps)
        value = median(reps)
        ci = median_interval(reps) if n >= 2 else None
        medians = [f.value for f in figs]
        low = min([*(ci or (value, value))[:1], *medians])
        high = max([*(ci or (value, value))[1:], *medians])
        flags = tuple(dict.fromkeys(g for f in figs for g in f.flags))
        origins = "; ".join(f.origin for f in figs)
        return replace(
            figs[-1],
            value=value,
            ci_low=low,
            ci_high=high,
            reps=reps,
            flags=flags,
            coverage=median_coverage(n) if n >= 2 else None,
            interval=f"{interval_words(n)}, pooled over {len(figs)} {what}s and widened to "
            f"take in each {what}'s median",
            origin=f"pooled {len(figs)} {what}s that agree ({origins})",
        )
    lowest = min(figs, key=lambda f: f.value)
    others = ", ".join(f"{f.origin}: {f.value:,.0f}" for f in figs if f is not lowest)
    return replace(
        lowest,
        flags=tuple(dict.fromkeys((*lowest.flags, "disagree"))),
        origin=f"{lowest.origin}; {what}s disagree beyond their intervals ({others}): sized on "
        "the lowest",
    )


def _identity(b: Basis) -> tuple[Any, ...]:
    """What makes two hosts' figures one basis: hardware, platform, workload, software,
    and whether they were emulated (the host's name is not part of it)."""
    return (b.platform, b.hardware, b.workload, b.software, "emulated" in b.flags)


def _lowest_bounds(bounds: Sequence[Bound]) -> tuple[Bound, ...]:
    """Per series and kind, the lowest of several hosts' ceilings (the pool's bound)."""
    low: dict[tuple[str, str, str], Bound] = {}
    for b in bounds:
        k = (b.profile, b.ht, b.kind)
        if k not in low or (b.at(1) or 0.0) < (low[k].at(1) or 0.0):
            low[k] = b
    return tuple(low[k] for k in sorted(low))


def pool_hosts(bases: Sequence[Basis]) -> list[Basis]:
    """Bases of one identity measured on several hosts (:func:`_identity`): when their
    figures agree at every configuration both measured, one pooled basis
    ``host-a+host-b/<platform>/<workload>`` (:func:`combine` per configuration) is added and
    the single-host bases point to it (:attr:`Basis.pooled_into`: the default choice takes
    the pool); when they disagree, each says with whom and where
    (:attr:`Basis.disagrees`), and the default choice sizes on the conservative one."""
    groups: dict[tuple[Any, ...], list[Basis]] = {}
    for b in bases:
        groups.setdefault(_identity(b), []).append(b)
    out: list[Basis] = []
    for members in groups.values():
        if len(members) < 2:
            out.extend(members)
            continue
        slots: dict[tuple[str, int, str], list[Figure]] = {}
        for b in members:
            for f in b.figures:
                slots.setdefault((f.profile, f.cores, f.ht), []).append(f)
        apart = []
        for (profile, cores, ht), figs in sorted(slots.items()):
            for i, a in enumerate(figs):
                for c in figs[i + 1 :]:
                    if not agree(a, c):
                        apart.append(
                            f"{profile.upper()} at {cores} core{'s' if cores != 1 else ''} HT "
                            f"{ht}: {a.basis} {a.value:,.0f} "
                            f"vs {c.basis} {c.value:,.0f}, intervals apart"
                        )
        if apart:
            for b in members:
                mine = tuple(x for x in apart if b.id in x)
                out.append(replace(b, disagrees=mine))
            continue
        hosts = tuple(dict.fromkeys(h for b in members for h in b.hosts))
        first = members[0]
        slug = first.id.split("/", 2)[2]
        pool_id = f"{'+'.join(hosts)}/{first.platform}/{slug}"
        figures = tuple(
            replace(combine(figs, "host"), basis=pool_id) for _, figs in sorted(slots.items())
        )
        pooled = replace(
            first,
            id=pool_id,
            hosts=hosts,
            runs=tuple(sorted({r for b in members for r in b.runs})),
            figures=figures,
            physical_host="+".join(dict.fromkeys(b.physical_host for b in members)),
            bounds=_lowest_bounds([x for b in members for x in b.bounds]),
        )
        out.append(pooled)
        out.extend(replace(b, pooled_into=pool_id) for b in members)
    return out
