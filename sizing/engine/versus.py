"""Bare metal against the hypervisor for one demand: the comparison the tool exists for.

The same demand is sized twice on the same chosen bases, once on bare metal only and once
on the hypervisor's guests only (the same catalog, headroom, redundancy and HT choice),
and on every other platform the figures or the catalog hold (KVM beside ESXi; Kubernetes
on a container leg or the reference data of the same workload, when the catalog prices a
Kubernetes licence),
and the overhead that explains the difference is read from the table of those bases: per
core count, what a guest carries of bare metal's figure, with its interval (paired where
the two legs were measured in interleaved pairs). Pure: words are the report's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.answer import Demand, Fleet, Recommendation
from sizing.engine.table import SizingTable
from sizing.model import HYPERVISOR_PLATFORMS, OBSERVED, Figure

__all__ = ["Overhead", "PlatformComparison", "Side", "guest_platform", "overheads"]


@dataclass(frozen=True)
class Side:
    """The demand sized on one platform only. ``sized_on`` names the basis when it is not
    the answer's (Kubernetes: a container leg or the reference data of the same workload);
    ``not_priced`` says why a platform the catalog prices has no fleet (no figures of the
    answer's workload), said on every rendering instead of a fleet."""

    platform: str
    result: Recommendation
    sized_on: str = ""
    not_priced: str = ""

    @property
    def fleet(self) -> Fleet | None:
        """The cheapest fleet on this platform (identical or mixed), None if none carries."""
        return self.result.fleet

    @property
    def cost(self) -> float | None:
        f = self.fleet
        if f is not None:
            return f.total_cost
        best = self.result.recommendation
        return None if best is None else best.total_cost

    @property
    def total(self) -> float | None:
        """What the option costs in all: its plan's total when the demand grows (servers
        added year by year), else its fleet's cost; the figure options are compared on."""
        plan = self.result.cash_flow
        if self.cost is not None and plan is not None and plan.growth and plan.rows:
            return plan.total
        return self.cost

    @property
    def servers(self) -> int | None:
        f = self.fleet
        if f is not None:
            return f.servers
        best = self.result.recommendation
        return None if best is None else best.servers

    def to_dict(self) -> dict[str, Any]:
        best = self.result.recommendation
        return {
            "platform": self.platform,
            "servers": self.servers,
            "total_cost": None if self.cost is None else round(self.cost, 2),
            "total": None if self.total is None else round(self.total, 2),
            "fleet": None if self.fleet is None else self.fleet.to_dict(),
            "identical": None if best is None else best.to_dict(),
            "cash_flow": None if self.result.cash_flow is None else self.result.cash_flow.to_dict(),
            "own_basis": self.sized_on or None,
            "not_priced": self.not_priced or None,
        }


@dataclass(frozen=True)
class Overhead:
    """What a guest carries of bare metal's figure at one core count, HT mode and profile
    (``share`` = 1 − overhead), with the interval of that share and whether it is paired."""

    profile: str
    ht: str
    cores: int
    share: float
    low: float | None
    high: float | None
    paired: bool
    source: str  # measured | reference (observed figures only)
    platform: str = ""  # the guest's platform (esxi, kvm); "" read as the compared guest's
    simulated: bool = False  # its figures are an example store's, made up (never "measured")

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "ht": self.ht,
            "cores": self.cores,
            "guest_share": round(self.share, 4),
            "guest_share_interval": None
            if self.low is None or self.high is None
            else [round(self.low, 4), round(self.high, 4)],
            "paired": self.paired,
            "source": self.source,
            "platform": self.platform,
            "simulated": self.simulated,
        }


@dataclass(frozen=True)
class PlatformComparison:
    """Bare metal and a hypervisor's guests, each sized for the same demand, and the
    observed overheads between them."""

    demand: Demand
    baremetal: Side
    guest: Side
    overheads: tuple[Overhead, ...]
    currency: str
    cost_basis: str
    # every other platform the answer prices (KVM beside ESXi), each sized alone
    others: tuple[Side, ...] = ()
    # the platforms that could not be priced and what would price them (platform, words)
    unpriced: tuple[tuple[str, str], ...] = ()

    @property
    def sides(self) -> tuple[Side, ...]:
        """Bare metal, the guest compared with it, then the other priced platforms."""
        return (self.baremetal, self.guest, *self.others)

    @property
    def extra_cost(self) -> float | None:
        """What the guests cost more than bare metal for the demand (negative: less), in
        all (:attr:`Side.total`: the plans' totals when the demand grows)."""
        a, b = self.baremetal.total, self.guest.total
        # of the totals as printed, to the cent: the reader's subtraction gives it exactly
        return None if a is None or b is None else round(b, 2) - round(a, 2)

    def share_at(self, profile: str, cores: int, ht: str) -> Overhead | None:
        """The observed overhead at ``cores`` (else the nearest observed core count)."""
        mine = [
            o
            for o in self.overheads
            if o.profile == profile and o.ht == ht and o.platform in ("", self.guest.platform)
        ]
        if not mine:
            return None
        return min(mine, key=lambda o: (abs(o.cores - cores), -o.cores))

    def to_dict(self) -> dict[str, Any]:
        extra = self.extra_cost
        return {
            "demand": self.demand.to_dict(),
            "baremetal": self.baremetal.to_dict(),
            "guest": self.guest.to_dict(),
            "extra_cost": None if extra is None else round(extra, 2),
            "currency": self.currency,
            "cost_basis": self.cost_basis,
            "overheads": [o.to_dict() for o in self.overheads],
            "others": [o.to_dict() for o in self.others],
            "unpriced": [{"platform": p, "what_would_price_it": w} for p, w in self.unpriced],
        }


def guest_platform(figures: Sequence[Figure]) -> str | None:
    """The hypervisor platform to compare with bare metal: the figures must hold bare
    metal and one hypervisor's guests (ESXi before KVM)."""
    platforms = {f.platform for f in figures}
    if "baremetal" not in platforms:
        return None
    return next((p for p in ("esxi", *HYPERVISOR_PLATFORMS) if p in platforms), None)


def overheads(table: SizingTable, guest: str) -> tuple[Overhead, ...]:
    """Every observed overhead of ``guest`` against bare metal in ``table``."""
    out = []
    for row in table.rows:
        for c in row.cells:
            o = c.overhead
            if c.platform != guest or o is None or c.source not in OBSERVED:
                continue
            low, high = o.share_interval or (None, None)
            share = (c.profile, c.ht, c.cores, o.share, low, high, o.pairs > 0, c.source, guest)
            out.append(Overhead(*share, simulated="simulated" in c.flags))
    return tuple(sorted(out, key=lambda o: (o.profile, o.ht, o.cores)))
