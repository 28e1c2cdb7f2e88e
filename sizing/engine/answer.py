"""A recommendation's parts: the demand, a configuration (identical servers), a fleet
(mixed sizes), a configuration refused and why, and the answer that holds them
(:class:`Recommendation`). :mod:`sizing.engine.recommend` searches for them;
:mod:`sizing.report.explain` puts them in words."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.engine.assume import Assumption
from sizing.engine.basis import Basis
from sizing.engine.costs import CostBreakdown, CostCatalog, ServerOffer
from sizing.engine.offers import assumed_cpu
from sizing.engine.series import Series
from sizing.engine.yearly import CashFlow
from sizing.errors import UsageError
from sizing.model import Figure, SizingMetric

MAX_HEADROOM_PCT = 90.0
MIN_DEMAND = 1.0  # a demand under one request (handshake) per second sizes nothing
MAX_DEMAND = 1e12  # far beyond any fleet: a larger number is a typo, not a demand
DEFAULT_MAX_SERVERS: int | None = None  # no hidden cap: a limit is asked for, and said


@dataclass(frozen=True)
class Demand:
    """What must be carried: targets, headroom (a fraction, 0.2 = 20%) and redundancy."""

    rps: float | None = None
    tps: float | None = None
    headroom: float = 0.2
    redundancy: str = "none"  # "none" | "n+1" | "2n"

    def validate(self) -> None:
        """Raise :class:`UsageError` with one clear line for a demand that makes no sense."""
        if self.rps is None and self.tps is None:
            raise UsageError("no demand: give --rps, --tps or both")
        for name, v in (("--rps", self.rps), ("--tps", self.tps)):
            if v is not None and not (v > 0 and math.isfinite(v)):
                raise UsageError(f"{name} must be a positive number, not {v:g}")
            if v is not None and not (MIN_DEMAND <= v <= MAX_DEMAND):
                raise UsageError(
                    f"{name} must be at least {MIN_DEMAND:g} and at most {MAX_DEMAND:g} per "
                    f"second, not {v:g}"
                )
        if not (0.0 <= self.headroom <= MAX_HEADROOM_PCT / 100.0):
            raise UsageError(
                f"--headroom must be between 0 and {MAX_HEADROOM_PCT:g} percent, "
                f"not {self.headroom * 100:g}"
            )
        if self.redundancy not in ("none", "n+1", "2n"):
            raise UsageError(f"unknown redundancy {self.redundancy!r} (expected none, n+1 or 2n)")

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(p for p, v in (("rps", self.rps), ("tps", self.tps)) if v is not None)

    def describe(self) -> str:
        parts = []
        if self.rps is not None:
            parts.append(f"{self.rps:,.0f} RPS")
        if self.tps is not None:
            parts.append(f"{self.tps:,.0f} TPS")
        text = " + ".join(parts) + f" with {self.headroom * 100:g}% headroom"
        if self.redundancy == "n+1":
            text += ", N+1"
        elif self.redundancy == "2n":
            text += ", 2N (HA pairs)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "rps": self.rps,
            "tps": self.tps,
            "headroom": self.headroom,
            "redundancy": self.redundancy,
        }


@dataclass(frozen=True)
class Configuration:
    """A sized configuration: how many servers of which kind, what they carry and cost.

    ``capacity_rps``/``capacity_tps`` are those of the servers counted on (one fewer under
    N+1) and ``utilization`` is the CPU share the demand uses on them (0–1).
    """

    platform: str
    ht: str
    cores_per_server: int
    servers: int
    counted_servers: int
    cost_per_server: float
    total_cost: float
    capacity_rps: float | None
    capacity_tps: float | None
    utilization: float
    extrapolated: bool  # a figure is shape-borrowed or extrapolated beyond measured counts
    figures: tuple[Figure, ...] = field(default=())
    basis: str = ""
    price_source: str = ""
    confidence: float | None = None  # share of the bootstrap draws in which it carries
    share_draws: tuple[float, ...] = ()  # draws of one server's share of the demand
    # what one server costs, part by part, and what its price leaves out (None: built
    # without a catalog, e.g. by a test)
    unit_cost: CostBreakdown | None = None
    offer: ServerOffer | None = None  # the catalog entry: model name, CPU model, sockets
    # what the whole configuration costs (an order minimum is the order's, not a server's)
    fleet_cost: CostBreakdown | None = None

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags of the figures it is sized on, each once."""
        return tuple(dict.fromkeys(g for f in self.figures for g in f.flags))

    @property
    def server_name(self) -> str:
        """The server model the catalog names (``PowerEdge R660``), or ``""``."""
        return "" if self.offer is None else self.offer.name

    @property
    def label(self) -> str:
        """``2 × esxi 4-core (HT off)``, or with a named model ``2 × PowerEdge R660
        (8 cores, esxi, HT off)``."""
        if self.server_name:
            return (
                f"{self.servers} × {self.server_name} ({self.cores_per_server} cores, "
                f"{self.platform}, HT {self.ht})"
            )
        return f"{self.servers} × {self.platform} {self.cores_per_server}-core (HT {self.ht})"

    @property
    def breakdown(self) -> CostBreakdown:
        """What the whole configuration costs, part by part (hardware only when built
        without a catalog)."""
        if self.fleet_cost is not None:
            return self.fleet_cost
        unit = self.unit_cost or CostBreakdown(hardware=self.cost_per_server)
        return unit.times(self.servers)

    def cost_per(self, profile: str) -> float | None:
        """Total cost per 1,000 RPS or per 100 TPS of counted capacity."""
        cap = self.capacity_rps if profile == SizingMetric.RPS else self.capacity_tps
        unit = 1000.0 if profile == SizingMetric.RPS else 100.0
        return None if not cap else self.total_cost / (cap / unit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "ht": self.ht,
            "cores_per_server": self.cores_per_server,
            "servers": self.servers,
            "total_cost": round(self.total_cost, 2),
            "capacity_rps": _round(self.capacity_rps),
            "capacity_tps": _round(self.capacity_tps),
            "utilization": round(self.utilization, 4),
            "extrapolated": self.extrapolated,
            "basis": self.basis,
            "price_source": self.price_source,
            "flags": list(self.flags),
            "counted_servers": self.counted_servers,
            "cost_per_server": round(self.cost_per_server, 2),
            "cost_per_1k_rps": _round(self.cost_per("rps"), 2),
            "cost_per_100_tps": _round(self.cost_per("tps"), 2),
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "server_name": self.server_name,
            "cpu_model": "" if self.offer is None else self.offer.cpu_model,
            "cost_per_server_breakdown": None
            if self.unit_cost is None
            else self.unit_cost.to_dict(),
            "cost": self.breakdown.to_dict(),
            "figures": [figure_dict(f) for f in self.figures],
        }


@dataclass(frozen=True)
class Fleet:
    """A fleet of one basis, platform and HT mode, possibly mixing core counts: the
    exact cheapest (:mod:`sizing.engine.fleet`). ``parts`` are (server type, count), the
    server types being :class:`Configuration` rows of one server each."""

    parts: tuple[tuple[Configuration, int], ...]
    total_cost: float
    utilization: float  # of the counted capacity at the demand
    confidence: float | None
    gap: float = 0.0  # > 0: not proven optimal; at most this share above the cheapest
    cost: CostBreakdown | None = None  # the whole fleet's (an order minimum applied)

    @property
    def servers(self) -> int:
        return sum(n for _, n in self.parts)

    @property
    def mixed(self) -> bool:
        return len(self.parts) > 1

    @property
    def label(self) -> str:
        """``2 × 4-core + 1 × 8-core esxi (HT off)``, with model names when the catalog
        gives them (``1 × PowerEdge R660 (8 cores)``)."""
        first = self.parts[0][0]
        body = " + ".join(
            f"{n} × {c.offer.label() if c.offer is not None else f'{c.cores_per_server}-core'}"
            for c, n in self.parts
        )
        return f"{body} {first.platform} (HT {first.ht})"

    @property
    def breakdown(self) -> CostBreakdown:
        """What the fleet costs, part by part, and what its prices leave out."""
        if self.cost is not None:
            return self.cost
        total: CostBreakdown | None = None
        for c, n in self.parts:
            part = (
                c.breakdown if c.servers == n else replace(c, servers=n, fleet_cost=None).breakdown
            )
            total = part if total is None else total.plus(part)
        assert total is not None  # a fleet has at least one part
        return total

    def to_dict(self) -> dict[str, Any]:
        first = self.parts[0][0]
        return {
            "basis": first.basis,
            "platform": first.platform,
            "ht": first.ht,
            "servers": [
                {
                    "cores": c.cores_per_server,
                    "count": n,
                    "cost_per_server": round(c.cost_per_server, 2),
                    "server_name": c.server_name,
                }
                for c, n in self.parts
            ],
            "total_cost": round(self.total_cost, 2),
            "cost": self.breakdown.to_dict(),
            "utilization": round(self.utilization, 4),
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "mixed": self.mixed,
            "proven_optimal": self.gap == 0.0,
            "gap": round(self.gap, 6),
        }


def figure_dict(f: Figure) -> dict[str, Any]:
    """A figure as JSON: value, interval, the conservative end sized on, flags, bound."""
    return {
        "profile": f.profile,
        "cores": f.cores,
        "value": round(f.value, 1),
        "ci_low": _round(f.ci_low),
        "ci_high": _round(f.ci_high),
        "sized_on": round(f.conservative, 1),
        "bound": f.bound,
        "source": f.source,
        "interval": f.interval,
        "coverage": f.coverage,
        "origin": f.origin,
        "emulated": f.emulated,
        "basis": f.basis,
        "flags": list(f.flags),
    }


def _round(v: float | None, digits: int = 1) -> float | None:
    return None if v is None else round(v, digits)


@dataclass(frozen=True)
class Rejected:
    """A platform × HT × core count that cannot carry the demand, and why."""

    platform: str
    ht: str
    cores_per_server: int | None  # None: every core count
    reason: str
    servers_needed: int | None = None  # when the only problem is --max-servers
    basis: str = ""
    server: str = ""  # the catalog server refused by name ("" when none is named)

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "platform": self.platform,
            "ht": self.ht,
            "cores_per_server": self.cores_per_server,
            "reason": self.reason,
            "servers_needed": self.servers_needed,
            "server": self.server,
        }


@dataclass(frozen=True)
class Recommendation:
    """The answer: the cheapest configuration (or none), the ranked rest and why."""

    demand: Demand
    source: str
    cost_basis: str
    currency: str
    recommendation: Configuration | None
    alternatives: tuple[Configuration, ...]
    rejected: tuple[Rejected, ...]
    series: tuple[Series, ...]
    bases: tuple[Basis, ...] = ()
    why: str = ""
    allow_extrapolation: bool = False
    fleet: Fleet | None = None  # the cheapest fleet, identical or mixed
    confidence_asked: float | None = None
    max_servers: int | None = None  # the cap asked for (said when it binds)
    sized_on: Basis | None = None  # the basis of the cheapest configuration
    capacity_of: str = "their CPU"  # what a server's capacity is of (the answer says it)
    catalog: CostCatalog | None = None  # the customer's catalog: name, source, date
    cash_flow: CashFlow | None = None  # the plan year by year (None: no whole-year period)
    growth: float = 0.0  # of the demand, a year (--growth)
    years: int | None = None  # --years (None: the catalog's period)
    # stated assumptions the answer rests on (sizing.engine.assume), each with its source
    assumptions: tuple[Assumption, ...] = ()
    # the runs that would size a catalog server on its own figures instead of a floor,
    # where they could change the answer: (server, command as typed, note)
    measure: tuple[tuple[str, str, str], ...] = ()

    @property
    def left_out(self) -> tuple[str, ...]:
        """What the answer's price leaves out, in words (of the cheapest fleet)."""
        best = self.recommendation
        mix = self.cheaper_mix
        if mix is not None:
            return mix.breakdown.left_out
        return () if best is None else best.breakdown.left_out

    @property
    def cpu_assumed(self) -> tuple[str, tuple[str, ...]]:
        """The CPU the answer's basis was measured on (or translated to) and the catalog
        servers that name no CPU, in a catalog where others name theirs: each is taken to
        be that CPU (said in every answer). ("", ()) when none is."""
        b, cat = self.sized_on, self.catalog
        if b is None or cat is None:
            return "", ()
        named = assumed_cpu(cat, b)
        return (
            (b.hardware.cpu_model, tuple(o.name or o.label() for o in named)) if named else ("", ())
        )

    @property
    def cheaper_mix(self) -> Fleet | None:
        """The cheapest fleet when it mixes server sizes and beats the identical one."""
        return cheaper_mix(self.fleet, self.recommendation)

    def recommended_dict(self) -> dict[str, Any] | None:
        """The one fleet the answer recommends, as every rendering names it: the cheaper
        mix when there is one, else the cheapest identical fleet (None: nothing carries)."""
        best, mix = self.recommendation, self.cheaper_mix
        if best is None:
            return None
        if mix is not None:
            first = mix.parts[0][0]
            parts = [
                (c.cores_per_server, n, c.server_name, c.cost_per_server) for c, n in mix.parts
            ]
            where, label, total = "cheapest_fleet", mix.label, mix.total_cost
        else:
            first = best
            one = (best.cores_per_server, best.servers, best.server_name, best.cost_per_server)
            parts = [one]
            where, label, total = "recommendation", best.label, best.total_cost
        return {
            "fleet": where,
            "label": label,
            "basis": first.basis,
            "platform": first.platform,
            "ht": first.ht,
            "servers": [
                {"cores": c, "count": n, "server_name": name, "cost_per_server": round(u, 2)}
                for c, n, name, u in parts
            ],
            "server_count": sum(n for _, n, _, _ in parts),
            "total_cost": round(total, 2),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "recommended": self.recommended_dict(),
            "cheapest_fleet": None if self.fleet is None else self.fleet.to_dict(),
            "confidence_asked": self.confidence_asked,
            "bases": [b.to_dict() for b in self.bases],
            "why": self.why,
            "allow_extrapolation": self.allow_extrapolation,
            "demand": self.demand.to_dict(),
            "source": self.source,
            "cost_basis": self.cost_basis,
            "currency": self.currency,
            "catalog": None if self.catalog is None else _catalog_dict(self.catalog),
            "cash_flow": None if self.cash_flow is None else self.cash_flow.to_dict(),
            "left_out": list(self.left_out),
            "recommendation": None
            if self.recommendation is None
            else self.recommendation.to_dict(),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "rejected": [r.to_dict() for r in self.rejected],
            "fits": [s.to_dict() for s in self.series],
            # the figures made from a stated assumption (--assume); "assumptions" of the
            # command's document is the whole table a CFO reads, these among its rows
            "assumed": [a.to_dict() for a in self.assumptions],
            "cpu_assumed": None
            if not self.cpu_assumed[1]
            else {"cpu": self.cpu_assumed[0], "servers": list(self.cpu_assumed[1])},
            "measure_next": [
                {"server": w, "command": c, "note": n or None} for w, c, n in self.measure
            ],
        }


def _catalog_dict(c: CostCatalog) -> dict[str, Any]:
    """Where an answer's prices come from: the catalog's name, source and date."""
    return {"name": c.name, "source": c.source, "date": c.date, "label": c.label}


def cheaper_mix(fleet: Fleet | None, best: Configuration | None) -> Fleet | None:
    """``fleet`` when it mixes server sizes and costs less than ``best``, the cheapest
    identical fleet (by more than a rounding cent); else None."""
    if fleet is None or best is None or not fleet.mixed:
        return None
    return fleet if fleet.total_cost < best.total_cost - 0.005 else None
