"""Year by year: what a fleet costs each year, and what to buy when the demand grows. Pure.

Over a period of whole years (``--years``, else the catalog's ``amortisation_months`` when
it is whole years) the cheapest fleet's cost is spread over the years it is paid in: the
hardware when a server is bought, a once-paid licence with the servers it licenses, a
yearly licence, support and power every year a server is in service. With ``--growth g``
the demand of year y is the first year's times (1 + g)^(y − 1): the fleet is bought for
year 1, and each later year adds the cheapest servers that carry that year's demand with
the fleet already bought (exact, :func:`sizing.engine.fleet.cheapest` with the fleet
fixed; an addition is priced over the years it still serves). Each year is exact; the
plan as a whole is the rule "buy for year 1, add when needed", not a search over every
plan of the period. The rows' totals add up to the plan's total (a test says so).

Under 2N a purchase is a pair (each server and its twin); under N+1 the largest server in
the fleet is the one lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sizing.engine.answer import Configuration, Demand
from sizing.engine.costs import HOURS_PER_MONTH, CostCatalog
from sizing.engine.fleet import Minimum, Offer, cheapest
from sizing.engine.yearly import CashFlow, YearRow

__all__ = ["CashFlow", "YearRow", "cash_flow", "order_minimums", "plan_years"]

HOURS_PER_YEAR = HOURS_PER_MONTH * 12


def plan_years(catalog: CostCatalog, years: int | None) -> int | None:
    """The plan's whole years: ``years`` when asked, else the catalog's amortisation
    period when it is whole years; None: no plan."""
    if years is not None:
        return years
    months = catalog.amortisation_months
    return months // 12 if months and months % 12 == 0 else None


def order_minimums(
    catalog: CostCatalog, platform: str, cores: Sequence[int], *, have: Sequence[int] = ()
) -> list[Minimum]:
    """One order minimum per licence line of ``platform`` that has one, for server types of
    these core counts, priced over the catalog's period (empty without any). ``have``: the
    fleet already bought (counts per type), whose units a once-paid line's next order does
    not count."""
    per_type = [catalog.licence_units(platform, c) for c in cores]
    out = []
    for i, (_, lic) in enumerate(catalog.licence_lines(platform)):
        if not lic.min_per_order:
            continue
        units = tuple(float(u[i]) for u in per_type)
        already = sum(u * x for u, x in zip(units, have, strict=False))
        least = float(lic.min_per_order) + (already if lic.term == "once" else 0.0)
        out.append(Minimum(lic.price * lic.terms(catalog.amortisation_months), units, least))
    return out


def cash_flow(
    types: Sequence[Configuration],
    catalog: CostCatalog,
    demand: Demand,
    *,
    years: int,
    growth: float = 0.0,
    max_servers: int | None = None,
) -> CashFlow | None:
    """The plan of these server types (one basis, platform, HT) over ``years``, the
    demand growing by ``growth`` a year; None when no fleet of them carries year 1."""
    if not types:
        return None
    first = types[0]
    platform = first.platform
    n_plus_1, mirrored = demand.redundancy == "n+1", demand.redundancy == "2n"
    need = 1.0 / (1.0 - demand.headroom)
    shares = [server_share(t, demand) for t in types]
    cores = [t.cores_per_server for t in types]
    have = [0] * len(types)
    rows: list[YearRow] = []
    note = ""
    for year in range(1, years + 1):
        scale = (1.0 + growth) ** (year - 1)
        left = replace(catalog, amortisation_months=12 * (years - year + 1))
        offers = [
            Offer(left.server_cost(platform, c).total, s / scale)
            for c, s in zip(cores, shares, strict=True)
        ]
        mins = order_minimums(left, platform, cores, have=have)
        got = cheapest(
            offers, need, n_plus_1=n_plus_1, mirrored=mirrored, minimums=mins, fixed=have
        )
        if got is None:
            return None if year == 1 else _plan(first, years, growth, rows, catalog, note)
        added = list(got.counts)
        if max_servers is not None and sum(have) + sum(added) > max_servers:
            if year == 1:
                return None
            note = (
                f"year {year} needs {sum(have) + sum(added)} servers, more than --max-servers "
                f"{max_servers}: the plan stops at year {year - 1}"
            )
            break
        have = [h + a for h, a in zip(have, added, strict=True)]
        rows.append(_row(year, scale, demand, types, offers, catalog, have, added))
    return _plan(first, years, growth, rows, catalog, note)


def _plan(
    first: Configuration,
    years: int,
    growth: float,
    rows: Sequence[YearRow],
    catalog: CostCatalog,
    note: str,
) -> CashFlow:
    return CashFlow(
        first.platform, first.ht, first.basis, years, growth, tuple(rows), catalog.currency, note
    )


def _row(
    year: int,
    scale: float,
    demand: Demand,
    types: Sequence[Configuration],
    offers: Sequence[Offer],
    catalog: CostCatalog,
    have: Sequence[int],
    added: Sequence[int],
) -> YearRow:
    """What year ``year`` pays: the hardware bought, the licences (yearly: the fleet's;
    once: the servers bought, each order's minimum applied), support and power of the
    fleet in service."""
    platform = types[0].platform
    fleet = {t.cores_per_server: x for t, x in zip(types, have, strict=True) if x}
    bought = {t.cores_per_server: x for t, x in zip(types, added, strict=True) if x}
    hardware = sum(_offer(catalog, c).price * x for c, x in bought.items())
    licences = _licences_paid(catalog, platform, fleet, bought)
    support = 0.0
    if catalog.support is not None:
        share = catalog.support.share_of_hardware_per_year
        support = share * sum(_offer(catalog, c).price * x for c, x in fleet.items())
    power = 0.0
    if catalog.price_per_kwh is not None:
        watts = sum((_offer(catalog, c).watts or 0.0) * x for c, x in fleet.items())
        power = watts / 1000.0 * HOURS_PER_YEAR * catalog.price_per_kwh
    carried = sum(o.share * x for o, x in zip(offers, have, strict=True))
    if demand.redundancy == "n+1":
        carried -= max(o.share for o, x in zip(offers, have, strict=True) if x)
    elif demand.redundancy == "2n":
        carried /= 2.0
    return YearRow(
        year=year,
        rps=None if demand.rps is None else demand.rps * scale,
        tps=None if demand.tps is None else demand.tps * scale,
        bought=_labelled(types, added),
        fleet=_labelled(types, have),
        hardware=hardware,
        licence=sum(c for _, c in licences),
        support=support,
        power=power,
        utilization=1.0 / carried if carried > 0 else 0.0,
        licences=licences,
    )


def _licences_paid(
    catalog: CostCatalog, platform: str, fleet: Mapping[int, int], bought: Mapping[int, int]
) -> tuple[tuple[str, float], ...]:
    """What each licence line is paid this year, by name: a yearly line for the fleet in
    service, a once-paid one for the servers bought; each order's minimum applied."""
    out = []
    for i, (key, lic) in enumerate(catalog.licence_lines(platform)):
        counted = fleet if lic.term == "yearly" else bought
        units = sum(catalog.licence_units(platform, c)[i] * x for c, x in counted.items())
        out.append((lic.called(key), lic.price * max(units, lic.min_per_order) if units else 0.0))
    return tuple(out)


def _offer(catalog: CostCatalog, cores: int) -> Any:
    got = catalog.offer(cores)
    assert got is not None  # the types are the catalog's own
    return got


def _labelled(types: Sequence[Configuration], counts: Sequence[int]) -> tuple[tuple[str, int], ...]:
    return tuple(
        (t.offer.label() if t.offer is not None else f"{t.cores_per_server}-core", x)
        for t, x in zip(types, counts, strict=True)
        if x
    )


def server_share(t: Configuration, demand: Demand) -> float:
    """The share of the demand one server of type ``t`` carries at 100% (on its figures'
    conservative ends: their --confidence quantile when one was asked)."""
    load = 0.0
    for f in t.figures:
        target = demand.rps if f.profile == "rps" else demand.tps
        load += (target or 0.0) / f.conservative
    return 1.0 / load
