"""A run's comparisons as data for the terminal, ``--json`` and ``--csv``: each overhead
(bare metal against a guest or container of that host) and HT gain (HT off against HT on)
its points give, as :class:`PairView` values the renderers only format. The figures are
the engine's (:mod:`sizing.engine.overhead`); the pairing is :mod:`sizing.engine.compare`'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.compare import OverheadPair, ht_pairs, paired
from sizing.engine.overhead import Comparison, record_comparison
from sizing.model import PairKind, PointResult

__all__ = ["PairView", "pair_summary", "pair_views"]


@dataclass(frozen=True)
class PairView:
    """One comparison of two legs: its figure in percent (an overhead or an HT gain) with
    its interval, whether its legs were paired, and what to say beside it."""

    kind: str  # virtualization | ht
    a: PointResult  # bare metal, HT off
    b: PointResult  # the guest or container, HT on
    pct: float | None  # None: no figure (a leg without a positive median)
    low: float | None
    high: float | None
    paired: bool
    pairs: int  # pairs of repetitions; unpaired: the fewer repetitions of the two legs
    coverage: float | None  # paired: the interval's coverage
    leg_coverage: float | None  # unpaired: what each leg's own interval covers
    interval: str  # what the interval is and covers, in words
    failed: str = ""  # the leg that failed its guards
    runs: tuple[int, int] | None = None  # (bare metal's run, the guest's) when they differ
    note: str = ""  # what else differs between legs of different runs

    @property
    def figure(self) -> str:
        return "overhead" if self.kind == PairKind.VIRTUALIZATION else "ht_gain"

    @property
    def container(self) -> bool:
        return self.b.key.platform == "container"


def _view(
    kind: PairKind, a: PointResult, b: PointResult, c: Comparison | None, **more: Any
) -> PairView:
    if c is None:
        return PairView(str(kind), a, b, None, None, None, False, 0, None, None, "", **more)
    pct, lo, hi = c.percent()
    r = c.ratio
    return PairView(
        str(kind), a, b, pct, lo, hi, r.paired, r.pairs, r.coverage, r.leg_coverage, r.words(),
        **more,
    )  # fmt: skip


def _overhead(p: OverheadPair) -> PairView:
    more = {"failed": p.failed, "runs": p.runs, "note": p.note}
    return _view(PairKind.VIRTUALIZATION, p.baremetal, p.hypervisor, p.comparison, **more)


def pair_views(
    points: Sequence[PointResult], across: Sequence[OverheadPair] = ()
) -> list[PairView]:
    """Every overhead (a guest or container beside its own host's bare metal, then
    ``across``: beside its host's bare metal of another run) and every HT gain the points
    give, paired or unpaired, with the leg that failed its guards when one did."""
    return [
        *(_overhead(p) for p in (*paired(points), *across)),
        *(_view(PairKind.HT, h.off, h.on, h.comparison, failed=h.failed) for h in ht_pairs(points)),
    ]


def pair_summary(r: PointResult) -> dict[str, Any] | None:
    """A paired leg's pair: its kind, this leg's role (``a`` or ``b``), the other leg,
    the order the windows ran in, and the pair's figure (overhead or HT gain, in percent)
    with the interval of the median of the per-pair ratios; None for an unpaired point."""
    rec = r.metadata.pair
    if rec is None or not rec.ratios:
        return None
    c = record_comparison(rec)
    if c is None:
        return None
    # the third leg of three (a guest beside its host's HT off and on) is the overhead's
    kind = str(PairKind.VIRTUALIZATION) if rec.role == "c" else rec.kind
    value, lo, hi = c.percent()
    partner = rec.legs.get("b" if rec.role == "a" else "a")
    return {
        "kind": kind,
        "role": rec.role,
        "partner": partner.point if partner else None,
        "order": rec.order,
        "figure": "overhead" if c.kind is PairKind.VIRTUALIZATION else "ht_gain",
        "pct": value,
        "low_pct": lo,
        "high_pct": hi,
        "pairs": c.ratio.pairs,
        "coverage": c.ratio.coverage,
        "interval": c.words(),
    }
