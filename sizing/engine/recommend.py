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

__all__ = [
    "DEFAULT_MAX_SERVERS",
    "MAX_DEMAND",
    "MAX_HEADROOM_PCT",
    "MIN_DEMAND",
    "Configuration",
    "Demand",
    "Fleet",
    "Recommendation",
    "Rejected",
    "cheaper_mix",
    "figure_dict",
    "pricing",
    "recommend",
    "servers_needed",
    "wanted_platforms",
]

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.engine.answer import (
    DEFAULT_MAX_SERVERS,
    MAX_DEMAND,
    MAX_HEADROOM_PCT,
    MIN_DEMAND,
    Configuration,
    Demand,
    Fleet,
    Recommendation,
    Rejected,
    cheaper_mix,
    figure_dict,
)
from sizing.engine.basis import Basis, Price
from sizing.engine.beyond_socket import BEYOND_SOCKET
from sizing.engine.costs import CostCatalog
from sizing.engine.figures import HT_ORDER, PLATFORM_ORDER, build_series
from sizing.engine.fleet import Offer, identical
from sizing.engine.fleets import best_fleet, cheapest_fleet, check_terms, plan_of, sized
from sizing.engine.offers import pick_offers
from sizing.engine.predict import MIN_CLAIM_RUNS, Bootstrapper, quantile, too_few_runs
from sizing.engine.series import Series
from sizing.engine.translate import other_cpu
from sizing.errors import UsageError
from sizing.model import HYPERVISOR_PLATFORMS, Figure, FigureKind, SizingMetric, Source

_EPS = 1e-9  # a demand exactly at capacity fits; float noise must not add a server


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
    named = catalog.label
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
    confidence: float | None = None,
    bootstrapper: Bootstrapper | None = None,
    years: int | None = None,
    growth: float = 0.0,
) -> Recommendation:
    """Rank every configuration the figures and their prices allow; pick the cheapest.

    ``figures`` are those of the chosen bases (:attr:`Choice.figures`); ``bases`` every
    known basis (metadata, prices, and the shapes a short series may borrow). The answer's
    words (the basis' sentence ``why``, what a capacity is ``capacity_of``) are the caller's
    to set on it. ``platforms`` and ``ht_modes`` restrict the
    search (``None``: every one the figures hold). Core counts are the pricing catalog's;
    figures at other core counts are derived or refused (:mod:`sizing.engine.figures`).
    ``max_servers`` (None: no limit) is said in the answer whenever it binds.
    ``confidence`` sizes each server on the 1 − p quantile of its capacity's bootstrap
    draws instead of its interval's low end. ``years`` (None: the catalog's amortisation
    period) prices every cost over that many years, and the answer's :class:`CashFlow`
    spreads the cheapest fleet's over them, the demand growing by ``growth`` a year.
    """
    catalog = _checked(demand, catalog, max_servers, confidence, years, growth)
    by_id = {b.id: b for b in bases}
    series = build_series(
        figures, bases=bases, allow_extrapolation=allow_extrapolation, bootstrapper=bootstrapper
    )
    search = _Search(demand, series, max_servers, confidence, by_id)
    wanted = wanted_platforms(platforms)
    wanted_ht = list(ht_modes) if ht_modes is not None else list(HT_ORDER)
    groups = sorted({(k[0], k[1]) for k in series}, key=lambda g: (_platform_index(g[1]), g[0]))
    search.rejected.extend(_unmeasured(platforms, {g[1] for g in groups}))
    for basis_id, platform in groups:
        if wanted is not None and platform not in wanted:
            continue
        origin = next(s.origin for k, s in series.items() if k[:2] == (basis_id, platform))
        priced, price_source = pricing(
            basis_id, origin, catalog, dict(prices or {}), by_id, article_prices
        )
        for ht in wanted_ht:
            search.group(basis_id, platform, ht, priced, price_source)
    feasible = sorted(search.feasible, key=_rank(allow_extrapolation))
    best = feasible[0] if feasible else None
    fleet = best_fleet(search.fleets, best, allow_extrapolation)
    used = search.used
    plan = plan_of(
        search.groups, max_servers, best, demand, catalog, years, growth, allow_extrapolation
    )
    used_bases = tuple(by_id[i] for i in dict.fromkeys(s.basis_id for s in used) if i in by_id)
    return Recommendation(
        demand=demand,
        source=_source_of(used),
        cost_basis=catalog.basis,
        currency=catalog.currency,
        recommendation=best,
        alternatives=tuple(feasible[1:]),
        rejected=tuple(search.rejected),
        series=tuple(used),
        bases=used_bases,
        allow_extrapolation=allow_extrapolation,
        fleet=fleet,
        confidence_asked=confidence,
        max_servers=max_servers,
        sized_on=by_id.get(best.basis) if best is not None and best.basis else None,
        catalog=catalog,
        cash_flow=plan,
        growth=growth,
        years=years,
    )


def _unmeasured(platforms: Sequence[str] | None, have: set[str]) -> list[Rejected]:
    """The platforms asked for that no figure is of (``hypervisor``: KVM or ESXi)."""
    out = []
    for platform in [] if platforms is None else list(dict.fromkeys(platforms)):
        hv = platform == "hypervisor" and have & {"hypervisor", *HYPERVISOR_PLATFORMS}
        if platform not in have and not hv:
            out.append(Rejected(platform, "any", None, f"no {platform} figures"))
    return out


def _checked(
    demand: Demand,
    catalog: CostCatalog,
    max_servers: int | None,
    confidence: float | None,
    years: int | None,
    growth: float,
) -> CostCatalog:
    """A request that makes no sense is one clear line; the catalog priced over
    ``years`` when asked."""
    demand.validate()
    check_terms(catalog, years, growth)
    if max_servers is not None and max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    if confidence is not None and not (0.5 <= confidence < 1.0):
        raise UsageError(f"--confidence must be at least 0.5 and below 1, not {confidence:g}")
    return catalog if years is None else replace(catalog, amortisation_months=12 * years)


@dataclass
class _Search:
    """Every configuration the figures and prices allow, one basis, platform and HT mode
    at a time: the feasible ones, the refused ones and why, the series used, the cheapest
    fleets (measured only, and with predicted figures)."""

    demand: Demand
    series: Mapping[tuple[str, str, str, str], Series]
    max_servers: int | None
    confidence: float | None
    by_id: Mapping[str, Basis] = field(default_factory=dict)
    feasible: list[Configuration] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    used: list[Series] = field(default_factory=list)
    fleets: list[tuple[bool, Fleet]] = field(default_factory=list)
    # each basis, platform and HT mode's server types and the catalog that priced them
    groups: dict[tuple[str, str, str], tuple[list[Configuration], CostCatalog]] = field(
        default_factory=dict
    )

    def group(
        self, basis_id: str, platform: str, ht: str, priced: CostCatalog | None, price_source: str
    ) -> None:
        demand = self.demand
        chosen = [self.series.get((basis_id, platform, ht, p)) for p in demand.profiles]
        if all(c is None for c in chosen):
            return  # none of the demanded figures at this HT mode: not an option
        if priced is None:
            self.rejected.append(Rejected(platform, ht, None, price_source, basis=basis_id))
            return
        n_plus_1 = 1 if demand.redundancy == "n+1" else 0
        mirrored = demand.redundancy == "2n"
        need = 1.0 / (1.0 - demand.headroom)
        types: list[Configuration] = []
        # one server per core count stands for it; every other is named with why
        priced, passed = pick_offers(priced, platform, self.by_id.get(basis_id))
        for p in passed:
            self.rejected.append(
                Rejected(platform, ht, p.offer.cores, p.reason, basis=basis_id, server=p.offer.name)
            )
        for cores in priced.core_counts():
            other = other_cpu(priced.offer(cores), self.by_id.get(basis_id))
            got = other or _server(demand, chosen, platform, ht, cores, self.confidence)
            if isinstance(got, str):
                name = "" if (o := priced.offer(cores)) is None else o.name
                self.rejected.append(
                    Rejected(platform, ht, cores, got, basis=basis_id, server=name)
                )
                continue
            picked, share, draws = got
            unit = priced.server_cost(platform, cores)
            cost = unit.total
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
                unit_cost=unit,
                offer=priced.offer(cores),
            )
            types.append(one)
            n = identical(Offer(cost, share), need, n_plus_1=bool(n_plus_1), mirrored=mirrored)
            if self.max_servers is not None and n > self.max_servers:
                reason = f"needs {n} servers (max {self.max_servers}, as asked)"
                self.rejected.append(
                    Rejected(platform, ht, cores, reason, n, basis=basis_id, server=one.server_name)
                )
                continue
            whole = priced.fleet_cost(platform, {cores: n})
            self.feasible.append(sized(one, n, share, need, demand, whole))
        self.groups[(basis_id, platform, ht)] = (types, priced)
        for extrapolated in (False, True):
            kinds = types if extrapolated else [t for t in types if not t.extrapolated]
            fl = cheapest_fleet(kinds, demand, need, self.max_servers, priced)
            if fl is not None:
                self.fleets.append((extrapolated, fl))
        self.used.extend(s for s in chosen if s is not None and s not in self.used)


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
        return "; ".join(dict.fromkeys(refusals))  # said once, not once per profile
    picked = [g for g in got if isinstance(g, Figure)]
    if any(f.conservative <= 0.0 for f in picked):
        return "a figure's interval reaches zero: re-measure it"
    load = sum(_target(demand, f.profile) / f.conservative for f in picked)
    per_draw: list[list[float]] = []
    for s in chosen:
        assert s is not None
        d = s.draws(cores)
        # beyond one socket (not measured) no stated confidence rests on a figure
        if d is None or _observed_lower(s, cores) or any(BEYOND_SOCKET in f.flags for f in picked):
            per_draw = []
            break
        per_draw.append(list(d))
    few = too_few_runs([f.reps for f in picked])
    if few:
        per_draw = []  # no confidence is claimed on fewer runs (MIN_CLAIM_RUNS)
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
        if few:
            return (
                f"--confidence needs {MIN_CLAIM_RUNS} or more repetitions per point: "
                f"{few} cannot say how much runs vary"
            )
        if not draws:
            return (
                "--confidence needs repetitions to draw from; these figures have none "
                "(reference data, or a single repetition)"
            )
        # each profile on its own 1 - p quantile (for one profile: the share's quantile;
        # for a mix, no less sure than the joint one)
        q = 1.0 - confidence
        picked = [replace(f, sized=quantile(d, q)) for f, d in zip(picked, per_draw, strict=True)]
        share = 1.0 / sum(_target(demand, f.profile) / f.conservative for f in picked)
    return picked, share, draws


def _observed_lower(s: Series, cores: int) -> bool:
    return any(f.cores == cores and f.lower_bound for f in s.observed)


def _target(demand: Demand, profile: str) -> float:
    v = demand.rps if profile == SizingMetric.RPS else demand.tps
    return v or 0.0


def _platform_index(p: str) -> int:
    return PLATFORM_ORDER.index(p) if p in PLATFORM_ORDER else len(PLATFORM_ORDER)


def _source_of(used: Sequence[Series]) -> str:
    bases = {s.origin for s in used}
    return str(Source.of(bases)) if bases else "none"
