"""The one home of the virtualization overhead, the guest share and the HT gain.

Every comparison of two legs goes through :class:`Legs`, one paired-figure type built
from two stored points (:meth:`Legs.of_points`), two figures of the sizing table
(:meth:`Legs.of_figures`) or a pair's own record (:meth:`Legs.of_record`), and comes out
as a :class:`Comparison`: the guest's share of bare metal (or HT on against HT off), the
overhead ``1 − share`` or the gain ``share − 1`` in percent, with their interval. Paired
legs (measured in alternation, :mod:`sizing.measure.paired`) give the median of the
per-pair ratios and the distribution-free interval of that median; unpaired legs the ratio
of the medians with the interval from both legs' intervals. A guest is a hypervisor's
guest or a container (:data:`GUEST_KINDS`): each is compared with its own host's bare
metal the same way. ``results``, ``run``'s end, ``table``, ``recommend`` and the guide all
read these; so does the joint HT model, whose gain over the other HT mode across the
measured core counts is :func:`ht_gain_of`'s. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sizing.intervals import PairedRatio
from sizing.model import HYPERVISOR_PLATFORMS, OBSERVED, Figure, PairKind, Platform, PointResult
from sizing.records import PairRecord

if TYPE_CHECKING:  # only named here: the table's bases are passed in
    from sizing.engine.basis import Basis


class SeriesView(Protocol):
    """What a comparison reads of a table's series (:class:`sizing.engine.series.Series`,
    which holds an :class:`HtGain` of this module: named here, not imported)."""

    @property
    def platform(self) -> str: ...

    @property
    def ht(self) -> str: ...

    @property
    def profile(self) -> str: ...

    @property
    def basis_id(self) -> str: ...

    @property
    def key(self) -> tuple[str, str, str]: ...

    def estimate(self, cores: int) -> Figure | str: ...


# every platform compared with bare metal for an overhead: a hypervisor's guests, a container
GUEST_KINDS = ("hypervisor", *HYPERVISOR_PLATFORMS, str(Platform.CONTAINER))

Ends = tuple[float | None, float | None]


@dataclass(frozen=True)
class Legs:
    """Two legs of one comparison: A (bare metal, HT off) and B (the guest, HT on), each a
    median with its interval, and the per-pair ratios B / A when they ran in alternation."""

    a: float | None
    b: float | None
    a_ci: Ends
    b_ci: Ends
    n: int  # the fewer repetitions of the two legs (sets each leg interval's coverage)
    ratios: tuple[float, ...] = ()  # paired: each round's B / A

    @classmethod
    def of_points(cls, a: PointResult, b: PointResult) -> Legs:
        """Two stored points; paired when both carry the same ``pair`` record."""
        ra, rb = a.metadata.pair, b.metadata.pair
        ratios = ra.ratios_of(rb) if ra is not None and rb is not None else ()
        return cls(
            a.value,
            b.value,
            (a.ci_low, a.ci_high),
            (b.ci_low, b.ci_high),
            min(a.repetitions, b.repetitions),
            tuple(ratios),
        )

    @classmethod
    def of_figures(cls, a: Figure, b: Figure) -> Legs:
        """Two figures; paired when both are the legs of one pair measured in alternation."""
        ratios: tuple[float, ...] = ()
        if a.pair and a.pair == b.pair and a.pair_role in ("a", ""):
            ratios = tuple(a.pair_c_ratios if b.pair_role == "c" else a.pair_ratios)
        return cls(
            a.value,
            b.value,
            (a.ci_low, a.ci_high),
            (b.ci_low, b.ci_high),
            min(len(a.reps), len(b.reps)),
            ratios,
        )

    @classmethod
    def of_record(cls, rec: PairRecord, kind: PairKind | str) -> Legs:
        """A pair's own per-round ratios (a leg's ``pair`` record): the third leg of three
        (a guest beside its host's HT off and on) holds the overhead's."""
        ratios = rec.c_ratios if kind == PairKind.VIRTUALIZATION and rec.role == "c" else rec.ratios
        return cls(None, None, (None, None), (None, None), len(ratios), tuple(ratios))

    def ratio(self) -> PairedRatio | None:
        """B against A: the median of the per-pair ratios when paired, else the ratio of
        the medians with the interval of both legs' intervals; None without a figure."""
        if self.ratios:
            return PairedRatio.of_ratios(list(self.ratios))
        if not self.a or self.b is None:
            return None
        return PairedRatio.unpaired(self.a, self.b, self.a_ci, self.b_ci, self.n)

    def compare(self, kind: PairKind | str) -> Comparison | None:
        """The comparison these legs give (None without a figure)."""
        r = self.ratio()
        return None if r is None else Comparison(PairKind(kind), r)


@dataclass(frozen=True)
class Comparison:
    """B against A: the share (``ratio``) with its interval, read as an overhead (1 − share,
    virtualization) or a gain (share − 1, HT) in percent."""

    kind: PairKind
    ratio: PairedRatio

    @property
    def share(self) -> float:
        """What B carries of A (a guest's share of bare metal)."""
        return self.ratio.ratio

    @property
    def share_interval(self) -> tuple[float, float] | None:
        r = self.ratio
        return None if r.low is None or r.high is None else (r.low, r.high)

    def percent(self) -> tuple[float, float | None, float | None]:
        """(figure, low, high) in percent: the overhead ``(1 − share)`` with its interval
        flipped, or the gain ``(share − 1)``."""
        r = self.ratio
        if self.kind is PairKind.VIRTUALIZATION:
            lo = None if r.high is None else (1 - r.high) * 100.0
            hi = None if r.low is None else (1 - r.low) * 100.0
            return (1 - r.ratio) * 100.0, lo, hi
        lo = None if r.low is None else (r.low - 1) * 100.0
        hi = None if r.high is None else (r.high - 1) * 100.0
        return (r.ratio - 1) * 100.0, lo, hi

    @property
    def pct(self) -> float:
        return self.percent()[0]

    @property
    def interval(self) -> tuple[float, float] | None:
        """The percent figure's interval (None when an end is missing)."""
        _, lo, hi = self.percent()
        return None if lo is None or hi is None else (lo, hi)

    @property
    def paired(self) -> bool:
        return self.ratio.paired

    @property
    def pairs(self) -> int:
        """Pairs of repetitions (0: unpaired)."""
        return self.ratio.pairs if self.ratio.paired else 0

    def words(self) -> str:
        """What the interval is and covers (:meth:`PairedRatio.words`)."""
        return self.ratio.words()


def point_comparison(a: PointResult, b: PointResult, kind: PairKind | str) -> Comparison | None:
    """B against A for two stored points (:meth:`Legs.of_points`)."""
    return Legs.of_points(a, b).compare(kind)


def record_comparison(rec: PairRecord) -> Comparison | None:
    """A paired leg's pair read from its own record: the overhead for the third leg of
    three and for a virtualization pair, else the pair's kind (the HT gain)."""
    kind = (
        PairKind.VIRTUALIZATION
        if rec.role == "c" or rec.kind == PairKind.VIRTUALIZATION
        else PairKind.HT
    )
    return Legs.of_record(rec, kind).compare(kind)


def observed_pair(a: Figure, b: Figure) -> bool:
    """Whether two figures may be compared: both observed from one source, neither a lower
    bound (the caller pairs only within one block of bases)."""
    return a.source == b.source and a.source in OBSERVED and not a.lower_bound and not b.lower_bound


def figure_overhead(baremetal: Figure, guest: Figure) -> Comparison | None:
    """A guest figure against its bare metal's (:func:`observed_pair`; never a software-
    emulated leg: its loss is emulation's, not a virtualization overhead)."""
    if baremetal.emulated or guest.emulated or not observed_pair(baremetal, guest):
        return None
    return Legs.of_figures(baremetal, guest).compare(PairKind.VIRTUALIZATION)


def guest_overhead(
    s: SeriesView, f: Figure, cores: int, block: Sequence[SeriesView], by_id: Mapping[str, Basis]
) -> Comparison | None:
    """A guest cell's overhead against its block's bare metal of the same HT and profile
    at ``cores``: a hypervisor's guest or a container; None for another platform, another
    workload (an ECDSA guest beside an RSA host), a figure not observed, or a
    software-emulated leg (its loss is emulation's, never a virtualization overhead)."""
    if s.platform not in GUEST_KINDS:
        return None
    bare = next((b for b in block if b.key == ("baremetal", s.ht, s.profile)), None)
    if bare is None or not same_workload(bare, s, by_id):
        return None
    got = bare.estimate(cores)
    return figure_overhead(got, f) if isinstance(got, Figure) else None


def ht_gain(
    s: SeriesView, f: Figure, cores: int, block: Sequence[SeriesView], by_id: Mapping[str, Basis]
) -> Comparison | None:
    """HT on against HT off of the same platform and profile at ``cores`` (an HT-on
    cell only): paired when the two figures are the legs of one pair, else from both
    figures' intervals; None unless both are observed from one source, exact figures."""
    if s.ht != "on":
        return None
    off = next((b for b in block if b.key == (s.platform, "off", s.profile)), None)
    if off is None or not same_workload(off, s, by_id):
        return None
    got = off.estimate(cores)
    if not isinstance(got, Figure) or not observed_pair(got, f):
        return None
    return Legs.of_figures(got, f).compare(PairKind.HT)


def same_workload(a: SeriesView, b: SeriesView, by_id: Mapping[str, Basis]) -> bool:
    """Whether two series of one profile measured the same workload (figures without a
    known basis: the block's grouping is all there is to go by)."""
    ba, bb = by_id.get(a.basis_id), by_id.get(b.basis_id)
    if ba is None or bb is None:
        return True
    return ba.workload.same_as(bb.workload, a.profile)


@dataclass(frozen=True)
class HtGain:
    """This series ÷ its partner's (the other HT mode), measured at ``counts``."""

    ratio: float
    low: float
    high: float
    counts: tuple[int, ...]
    partner_ht: str

    def words(self) -> str:
        pct = (self.ratio - 1) * 100
        span = f"{(self.low - 1) * 100:+.0f} to {(self.high - 1) * 100:+.0f}%"
        n = len(self.counts)
        return (
            f"HT {self.partner_ht}'s prediction × the HT gain measured at "
            f"{n} core count{'s' if n != 1 else ''} ({pct:+.1f}%, {span})"
        )


def ht_gain_of(mine: Sequence[Figure], partner: Sequence[Figure], partner_ht: str) -> HtGain | None:
    """The gain of ``mine`` over ``partner`` at their common exactly measured core counts
    (None without one)."""
    theirs = {f.cores: f.value for f in partner if f.value > 0}
    ratios = sorted(
        (f.cores, f.value / theirs[f.cores]) for f in mine if f.cores in theirs and f.value > 0
    )
    if not ratios:
        return None
    logs = [math.log(r) for _, r in ratios]
    ratio = math.exp(sum(logs) / len(logs))
    return HtGain(
        ratio,
        min(r for _, r in ratios),
        max(r for _, r in ratios),
        tuple(n for n, _ in ratios),
        partner_ht,
    )
