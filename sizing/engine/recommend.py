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

**Bases.** Every series belongs to one basis (:mod:`sizing.engine.basis`); a
configuration is sized from one basis' figures only and carries its id. Capacities are the
figures' conservative ends (:attr:`Figure.conservative`, the low end of the 95% interval),
and the explanation says "capacity A–B, sized on A".

**Prices.** A basis with a :class:`~sizing.engine.basis.Price` (in ``prices`` or its own)
is priced by its offers, with the catalog's licences, power and period; the reference
basis (and figures without a basis) by the catalog; a measured basis without a price by the
catalog only when ``article_prices`` is set, else its configurations are rejected.

**Ranking.** Figures measured or interpolated between measured core counts first (unless
``allow_extrapolation``: then shape-borrowed and extrapolated ones compete on equal terms),
then total cost (the catalog's cost basis: hardware only, or a total cost of ownership when
it prices licences, power and an amortisation period), then fewer servers, then figures not
extrapolated, then lower utilisation, then bare metal before hypervisors before Kubernetes,
HT off before on, fewer cores.

``platforms`` may say ``hypervisor`` for every hypervisor platform (KVM and ESXi).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.engine.basis import Basis, Price
from sizing.engine.costs import CostCatalog
from sizing.engine.figures import HT_ORDER, PLATFORM_ORDER, Series, build_series
from sizing.errors import UsageError
from sizing.model import HYPERVISOR_PLATFORMS, Figure

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
    extrapolated: bool  # a figure is shape-borrowed or extrapolated beyond measured counts
    figures: tuple[Figure, ...] = field(default=())
    basis: str = ""
    price_source: str = ""

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags of the figures it is sized on, each once."""
        return tuple(dict.fromkeys(g for f in self.figures for g in f.flags))

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
            "basis": self.basis,
            "price_source": self.price_source,
            "flags": list(self.flags),
            "counted_servers": self.counted_servers,
            "cost_per_server": round(self.cost_per_server, 2),
            "cost_per_1k_rps": _round(self.cost_per("rps"), 2),
            "cost_per_100_tps": _round(self.cost_per("tps"), 2),
            "figures": [figure_dict(f) for f in self.figures],
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
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
    bases: tuple[Basis, ...] = ()
    why: str = ""
    allow_extrapolation: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "bases": [b.to_dict() for b in self.bases],
            "why": self.why,
            "allow_extrapolation": self.allow_extrapolation,
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


def _rank(
    allow: bool,
) -> Any:
    def key(c: Configuration) -> tuple[bool, float, int, bool, float, int, int, int]:
        return (
            c.extrapolated and not allow,
            round(c.total_cost, 6),
            c.servers,
            c.extrapolated,
            c.utilization,
            _platform_index(c.platform),
            HT_ORDER.index(c.ht) if c.ht in HT_ORDER else 99,
            c.cores_per_server,
        )

    return key


def wanted_platforms(platforms: Sequence[str] | None) -> set[str] | None:
    """The basis platforms a ``--platform`` list means (``hypervisor``: KVM and ESXi)."""
    if platforms is None:
        return None
    out = set(platforms)
    if "hypervisor" in out:
        out.update(HYPERVISOR_PLATFORMS)
    return out


def pricing(
    basis_id: str,
    origin: str,
    catalog: CostCatalog,
    prices: Mapping[str, Price],
    by_id: Mapping[str, Basis],
    article_prices: bool,
) -> tuple[CostCatalog | None, str]:
    """The catalog that prices a basis and the price source in words, or (None, reason)."""
    b = by_id.get(basis_id)
    price = prices.get(basis_id) or (b.price if b is not None else None)
    named = f"catalog {catalog.name}" if catalog.name else "the catalog"
    if price is not None:
        return price.catalog(catalog), price.source
    if not basis_id or origin == "reference" or (b is not None and b.origin == "reference"):
        return catalog, named
    if article_prices:
        return catalog, f"{named} (asked for: --article-prices or --catalog)"
    return None, (
        f"no price for {basis_id}: set sizing_price_usd in the inventory, give --catalog FILE, "
        "or pass --article-prices"
    )


def recommend(
    figures: Sequence[Figure],
    catalog: CostCatalog,
    demand: Demand,
    *,
    platforms: Sequence[str] | None = None,
    ht_modes: Sequence[str] | None = None,
    max_servers: int = DEFAULT_MAX_SERVERS,
    bases: Sequence[Basis] = (),
    prices: Mapping[str, Price] | None = None,
    article_prices: bool = False,
    allow_extrapolation: bool = False,
    why: str = "",
) -> Recommendation:
    """Rank every configuration the figures and their prices allow; pick the cheapest.

    ``figures`` are those of the chosen bases (:attr:`Choice.figures`); ``bases`` every
    known basis (metadata, prices, and the shapes a short series may borrow); ``why`` the
    choice's sentence for the explanation. ``platforms`` and ``ht_modes`` restrict the
    search (``None``: every one the figures hold). Core counts are the pricing catalog's;
    figures at other core counts are derived or refused (:mod:`sizing.engine.figures`).
    """
    demand.validate()
    if max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    by_id = {b.id: b for b in bases}
    price_map = dict(prices or {})
    upto = max(catalog.core_counts(), default=None)
    for p in price_map.values():
        upto = max([upto or 0, *(o.cores for o in p.offers)])
    series = build_series(figures, bases=bases, allow_extrapolation=allow_extrapolation, upto=upto)
    n_plus_1 = 1 if demand.redundancy == "n+1" else 0
    wanted = wanted_platforms(platforms)
    wanted_ht = list(ht_modes) if ht_modes is not None else list(HT_ORDER)
    groups = sorted({(k[0], k[1]) for k in series}, key=lambda g: (_platform_index(g[1]), g[0]))

    feasible: list[Configuration] = []
    rejected: list[Rejected] = []
    used: list[Series] = []
    have = {g[1] for g in groups}
    for platform in [] if platforms is None else list(dict.fromkeys(platforms)):
        hv = platform == "hypervisor" and have & {"hypervisor", *HYPERVISOR_PLATFORMS}
        if platform not in have and not hv:
            rejected.append(Rejected(platform, "any", None, f"no {platform} figures"))
    for basis_id, platform in groups:
        if wanted is not None and platform not in wanted:
            continue
        origin = next(s.origin for k, s in series.items() if k[:2] == (basis_id, platform))
        priced, price_source = pricing(basis_id, origin, catalog, price_map, by_id, article_prices)
        for ht in wanted_ht:
            chosen = [series.get((basis_id, platform, ht, p)) for p in demand.profiles]
            if not any(k[:3] == (basis_id, platform, ht) for k in series):
                continue  # nothing at all for this basis, platform and HT mode: not an option
            if priced is None:
                rejected.append(Rejected(platform, ht, None, price_source, basis=basis_id))
                continue
            for cores in priced.core_counts():
                missing = [p for p, s in zip(demand.profiles, chosen, strict=True) if s is None]
                if missing:
                    what = "/".join(missing).upper()
                    reason = f"no {platform} {what} figures, HT {ht}"
                    rejected.append(Rejected(platform, ht, cores, reason, basis=basis_id))
                    continue
                got = [s.estimate(cores) for s in chosen if s is not None]
                refusals = [g for g in got if isinstance(g, str)]
                if refusals:
                    rejected.append(
                        Rejected(platform, ht, cores, "; ".join(refusals), basis=basis_id)
                    )
                    continue
                picked = [g for g in got if isinstance(g, Figure)]
                per_server = {f.profile: f.conservative for f in picked}
                load = sum(
                    (demand.rps or 0.0) / per_server[p]
                    if p == "rps"
                    else (demand.tps or 0.0) / per_server[p]
                    for p in demand.profiles
                )
                counted = servers_needed(load, demand.headroom)
                n = counted + n_plus_1
                if n > max_servers:
                    reason = f"needs {n} servers (max {max_servers})"
                    rejected.append(Rejected(platform, ht, cores, reason, n, basis=basis_id))
                    continue
                cost = priced.server_cost(platform, cores).total
                key = (basis_id, platform, ht)
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
                        else _cap(series, key, "rps", cores, counted),
                        capacity_tps=per_server["tps"] * counted
                        if "tps" in per_server
                        else _cap(series, key, "tps", cores, counted),
                        utilization=load / counted,
                        extrapolated=any(f.source in ("extrapolated", "shape") for f in picked),
                        figures=tuple(picked),
                        basis=basis_id,
                        price_source=price_source,
                    )
                )
            used.extend(s for s in chosen if s is not None and s not in used)
    feasible.sort(key=_rank(allow_extrapolation))
    best = feasible[0] if feasible else None
    used_bases = tuple(by_id[i] for i in dict.fromkeys(s.basis_id for s in used) if i in by_id)
    return Recommendation(
        demand=demand,
        source=_source_of(used),
        cost_basis=catalog.basis,
        currency=catalog.currency,
        recommendation=best,
        alternatives=tuple(feasible[1:]),
        rejected=tuple(rejected),
        series=tuple(used),
        explanation=explain(
            demand, best, feasible[1:], rejected, catalog, max_servers, by_id=by_id, why=why
        ),
        bases=used_bases,
        why=why,
        allow_extrapolation=allow_extrapolation,
    )


def _platform_index(p: str) -> int:
    return PLATFORM_ORDER.index(p) if p in PLATFORM_ORDER else len(PLATFORM_ORDER)


def _cap(
    series: Mapping[tuple[str, str, str, str], Series],
    key: tuple[str, str, str],
    profile: str,
    cores: int,
    counted: int,
) -> float | None:
    s = series.get((*key, profile))
    got = None if s is None else s.estimate(cores)
    return got.conservative * counted if isinstance(got, Figure) else None


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


def _unit(profile: str) -> str:
    return "RPS" if profile == "rps" else "TPS"


def describe_figure(f: Figure) -> str:
    """``capacity 131,000–140,000 RPS (measured; noisy), sized on 131,000`` and kin."""
    unit = _unit(f.profile)
    notes = [f.source, *f.flags]
    if f.source in ("shape", "extrapolated") and f.origin:
        notes[0] = f"{f.source}: {f.origin}"
    tail = f" ({'; '.join(notes)})"
    if f.lower_bound:
        return f"≥{f.value:,.0f} {unit}{tail}, sized on {f.value:,.0f}"
    if f.ci_low is not None and f.ci_high is not None:
        return (
            f"capacity {f.ci_low:,.0f}–{f.ci_high:,.0f} {unit}{tail}, "
            f"sized on {f.conservative:,.0f}"
        )
    return f"{f.value:,.0f} {unit}{tail}"


def explain(
    demand: Demand,
    best: Configuration | None,
    others: Sequence[Configuration],
    rejected: Sequence[Rejected],
    catalog: CostCatalog,
    max_servers: int,
    *,
    by_id: Mapping[str, Basis] | None = None,
    why: str = "",
) -> tuple[str, ...]:
    """The choice in words and numbers: the basis and why, the figures with their
    intervals and flags, the price that applied."""
    cur = catalog.currency
    head = [f"Basis: {why}."] if why else []
    if best is None:
        sized = [r for r in rejected if r.servers_needed is not None]
        if sized:
            r = min(sized, key=lambda r: (r.servers_needed or 0, r.cores_per_server or 0))
            reason = (
                f"the fewest would be {r.servers_needed:,} × {r.platform} "
                f"{r.cores_per_server}-core (HT {r.ht}); raise --max-servers or add larger "
                "servers to the catalog"
            )
        else:
            reason = "; ".join(sorted({r.reason for r in rejected})) or "no figures to size from"
        return (
            *head,
            f"No configuration carries {demand.describe()} within {max_servers} servers: {reason}.",
        )
    lines = list(head)
    basis = (by_id or {}).get(best.basis)
    if basis is not None:
        lines.append(f"Sized on {basis.label()}.")
    elif best.basis:
        lines.append(f"Sized on basis {best.basis}.")
    price = f"; price: {best.price_source}" if best.price_source else ""
    lines.append(
        f"Cheapest: {best.label}, {_money(best.total_cost, cur)} "
        f"({best.servers} × {_money(best.cost_per_server, cur)}; {catalog.basis}{price})."
    )
    lines.append("Per server: " + ", ".join(describe_figure(f) for f in best.figures) + ".")
    shares = []
    for f in best.figures:
        target = demand.rps if f.profile == "rps" else demand.tps
        assert target is not None
        cap = f.conservative * best.counted_servers
        shares.append(
            f"{target:,.0f} {_unit(f.profile)} uses {target / cap * 100:.1f}% of {cap:,.0f}"
        )
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
        lines.append(
            "Some figures are not measured at this core count: they are extrapolated or "
            "scaled with a borrowed shape (see the figures' sources)."
        )
    if others:
        nxt = others[0]
        diff = nxt.total_cost - best.total_cost
        delta = (
            f"+{_money(diff, cur)}"
            if diff >= 0
            else f"{_money(-diff, cur)} less, but not measured at that core count"
        )
        lines.append(f"Next: {nxt.label}, {_money(nxt.total_cost, cur)} ({delta}).")
    return tuple(lines)
