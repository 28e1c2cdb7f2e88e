"""The virtualization overhead (bare metal against its guest) and the HT gain (HT off
against HT on) of two figures: paired (the median of the per-pair ratios) or unpaired
(from both legs' intervals)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sizing.engine.basis import Basis
from sizing.engine.series import Series
from sizing.intervals import PairedRatio
from sizing.model import OBSERVED, Figure


def overhead_pct(baremetal: Figure, hypervisor: Figure) -> float | None:
    """Virtualization overhead in percent, for a pair both observed from the same source
    and basis group (the caller pairs only within one block) and neither a lower bound."""
    if (
        baremetal.source != hypervisor.source
        or baremetal.source not in OBSERVED
        or baremetal.lower_bound
        or hypervisor.lower_bound
    ):
        return None
    return (baremetal.value - hypervisor.value) / baremetal.value * 100.0


def overhead_interval(baremetal: Figure, hypervisor: Figure) -> tuple[float, float] | None:
    """Bounds of the overhead (%) from the two figures' intervals (conservative:
    the overhead is largest with the fastest bare metal and the slowest guest)."""
    if overhead_pct(baremetal, hypervisor) is None:
        return None
    return overhead_bounds(
        baremetal.ci_low, baremetal.ci_high, hypervisor.ci_low, hypervisor.ci_high
    )


def ends(pct: tuple[float, float | None, float | None]) -> tuple[float, float] | None:
    _, lo, hi = pct
    return None if lo is None or hi is None else (lo, hi)


def ht_gain(
    s: Series, f: Figure, cores: int, block: Sequence[Series], by_id: Mapping[str, Basis]
) -> PairedRatio | None:
    """HT on against HT off of the same platform and profile at ``cores`` (an HT-on
    cell only): paired when the two figures are the legs of one pair, else from both
    figures' intervals; None unless both are observed from one source, exact figures."""
    if s.ht != "on":
        return None
    off = next((b for b in block if b.key == (s.platform, "off", s.profile)), None)
    if off is None or not same_workload(off, s, by_id):
        return None
    got = off.estimate(cores)
    if (
        not isinstance(got, Figure)
        or got.source != f.source
        or got.source not in OBSERVED
        or got.lower_bound
        or f.lower_bound
    ):
        return None
    return leg_ratio(got, f)


def leg_ratio(a: Figure, b: Figure) -> PairedRatio | None:
    """B against A: paired when both figures are the legs of one pair measured in
    alternation (:func:`paired_ratio`), else from both figures' intervals (unpaired)."""
    return paired_ratio(a, b) or PairedRatio.unpaired(
        a.value,
        b.value,
        (a.ci_low, a.ci_high),
        (b.ci_low, b.ci_high),
        min(len(a.reps), len(b.reps)),
    )


def paired_ratio(a: Figure, b: Figure) -> PairedRatio | None:
    """B against A as the median of their per-pair ratios, when both figures are the
    legs of one pair measured in alternation (:mod:`sizing.measure.paired`)."""
    if not a.pair or a.pair != b.pair or a.pair_role not in ("a", ""):
        return None
    ratios = a.pair_c_ratios if b.pair_role == "c" else a.pair_ratios
    return PairedRatio.of_ratios(ratios) if ratios else None


def overhead_bounds(
    b_lo: float | None, b_hi: float | None, h_lo: float | None, h_hi: float | None
) -> tuple[float, float] | None:
    """Overhead bounds (%) from a bare-metal and a guest interval: the lowest pairs the
    bare-metal low end with the guest's high end, the highest the other way round. None
    when an end is missing or the bare-metal interval does not stay above zero."""
    if b_lo is None or b_hi is None or h_lo is None or h_hi is None or b_lo <= 0:
        return None
    return ((1 - h_hi / b_lo) * 100.0, (1 - h_lo / b_hi) * 100.0)


def same_workload(a: Series, b: Series, by_id: Mapping[str, Basis]) -> bool:
    """Whether two series of one profile measured the same workload (figures without a
    known basis: the block's grouping is all there is to go by)."""
    ba, bb = by_id.get(a.basis_id), by_id.get(b.basis_id)
    if ba is None or bb is None:
        return True
    return ba.workload.same_as(bb.workload, a.profile)
