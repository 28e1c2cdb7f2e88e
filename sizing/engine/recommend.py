"""The cheapest configuration that carries a demand with headroom.

A configuration is a platform, a core count per server, an HT mode and a number of
identical servers. A demand is an RPS target, a TPS target or both, a headroom (the share
of CPU kept free) and a redundancy rule.

**Mixed demands add their CPU shares.** Serving ``rps`` takes ``rps / rps_capacity`` of
the servers' CPU and handshakes take ``tps / tps_capacity``; a configuration carries the
demand when

    rps / rps_capacity + tps / tps_capacity ≤ 1 − headroom

(the larger of the two shares would undercount). **N+1** counts one server fewer: the
demand must still fit with one server down. Capacities and utilisation are reported for
the servers counted on.

**Ranking.** By total cost (the catalog's cost basis: hardware only, or a total cost of
ownership when it prices licences, power and an amortisation period), then fewer servers,
then figures not extrapolated, then lower utilisation, then bare metal before hypervisor
before Kubernetes, HT off before on, fewer cores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.engine.costs import CostCatalog
from sizing.engine.figures import HT_ORDER, PLATFORM_ORDER, Series, build_series
from sizing.errors import UsageError
from sizing.model import Figure

MAX_HEADROOM_PCT = 90.0
DEFAULT_MAX_SERVERS = 64
_EPS = 1e-9  # a demand exactly at capacity fits; float noise must not add a server


@dataclass(frozen=True)
class Demand:
    """What must be carried: targets, headroom (a fraction, 0.2 = 20%) and redundancy."""

    rps: float | None = None
    tps: float | None = None
    headroom: float = 0.2
    redundancy: str = "none"  # "none" | "n+1"

    def validate(self) -> None:
        """Raise :class:`UsageError` with one clear line for a demand that makes no sense."""
        if self.rps is None and self.tps is None:
            raise UsageError("no demand: give --rps, --tps or both")
        for name, v in (("--rps", self.rps), ("--tps", self.tps)):
            if v is not None and not (v > 0 and math.isfinite(v)):
                raise UsageError(f"{name} must be a positive number, not {v:g}")
        if not (0.0 <= self.headroom <= MAX_HEADROOM_PCT / 100.0):
            raise UsageError(
                f"--headroom must be between 0 and {MAX_HEADROOM_PCT:g} percent, "
                f"not {self.headroom * 100:g}"
            )
        if self.redundancy not in ("none", "n+1"):
            raise UsageError(f"unknown redundancy {self.redundancy!r} (expected none or n+1)")

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
    extrapolated: bool
    figures: tuple[Figure, ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.servers} × {self.platform} {self.cores_per_server}-core (HT {self.ht})"

    def cost_per(self, profile: str) -> float | None:
        """Total cost per 1,000 RPS or per 100 TPS of counted capacity."""
        cap = self.capacity_rps if profile == "rps" else self.capacity_tps
        unit = 1000.0 if profile == "rps" else 100.0
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
            "counted_servers": self.counted_servers,
            "cost_per_server": round(self.cost_per_server, 2),
            "cost_per_1k_rps": _round(self.cost_per("rps"), 2),
            "cost_per_100_tps": _round(self.cost_per("tps"), 2),
            "figures": [
                {
                    "profile": f.profile,
                    "cores": f.cores,
                    "value": round(f.value, 1),
                    "source": f.source,
                    "origin": f.origin,
                    "emulated": f.emulated,
                }
                for f in self.figures
            ],
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "ht": self.ht,
            "cores_per_server": self.cores_per_server,
            "reason": self.reason,
            "servers_needed": self.servers_needed,
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
    explanation: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "demand": self.demand.to_dict(),
            "source": self.source,
            "cost_basis": self.cost_basis,
            "currency": self.currency,
            "recommendation": None
            if self.recommendation is None
            else self.recommendation.to_dict(),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "rejected": [r.to_dict() for r in self.rejected],
            "fits": [s.to_dict() for s in self.series],
            "explanation": list(self.explanation),
        }


def servers_needed(load: float, headroom: float) -> int:
    """Servers to count on for ``load`` (in one-server CPU shares) within the headroom."""
    return max(1, math.ceil(load / (1.0 - headroom) - _EPS))


def _rank(c: Configuration) -> tuple[float, int, bool, float, int, int, int]:
    return (
        round(c.total_cost, 6),
        c.servers,
        c.extrapolated,
        c.utilization,
        PLATFORM_ORDER.index(c.platform) if c.platform in PLATFORM_ORDER else 99,
        HT_ORDER.index(c.ht) if c.ht in HT_ORDER else 99,
        c.cores_per_server,
    )


def recommend(
    figures: Sequence[Figure],
    catalog: CostCatalog,
    demand: Demand,
    *,
    platforms: Sequence[str] | None = None,
    ht_modes: Sequence[str] | None = None,
    max_servers: int = DEFAULT_MAX_SERVERS,
) -> Recommendation:
    """Rank every configuration the figures and the catalog allow; pick the cheapest.

    ``platforms`` and ``ht_modes`` restrict the search (``None``: every one the figures
    hold). Core counts are the catalog's; figures at other core counts are extrapolated.
    The result's ``source`` names the sources of the series the search used.
    """
    demand.validate()
    if max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    series = build_series(figures)
    n_plus_1 = 1 if demand.redundancy == "n+1" else 0
    all_platforms = sorted({k[0] for k in series}, key=_platform_index)
    wanted_platforms = list(platforms) if platforms is not None else all_platforms
    wanted_ht = list(ht_modes) if ht_modes is not None else list(HT_ORDER)

    feasible: list[Configuration] = []
    rejected: list[Rejected] = []
    used: list[Series] = []
    for platform in wanted_platforms:
        if not any(k[0] == platform for k in series):
            rejected.append(Rejected(platform, "any", None, f"no {platform} figures"))
            continue
        for ht in wanted_ht:
            chosen = [series.get((platform, ht, p)) for p in demand.profiles]
            if not any(k[:2] == (platform, ht) for k in series):
                continue  # nothing at all for this platform and HT mode: not an option
            for cores in catalog.core_counts():
                missing = [p for p, s in zip(demand.profiles, chosen, strict=True) if s is None]
                if missing:
                    what = "/".join(missing).upper()
                    rejected.append(
                        Rejected(platform, ht, cores, f"no {platform} {what} figures, HT {ht}")
                    )
                    continue
                picked = [s.at(cores) for s in chosen if s is not None]
                per_server = {f.profile: f.value for f in picked}
                load = sum(
                    (demand.rps or 0.0) / per_server[p]
                    if p == "rps"
                    else (demand.tps or 0.0) / per_server[p]
                    for p in demand.profiles
                )
                counted = servers_needed(load, demand.headroom)
                n = counted + n_plus_1
                if n > max_servers:
                    rejected.append(
                        Rejected(platform, ht, cores, f"needs {n} servers (max {max_servers})", n)
                    )
                    continue
                cost = catalog.server_cost(platform, cores).total
                feasible.append(
                    Configuration(
                        platform=platform,
                        ht=ht,
                        cores_per_server=cores,
                        servers=n,
                        counted_servers=counted,
                        cost_per_server=cost,
                        total_cost=cost * n,
                        capacity_rps=per_server["rps"] * counted
                        if "rps" in per_server
                        else _cap(series, platform, ht, "rps", cores, counted),
                        capacity_tps=per_server["tps"] * counted
                        if "tps" in per_server
                        else _cap(series, platform, ht, "tps", cores, counted),
                        utilization=load / counted,
                        extrapolated=any(f.source == "extrapolated" for f in picked),
                        figures=tuple(picked),
                    )
                )
            used.extend(s for s in chosen if s is not None and s not in used)
    feasible.sort(key=_rank)
    best = feasible[0] if feasible else None
    return Recommendation(
        demand=demand,
        source=_source_of(used),
        cost_basis=catalog.basis,
        currency=catalog.currency,
        recommendation=best,
        alternatives=tuple(feasible[1:]),
        rejected=tuple(rejected),
        series=tuple(used),
        explanation=explain(demand, best, feasible[1:], rejected, catalog, max_servers),
    )


def _platform_index(p: str) -> int:
    return PLATFORM_ORDER.index(p) if p in PLATFORM_ORDER else len(PLATFORM_ORDER)


def _cap(
    series: dict[tuple[str, str, str], Series],
    platform: str,
    ht: str,
    profile: str,
    cores: int,
    counted: int,
) -> float | None:
    s = series.get((platform, ht, profile))
    return None if s is None else s.at(cores).value * counted


def _source_of(used: Sequence[Series]) -> str:
    bases = {s.basis for s in used}
    if bases == {"measured", "reference"}:
        return "both"
    return bases.pop() if bases else "none"


def _money(v: float, currency: str) -> str:
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{v:,.0f}" if abs(v - round(v)) < 0.005 else f"{sign}{v:,.2f}"


def _money_cents(v: float, currency: str) -> str:
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{v:,.2f}"


def explain(
    demand: Demand,
    best: Configuration | None,
    others: Sequence[Configuration],
    rejected: Sequence[Rejected],
    catalog: CostCatalog,
    max_servers: int,
) -> tuple[str, ...]:
    """The choice in words and numbers."""
    cur = catalog.currency
    if best is None:
        sized = [r for r in rejected if r.servers_needed is not None]
        if sized:
            r = min(sized, key=lambda r: (r.servers_needed or 0, r.cores_per_server or 0))
            why = (
                f"the fewest would be {r.servers_needed:,} × {r.platform} "
                f"{r.cores_per_server}-core (HT {r.ht}); raise --max-servers or add larger "
                "servers to the catalog"
            )
        else:
            why = "; ".join(sorted({r.reason for r in rejected})) or "no figures to size from"
        return (
            f"No configuration in the catalog carries {demand.describe()} "
            f"within {max_servers} servers: {why}.",
        )
    lines = [
        f"Cheapest: {best.label}, {_money(best.total_cost, cur)} "
        f"({best.servers} × {_money(best.cost_per_server, cur)}; {catalog.basis}).",
    ]
    caps = []
    for f in best.figures:
        unit = "RPS" if f.profile == "rps" else "TPS"
        caps.append(f"{f.value:,.0f} {unit} ({f.source})")
    lines.append("Per server: " + ", ".join(caps) + ".")
    shares = []
    for f in best.figures:
        target = demand.rps if f.profile == "rps" else demand.tps
        assert target is not None
        unit = "RPS" if f.profile == "rps" else "TPS"
        cap = f.value * best.counted_servers
        shares.append(f"{target:,.0f} {unit} uses {target / cap * 100:.1f}% of {cap:,.0f}")
    counted = f"{best.counted_servers} server" + ("s" if best.counted_servers > 1 else "")
    if demand.redundancy == "n+1":
        counted += " (one of the " + f"{best.servers} down)"
    lines.append(
        f"Capacity on {counted}: "
        + " + ".join(shares)
        + f" = {best.utilization * 100:.1f}% utilisation at the target, "
        f"limit {100 - demand.headroom * 100:g}% ({demand.headroom * 100:g}% headroom)."
    )
    per = [
        f"{_money_cents(v, cur)} per {u}"
        for p, u in (("rps", "1k RPS"), ("tps", "100 TPS"))
        if p in demand.profiles and (v := best.cost_per(p)) is not None
    ]
    if per:
        lines.append("Cost per unit of capacity: " + ", ".join(per) + ".")
    if best.extrapolated:
        lines.append("Some figures are extrapolated beyond the observed core counts.")
    if others:
        nxt = others[0]
        lines.append(
            f"Next: {nxt.label}, {_money(nxt.total_cost, cur)} "
            f"(+{_money(nxt.total_cost - best.total_cost, cur)})."
        )
    return tuple(lines)
