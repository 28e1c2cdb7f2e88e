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
figures' conservative ends (:attr:`Figure.conservative`, the low end of the figure's
interval: of the median for a measured figure, with its coverage; the bootstrap prediction
interval for a predicted one),
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
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.engine.basis import Basis, Price
from sizing.engine.costs import CostCatalog
from sizing.engine.figures import HT_ORDER, PLATFORM_ORDER, Series, build_series
from sizing.engine.fleet import Offer, cheapest, identical
from sizing.engine.fleet import confidence as confidence_of
from sizing.engine.predict import quantile
from sizing.errors import UsageError
from sizing.model import HYPERVISOR_PLATFORMS, Figure, FigureKind, Source

MAX_HEADROOM_PCT = 90.0
MIN_DEMAND = 1.0  # a demand under one request (handshake) per second sizes nothing
MAX_DEMAND = 1e12  # far beyond any fleet: a larger number is a typo, not a demand
DEFAULT_MAX_SERVERS: int | None = None  # no hidden cap: a limit is asked for, and said
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
    confidence: float | None = None  # share of the bootstrap draws in which it carries
    share_draws: tuple[float, ...] = ()  # draws of one server's share of the demand

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
            "confidence": None if self.confidence is None else round(self.confidence, 4),
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

    @property
    def servers(self) -> int:
        return sum(n for _, n in self.parts)

    @property
    def mixed(self) -> bool:
        return len(self.parts) > 1

    @property
    def label(self) -> str:
        first = self.parts[0][0]
        body = " + ".join(f"{n} × {c.cores_per_server}-core" for c, n in self.parts)
        return f"{body} {first.platform} (HT {first.ht})"

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
                }
                for c, n in self.parts
            ],
            "total_cost": round(self.total_cost, 2),
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
    bases: tuple[Basis, ...] = ()
    why: str = ""
    allow_extrapolation: bool = False
    fleet: Fleet | None = None  # the cheapest fleet, identical or mixed
    confidence_asked: float | None = None
    max_servers: int | None = None  # the cap asked for (said when it binds)
    sized_on: Basis | None = None  # the basis of the cheapest configuration
    capacity_of: str = "their CPU"  # what a server's capacity is of (the answer says it)

    @property
    def cheaper_mix(self) -> Fleet | None:
        """The cheapest fleet when it mixes server sizes and beats the identical one."""
        return cheaper_mix(self.fleet, self.recommendation)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cheapest_fleet": None if self.fleet is None else self.fleet.to_dict(),
            "confidence_asked": self.confidence_asked,
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
        }


def cheaper_mix(fleet: Fleet | None, best: Configuration | None) -> Fleet | None:
    """``fleet`` when it mixes server sizes and costs less than ``best``, the cheapest
    identical fleet (by more than a rounding cent); else None."""
    if fleet is None or best is None or not fleet.mixed:
        return None
    return fleet if fleet.total_cost < best.total_cost - 0.005 else None


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
    ref = FigureKind.REFERENCE
    if not basis_id or origin == ref or (b is not None and b.origin == ref):
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
    max_servers: int | None = None,
    bases: Sequence[Basis] = (),
    prices: Mapping[str, Price] | None = None,
    article_prices: bool = False,
    allow_extrapolation: bool = False,
    why: str = "",
    confidence: float | None = None,
    bootstrapper: Any = None,
    capacity_of: str = "their CPU",
) -> Recommendation:
    """Rank every configuration the figures and their prices allow; pick the cheapest.

    ``figures`` are those of the chosen bases (:attr:`Choice.figures`); ``bases`` every
    known basis (metadata, prices, and the shapes a short series may borrow); ``why`` the
    choice's sentence for the explanation. ``platforms`` and ``ht_modes`` restrict the
    search (``None``: every one the figures hold). Core counts are the pricing catalog's;
    figures at other core counts are derived or refused (:mod:`sizing.engine.figures`).
    ``max_servers`` (None: no limit) is said in the answer whenever it binds.
    ``confidence`` sizes each server on the 1 − p quantile of its capacity's bootstrap
    draws instead of its interval's low end.
    """
    demand.validate()
    if max_servers is not None and max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    if confidence is not None and not (0.5 <= confidence < 1.0):
        raise UsageError(f"--confidence must be at least 0.5 and below 1, not {confidence:g}")
    by_id = {b.id: b for b in bases}
    price_map = dict(prices or {})
    series = build_series(
        figures, bases=bases, allow_extrapolation=allow_extrapolation, bootstrapper=bootstrapper
    )
    n_plus_1 = 1 if demand.redundancy == "n+1" else 0
    need = 1.0 / (1.0 - demand.headroom)
    wanted = wanted_platforms(platforms)
    wanted_ht = list(ht_modes) if ht_modes is not None else list(HT_ORDER)
    groups = sorted({(k[0], k[1]) for k in series}, key=lambda g: (_platform_index(g[1]), g[0]))

    feasible: list[Configuration] = []
    rejected: list[Rejected] = []
    used: list[Series] = []
    fleets: list[tuple[bool, Fleet]] = []
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
            if all(c is None for c in chosen):
                continue  # none of the demanded figures at this HT mode: not an option
            if priced is None:
                rejected.append(Rejected(platform, ht, None, price_source, basis=basis_id))
                continue
            types: list[Configuration] = []
            for cores in priced.core_counts():
                got = _server(demand, chosen, platform, ht, cores, confidence)
                if isinstance(got, str):
                    rejected.append(Rejected(platform, ht, cores, got, basis=basis_id))
                    continue
                picked, share, draws = got
                cost = priced.server_cost(platform, cores).total
                one = Configuration(
                    platform=platform,
                    ht=ht,
                    cores_per_server=cores,
                    servers=1,
                    counted_servers=1,
                    cost_per_server=cost,
                    total_cost=cost,
                    capacity_rps=None,
                    capacity_tps=None,
                    utilization=0.0,
                    extrapolated=any(
                        f.source in (FigureKind.EXTRAPOLATED, FigureKind.SHAPE) for f in picked
                    ),
                    figures=tuple(picked),
                    basis=basis_id,
                    price_source=price_source,
                    share_draws=draws,
                )
                types.append(one)
                n = identical(Offer(cost, share), need, n_plus_1=bool(n_plus_1))
                if max_servers is not None and n > max_servers:
                    reason = f"needs {n} servers (max {max_servers}, as asked)"
                    rejected.append(Rejected(platform, ht, cores, reason, n, basis=basis_id))
                    continue
                feasible.append(_sized(one, n, n_plus_1, share, need, demand))
            for extrapolated in (False, True):
                kinds = types if extrapolated else [t for t in types if not t.extrapolated]
                fl = _fleet(kinds, demand, need, bool(n_plus_1), max_servers)
                if fl is not None:
                    fleets.append((extrapolated, fl))
            used.extend(s for s in chosen if s is not None and s not in used)
    feasible.sort(key=_rank(allow_extrapolation))
    best = feasible[0] if feasible else None
    fleet = _best_fleet(fleets, best, allow_extrapolation)
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
        bases=used_bases,
        why=why,
        allow_extrapolation=allow_extrapolation,
        fleet=fleet,
        confidence_asked=confidence,
        max_servers=max_servers,
        sized_on=by_id.get(best.basis) if best is not None and best.basis else None,
        capacity_of=capacity_of,
    )


def _server(
    demand: Demand,
    chosen: Sequence[Series | None],
    platform: str,
    ht: str,
    cores: int,
    confidence: float | None,
) -> tuple[list[Figure], float, tuple[float, ...]] | str:
    """One server of a type: its figures, the share of the demand it carries at 100%
    (sized on its figures' low ends, or on the 1 − p quantile of its draws), and the
    draws of that share (empty without repetitions); or why it cannot be sized."""
    missing = [p for p, s in zip(demand.profiles, chosen, strict=True) if s is None]
    if missing:
        return f"no {platform} {'/'.join(missing).upper()} figures, HT {ht}"
    got = [s.estimate(cores) for s in chosen if s is not None]
    refusals = [g for g in got if isinstance(g, str)]
    if refusals:
        return "; ".join(refusals)
    picked = [g for g in got if isinstance(g, Figure)]
    if any(f.conservative <= 0.0 for f in picked):
        return "a figure's interval reaches zero: re-measure it"
    load = sum(_target(demand, f.profile) / f.conservative for f in picked)
    per_draw: list[list[float]] = []
    for s in chosen:
        assert s is not None
        d = s.draws(cores)
        if d is None or _observed_lower(s, cores):
            per_draw = []
            break
        per_draw.append(list(d))
    draws: tuple[float, ...] = ()
    if per_draw:
        n = min(len(d) for d in per_draw)
        profiles = [s.profile for s in chosen if s is not None]
        draws = tuple(
            1.0
            / sum(
                _target(demand, p) / max(d[b], 1e-12)
                for p, d in zip(profiles, per_draw, strict=True)
            )
            for b in range(n)
        )
    share = 1.0 / load
    if confidence is not None:
        if not draws:
            return (
                "--confidence needs repetitions to draw from; these figures have none "
                "(reference data, or a single repetition)"
            )
        # each profile on its own 1 - p quantile (for one profile: the share's quantile;
        # for a mix, no less sure than the joint one)
        q = 1.0 - confidence
        picked = [
            replace(f, sized=quantile(d, q)) for f, d in zip(picked, per_draw, strict=True)
        ]
        share = 1.0 / sum(_target(demand, f.profile) / f.conservative for f in picked)
    return picked, share, draws


def _observed_lower(s: Series, cores: int) -> bool:
    return any(f.cores == cores and f.lower_bound for f in s.observed)


def _target(demand: Demand, profile: str) -> float:
    v = demand.rps if profile == "rps" else demand.tps
    return v or 0.0


def _sized(
    one: Configuration, n: int, n_plus_1: int, share: float, need: float, demand: Demand
) -> Configuration:
    """``one`` scaled to ``n`` identical servers (counted: n − 1 under N+1)."""
    counted = n - n_plus_1
    caps = {f.profile: f.conservative for f in one.figures}
    conf = None
    if one.share_draws:
        conf = confidence_of([one.share_draws], [n], need, bool(n_plus_1))
    return replace(
        one,
        servers=n,
        counted_servers=counted,
        total_cost=one.cost_per_server * n,
        capacity_rps=caps["rps"] * counted if "rps" in caps else None,
        capacity_tps=caps["tps"] * counted if "tps" in caps else None,
        utilization=1.0 / (share * counted),
        confidence=conf,
    )


def _fleet(
    types: Sequence[Configuration],
    demand: Demand,
    need: float,
    n_plus_1: bool,
    max_servers: int | None,
) -> Fleet | None:
    """The exact cheapest fleet of these server types (one basis, platform, HT)."""
    if not types:
        return None
    offers = []
    for t in types:
        # the figures' conservative ends: their --confidence quantile when one was asked
        load = sum(_target(demand, f.profile) / f.conservative for f in t.figures)
        offers.append(Offer(t.cost_per_server, 1.0 / load))
    got = cheapest(offers, need, n_plus_1=n_plus_1)
    if got is None:
        return None
    cost, counts = got.cost, got.counts
    if max_servers is not None and sum(counts) > max_servers:
        return None
    parts = tuple((t, x) for t, x in zip(types, counts, strict=True) if x > 0)
    carried = sum(o.share * x for o, x in zip(offers, counts, strict=True))
    if n_plus_1:
        carried -= max(o.share for o, x in zip(offers, counts, strict=True) if x > 0)
    conf = None
    if all(t.share_draws for t, _ in parts):  # only the types used are drawn from
        conf = confidence_of([t.share_draws for t in types], counts, need, n_plus_1)
    return Fleet(parts, cost, 1.0 / carried, conf, gap=got.gap)


def _best_fleet(
    fleets: Sequence[tuple[bool, Fleet]], best: Configuration | None, allow: bool
) -> Fleet | None:
    """The cheapest fleet of the same kind as the answer: measured core counts only
    unless the answer itself extrapolates or extrapolation is allowed."""
    if best is None:
        return None
    loose = allow or best.extrapolated
    pool = [f for ext, f in fleets if ext == loose]
    if not pool:
        return None
    return min(pool, key=lambda f: (round(f.total_cost, 6), f.servers))


def _platform_index(p: str) -> int:
    return PLATFORM_ORDER.index(p) if p in PLATFORM_ORDER else len(PLATFORM_ORDER)


def _source_of(used: Sequence[Series]) -> str:
    bases = {s.basis for s in used}
    return str(Source.of(bases)) if bases else "none"
