"""Paired legs: two points of one machine measured in alternation, compared per repetition.

The headline comparisons of a sizing guide are ratios of two points of the *same machine*:
the virtualization overhead (a guest against the bare metal of its own hypervisor host)
and the hyper-threading gain (HT on against HT off, on the same cores). Measured one after
the other, drift on the host (heat, a neighbour, a background job) lands on one leg only
and the ratio absorbs it. A :class:`Pair` is measured interleaved instead (see
:mod:`sizing.measure.paired`): both legs are provisioned, then their repetitions alternate
in the order :func:`leg_order` gives, and the figure is the median of the per-repetition
ratios with the distribution-free interval of that median.

:func:`find_pairs` forms the pairs of a plan and says, for every leg that could have had a
partner and has none, why (:class:`PairNote`): an ESXi host is not a Linux nginx host, a
host without SMT has no HT-on leg, a method that does not interleave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sizing.inventory import Inventory
from sizing.model import Ht, PairKind, Platform, PointKey
from sizing.plan.points import PlannedPoint

__all__ = ["Pair", "PairKind", "PairNote", "find_pairs", "leg_order", "pairable"]


@dataclass(frozen=True)
class Pair:
    """Two legs measured in alternation: ``b`` is compared with ``a``. With ``c``, three: a
    bare-metal server's HT off (``a``) and HT on (``b``) and the HT-off guest on the same
    host CPUs (``c``), so that the HT gain (b / a) and the overhead (c / a) are both paired
    (``kind`` is then :attr:`PairKind.HT`, the kind of b against a)."""

    kind: PairKind
    a: PlannedPoint
    b: PlannedPoint
    c: PlannedPoint | None = None

    @property
    def legs(self) -> tuple[PlannedPoint, ...]:
        """The legs in role order: a, b (and c)."""
        return (self.a, self.b) if self.c is None else (self.a, self.b, self.c)

    @property
    def roles(self) -> tuple[str, ...]:
        """The legs' roles, in the order of :attr:`legs`."""
        return ("a", "b", "c")[: len(self.legs)]

    @property
    def id(self) -> str:
        """The pair's name, stored with every leg: ``A label | B label`` (``| C label``)."""
        return " | ".join(leg.key.label() for leg in self.legs)

    def label(self) -> str:
        k = self.a.key
        if self.c is not None:
            return (
                f"{k.host} {k.platform} {k.cores}c {k.profile}: HT off / HT on / "
                f"{self.c.key.host} {self.c.server.platform.leg_word}"
            )
        if self.kind is PairKind.VIRTUALIZATION:
            return (
                f"{k.cores}c ht={k.ht} {k.profile}: {self.a.key.host} bare metal / "
                f"{self.b.key.host} {self.b.server.platform.leg_word}"
            )
        return f"{k.host} {k.platform} {k.cores}c {k.profile}: HT off / HT on"


@dataclass(frozen=True)
class PairNote:
    """A leg that is measured unpaired, and why."""

    point: str  # a point label, or a server name for a note about all its points
    reason: str


def pairable(point: PlannedPoint) -> str:
    """Why the point's method cannot interleave ("" when it can): the closed-loop method
    runs one repetition per window; the latency curve and the gateway checks do not."""
    if point.profile.mode == "fixed-rate":
        return "latency curves are not interleaved (each is a climb over offered rates)"
    if point.profile.is_gateway:
        return "gateway profiles are not interleaved (their checks run before the load)"
    return ""


def leg_order(pairs_done: int, legs: int = 2) -> tuple[str, ...]:
    """The order of the legs in repetition ``pairs_done + 1``: A B, then B A, then A B ...

    Alternating the first leg (A B B A A B ...) cancels a linear trend over the pairs in
    every two of them; each leg still runs right after the other, so drift between the
    two windows of one pair is one window long. Three legs (``legs=3``) go A B C, then
    C B A: B runs one window after A, then one before it, and C two after, then two
    before, so a linear trend cancels in both ratios (b / a and c / a) every two rounds."""
    roles = ("a", "b", "c")[:legs]
    return roles if pairs_done % 2 == 0 else roles[::-1]


def _same_machine(inventory: Inventory, bare: str, phys: str) -> bool:
    """A bare-metal server is the guest's hypervisor host: by name, or by address (an
    inventory may name the host once as hypervisor and once as bare-metal server)."""
    if bare == phys:
        return True
    a, b = inventory.hosts.get(bare), inventory.hosts.get(phys)
    return a is not None and b is not None and a.address == b.address


def _slot(p: PlannedPoint) -> tuple[int, str, str]:
    return (p.key.cores, p.key.ht, p.key.profile)


VSPHERE_UNPAIRED = (
    "vSphere guests are measured unpaired: their ESXi host is not a Linux nginx host, so its "
    "bare metal cannot be measured between the guest's repetitions"
)


def find_pairs(
    plan: Sequence[PlannedPoint],
    inventory: Inventory,
    placement: Mapping[str, str],
    done: frozenset[PointKey] | set[PointKey] = frozenset(),
    *,
    unpaired: bool = False,
) -> tuple[list[Pair], list[PairNote]]:
    """The pairs of ``plan`` (points measured, not skipped, not already stored) and a note
    for every leg that stays unpaired though a partner was planned or asked for; with
    ``unpaired`` (``--unpaired``) no pair, and a note for each that would have formed.

    Virtualization pairs come first: a guest point with the bare-metal point of its own
    hypervisor host at the same cores, HT mode and profile, both on the same host CPUs.
    HT pairs form from the points left: HT off and on of one server, cores and profile.
    A point belongs to one pair at most."""
    todo = [p for p in plan if p.key not in done]
    pairs, notes = _virtualization_pairs(plan, inventory, placement, done)
    if {p.key.ht for p in todo} >= {str(Ht.OFF), str(Ht.ON)}:
        pairs, more_notes = _triples(pairs)
        notes += more_notes
        taken = {leg.key for pair in pairs for leg in pair.legs}
        together = {frozenset((p.a.key, p.b.key)) for p in pairs if p.c is not None}
        more, more_notes = _ht_pairs(todo, taken, together)
        pairs += more
        notes += more_notes
    if unpaired:
        return [], [*(PairNote(p.id, "measured apart (--unpaired)") for p in pairs), *notes]
    return pairs, notes


def _virtualization_pairs(
    plan: Sequence[PlannedPoint],
    inventory: Inventory,
    placement: Mapping[str, str],
    done: frozenset[PointKey] | set[PointKey],
) -> tuple[list[Pair], list[PairNote]]:
    """Each libvirt guest or container point with its own host's bare-metal point (see
    find_pairs)."""
    live = [p for p in plan if p.key not in done and not p.skipped]
    bare = [p for p in live if p.server.platform is Platform.BAREMETAL]
    pairs: list[Pair] = []
    notes: list[PairNote] = []
    for g in live:
        if g.server.platform is Platform.VSPHERE and bare:
            notes.append(PairNote(g.key.label(), VSPHERE_UNPAIRED))
        if not g.server.platform.pairs_with_host:
            continue
        phys = placement.get(g.server.name, "")

        def home(b: PlannedPoint, g: PlannedPoint = g, phys: str = phys) -> bool:
            return (
                b.server.platform is Platform.BAREMETAL
                and _slot(b) == _slot(g)
                and _same_machine(inventory, b.server.name, phys)
            )

        taken = {k for pair in pairs for k in (pair.a.key, pair.b.key)}
        b = next((b for b in bare if home(b) and b.key not in taken), None)
        if b is None:
            stored = next((b for b in plan if b.key in done and home(b)), None)
            if stored is not None:  # --resume: one leg is stored, the other measured alone
                notes.append(
                    PairNote(
                        g.key.label(),
                        f"unpaired: its bare-metal leg ({stored.key.label()}) is already "
                        "stored; this leg is measured alone",
                    )
                )
            continue
        why = pairable(g) or _other_cpus(b, g)
        if why:
            notes.append(PairNote(f"{b.key.label()} / {g.key.label()}", f"unpaired: {why}"))
            continue
        pairs.append(Pair(PairKind.VIRTUALIZATION, b, g))
    return pairs, notes


def _triples(pairs: Sequence[Pair]) -> tuple[list[Pair], list[PairNote]]:
    """With ``--ht both``, a guest's HT-off pair with its host's bare metal takes that bare
    metal's HT-on leg as its third leg (the HT gain and the overhead both paired). The
    bare-metal HT-on leg's own pair with the HT-on guest gives way: that guest is measured
    unpaired (a guest's HT off and on are two definitions of one domain, never both up)."""
    by_leg = {p.a.key: p for p in pairs if p.kind is PairKind.VIRTUALIZATION}
    out: list[Pair] = []
    notes: list[PairNote] = []
    gone: set[str] = set()
    for p in pairs:
        k = p.a.key
        on = next(
            (
                q
                for q in by_leg.values()
                if k.ht == str(Ht.OFF) and q.a.key == replace(k, ht=str(Ht.ON))
            ),
            None,
        )
        if p.kind is not PairKind.VIRTUALIZATION or on is None or pairable(on.a):
            if p.id not in gone:
                out.append(p)
            continue
        gone.add(on.id)
        out = [q for q in out if q.id != on.id]
        out.append(Pair(PairKind.HT, p.a, on.a, c=p.b))
        notes.append(
            PairNote(
                on.b.key.label(),
                f"unpaired: its bare-metal leg ({on.a.key.label()}) is measured in three "
                f"legs with HT off and the HT-off guest; a guest's HT off and on are two "
                "definitions of one domain, and only one can run at a time",
            )
        )
    return out, notes


def _other_cpus(b: PlannedPoint, g: PlannedPoint) -> str:
    """Why two legs cannot share their CPUs: they were planned on different ones."""
    if b.allocation is None or g.allocation is None:
        return ""
    if b.allocation.server_cpus == g.allocation.server_cpus:
        return ""
    return (
        f"the legs are planned on different host CPUs ({b.key.host}: "
        f"{list(b.allocation.server_cpus)}, {g.key.host}: {list(g.allocation.server_cpus)})"
    )


def _ht_pairs(
    todo: Sequence[PlannedPoint], taken: set[PointKey], together: set[frozenset[PointKey]]
) -> tuple[list[Pair], list[PairNote]]:
    """HT off and HT on of one bare-metal server, cores and profile (see find_pairs);
    ``together``: the HT legs already paired within three legs (nothing to say of them)."""
    by_slot: dict[tuple[str, int, str], dict[str, PlannedPoint]] = {}
    for p in todo:
        by_slot.setdefault((p.server.name, p.key.cores, p.key.profile), {})[p.key.ht] = p
    pairs: list[Pair] = []
    notes: list[PairNote] = []
    said: set[tuple[str, str]] = set()
    for legs in by_slot.values():
        off, on = legs.get(str(Ht.OFF)), legs.get(str(Ht.ON))
        if off is None or on is None or frozenset((off.key, on.key)) in together:
            continue
        skipped = next((p for p in (off, on) if p.skipped), None)
        if skipped is not None and off.key not in taken and on.key not in taken:
            # one note per server and reason: a host without SMT says it once
            if (skipped.server.name, skipped.skip_reason) not in said:
                said.add((skipped.server.name, skipped.skip_reason))
                notes.append(
                    PairNote(
                        skipped.server.name,
                        f"no HT pair is formed: the HT-{skipped.key.ht} leg is skipped "
                        f"({skipped.skip_reason})",
                    )
                )
            continue
        why = _ht_unpairable(off, taken) or _ht_unpairable(on, taken)
        if why:
            notes.append(PairNote(f"{off.key.label()} / {on.key.label()}", why))
            continue
        pairs.append(Pair(PairKind.HT, off, on))
    return pairs, notes


def _ht_unpairable(leg: PlannedPoint, taken: set[PointKey]) -> str:
    """Why an HT leg cannot be paired ("" when it can)."""
    if leg.server.platform is Platform.CONTAINER:
        return (
            "unpaired: a container's HT off and on are two starts of one container (one "
            "name, one published port), and only one can run at a time"
        )
    if leg.server.platform is not Platform.BAREMETAL:
        return (
            "unpaired: a guest's HT off and on are two definitions of one domain, and only "
            "one can run at a time"
        )
    if leg.key in taken:
        return "no HT pair: a leg is already in a virtualization pair"
    why = pairable(leg)
    return f"unpaired: {why}" if why else ""
