"""A basis' server types as fleets: identical ones, the exact cheapest mix (an order
minimum applied to the whole order, N+1 and 2N), the fleet the answer shows, and the plan
year by year (:mod:`sizing.engine.cashflow`) with the terms it needs (``--years``,
``--growth``). Pure; :mod:`sizing.engine.recommend` searches with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sizing.engine.answer import Configuration, Demand, Fleet
from sizing.engine.cashflow import CashFlow, cash_flow, order_minimums, plan_years, server_share
from sizing.engine.costs import CostBreakdown, CostCatalog
from sizing.engine.fleet import Offer, cheapest
from sizing.engine.fleet import confidence as confidence_of
from sizing.errors import UsageError

__all__ = [
    "MAX_GROWTH",
    "MAX_YEARS",
    "best_fleet",
    "check_terms",
    "cheapest_fleet",
    "plan_of",
    "sized",
]


def sized(
    one: Configuration,
    n: int,
    share: float,
    need: float,
    demand: Demand,
    whole: CostBreakdown,
) -> Configuration:
    """``one`` scaled to ``n`` identical servers (counted: n − 1 under N+1, n / 2 under
    2N), costing ``whole`` (its licence's order minimum applied)."""
    n_plus_1, mirrored = demand.redundancy == "n+1", demand.redundancy == "2n"
    counted = n // 2 if mirrored else n - int(n_plus_1)
    caps = {f.profile: f.conservative for f in one.figures}
    conf = None
    if one.share_draws:
        conf = confidence_of([one.share_draws], [n], need, n_plus_1, mirrored)
    return replace(
        one,
        servers=n,
        counted_servers=counted,
        total_cost=whole.total,
        capacity_rps=caps["rps"] * counted if "rps" in caps else None,
        capacity_tps=caps["tps"] * counted if "tps" in caps else None,
        utilization=1.0 / (share * counted),
        confidence=conf,
        fleet_cost=whole,
    )


def cheapest_fleet(
    types: Sequence[Configuration],
    demand: Demand,
    need: float,
    max_servers: int | None,
    priced: CostCatalog,
) -> Fleet | None:
    """The exact cheapest fleet of these server types (one basis, platform, HT)."""
    if not types:
        return None
    n_plus_1, mirrored = demand.redundancy == "n+1", demand.redundancy == "2n"
    offers = [Offer(t.cost_per_server, server_share(t, demand)) for t in types]
    minimums = order_minimums(priced, types[0].platform, [t.cores_per_server for t in types])
    got = cheapest(offers, need, n_plus_1=n_plus_1, mirrored=mirrored, minimums=minimums)
    if got is None:
        return None
    counts = got.counts
    if max_servers is not None and sum(counts) > max_servers:
        return None
    parts = tuple((t, x) for t, x in zip(types, counts, strict=True) if x > 0)
    carried = sum(o.share * x for o, x in zip(offers, counts, strict=True))
    if n_plus_1:
        carried -= max(o.share for o, x in zip(offers, counts, strict=True) if x > 0)
    if mirrored:
        carried /= 2.0
    conf = None
    if all(t.share_draws for t, _ in parts):  # only the types used are drawn from
        conf = confidence_of([t.share_draws for t in types], counts, need, n_plus_1, mirrored)
    whole = priced.fleet_cost(types[0].platform, {t.cores_per_server: x for t, x in parts})
    return Fleet(parts, whole.total, 1.0 / carried, conf, gap=got.gap, cost=whole)


def best_fleet(
    fleets: Sequence[tuple[bool, Fleet]], best: Configuration | None, allow: bool
) -> Fleet | None:
    """The cheapest fleet of the same kind as the answer: measured core counts only
    unless the answer itself extrapolates or extrapolation is allowed. Among fleets of
    the same cost and size, the answer's own kind (basis, platform, HT mode) first: one
    fleet is never "HT on" in the headline and "HT off" in the comparison."""
    if best is None:
        return None
    loose = allow or best.extrapolated
    pool = [f for ext, f in fleets if ext == loose]
    if not pool:
        return None
    mine = (best.basis, best.platform, best.ht)

    def key(f: Fleet) -> tuple[float, int, bool]:
        first = f.parts[0][0]
        return (round(f.total_cost, 6), f.servers, (first.basis, first.platform, first.ht) != mine)

    return min(pool, key=key)


MAX_YEARS = 20
MAX_GROWTH = 10.0  # 1,000% a year: beyond it a typo, not a forecast


def check_terms(catalog: CostCatalog, years: int | None, growth: float) -> None:
    """``--years`` and ``--growth`` make sense with this catalog, or one clear line."""
    if years is not None and not (1 <= years <= MAX_YEARS):
        raise UsageError(f"--years must be a whole number from 1 to {MAX_YEARS}, not {years}")
    if not (0.0 <= growth <= MAX_GROWTH):
        raise UsageError(
            f"--growth must be between 0% and {MAX_GROWTH * 100:,.0f}% a year, not "
            f"{growth * 100:g}%"
        )
    if growth and plan_years(catalog, years) is None:
        raise UsageError(
            "--growth needs a period of whole years: give --years N (or amortisation_months "
            "in the catalog, a multiple of 12)"
        )


def plan_of(
    groups: Mapping[tuple[str, str, str], tuple[list[Configuration], CostCatalog]],
    max_servers: int | None,
    best: Configuration | None,
    demand: Demand,
    catalog: CostCatalog,
    years: int | None,
    growth: float,
    allow: bool,
) -> CashFlow | None:
    """The year-by-year plan of the answer's basis, platform and HT mode (its server
    types of the same kind as the answer: measured unless it extrapolates)."""
    span = plan_years(catalog, years)
    if best is None or span is None:
        return None
    types, priced = groups[(best.basis, best.platform, best.ht)]
    loose = allow or best.extrapolated
    kinds = types if loose else [t for t in types if not t.extrapolated]
    return cash_flow(kinds, priced, demand, years=span, growth=growth, max_servers=max_servers)
