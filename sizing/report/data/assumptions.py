"""The proposal's assumptions table: every price, licence term, wattage, hour count, power
rate, support share, period, discount, growth and exchange rate a cost rests on, each with
its source. Pure.

The table is made by a list of row builders (:data:`ROWS`), each a function of one
:class:`AssumptionInputs` returning rows: a new commercial term (a discount, growth, an
exchange rate) is one more builder, or a change to the one that says it is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sizing.engine import Demand, Recommendation
from sizing.engine.costs import HOURS_PER_MONTH, NEVER_PRICED, CostCatalog, Licence
from sizing.report.data.format import PLATFORM_LABELS, money
from sizing.report.data.model import TableBlock, TCell

__all__ = ["ROWS", "Assumption", "AssumptionInputs", "assumptions", "assumptions_table"]


@dataclass(frozen=True)
class Assumption:
    """One line of the table: what is assumed, its value, and where it comes from."""

    item: str
    value: str
    source: str


@dataclass(frozen=True)
class AssumptionInputs:
    """What the rows are read from: the catalog, the demand asked for (None: none given),
    the answer, and where the capacity figures come from, in words."""

    catalog: CostCatalog
    demand: Demand | None
    result: Recommendation | None
    figures_from: str  # "measured with sizing run on r640-01 (run 1)", or the citation

    prices_from: str = "price list"  # a source cell; the table's note cites it in full

    def citation(self) -> str:
        """The price list in full: its name, source and date, those it has."""
        c = self.catalog
        parts = [c.name or "the cost catalog"] + [p for p in (c.source, c.date) if p]
        return ", ".join(dict.fromkeys(parts))


Row = Callable[[AssumptionInputs], Sequence[Assumption]]
YOUR_REQUEST = "your request"


def _demand(a: AssumptionInputs) -> list[Assumption]:
    d = a.demand
    if d is None:
        return []
    what = " + ".join(
        f"{v:,.0f} {u}"
        for v, u in ((d.rps, "requests/s"), (d.tps, "TLS handshakes/s"))
        if v is not None
    )
    spare = (
        "N+1: the demand is carried with one server down"
        if d.redundancy == "n+1"
        else "none: every server is counted on"
    )
    return [
        Assumption("Demand", what, YOUR_REQUEST),
        Assumption("Headroom", f"{d.headroom * 100:g}% of capacity kept free", YOUR_REQUEST),
        Assumption("Redundancy", spare, YOUR_REQUEST),
        Assumption("Growth", "none: the demand is the same every year", YOUR_REQUEST),
    ]


def _capacity(a: AssumptionInputs) -> list[Assumption]:
    return [
        Assumption(
            "Capacity of one server",
            "the low end of its figure's interval, for its core count and platform",
            a.figures_from,
        )
    ]


def _servers(a: AssumptionInputs) -> list[Assumption]:
    c = a.catalog
    out = []
    for s in sorted(c.servers, key=lambda s: s.cores):
        sockets = f"{s.sockets} × {s.cores // s.sockets}" if s.sockets > 1 else f"{s.cores}"
        watts = f", {s.watts:g} W at load" if s.watts is not None else ", power draw not stated"
        name = s.name or f"{s.cores}-core server"
        out.append(
            Assumption(
                f"Server: {name}",
                f"{sockets} cores, {money(s.price, c.currency)}{watts}",
                a.prices_from,
            )
        )
    used = a.result.recommendation if a.result is not None else None
    if used is not None and used.price_source and "catalog" not in used.price_source:
        out.append(
            Assumption("Server price of the answer", "as the inventory declares", used.price_source)
        )
    return out


def licence_terms(lic: Licence, currency: str) -> str:
    """``$135 per core a year, at least 16 cores per CPU``: a licence's terms in words."""
    term = "a year" if lic.term == "yearly" else "once"
    text = f"{money(lic.price, currency)} per {lic.per} {term}"
    if lic.per == "core" and lic.min_cores_per_socket:
        text += f", at least {lic.min_cores_per_socket} cores per CPU socket"
    return text


def _licences(a: AssumptionInputs) -> list[Assumption]:
    c = a.catalog
    out = [
        Assumption(
            f"Licence: {PLATFORM_LABELS.get(key, key)}",
            licence_terms(lic, c.currency),
            a.prices_from,
        )
        for key, lic in sorted(c.licences.items())
    ]
    out.append(Assumption("Licence: bare metal", "none: no hypervisor to license", "bare metal"))
    return out


def _running(a: AssumptionInputs) -> list[Assumption]:
    c = a.catalog
    months = c.amortisation_months
    if not months:
        return [
            Assumption(
                "Period",
                "none: costs are the one-off hardware price (no support, power or licence "
                "terms over time)",
                a.prices_from,
            )
        ]
    out = [Assumption("Period", f"{months} months ({months / 12:g} years)", a.prices_from)]
    if c.support is not None:
        share = c.support.share_of_hardware_per_year * 100
        out.append(Assumption("Support", f"{share:g}% of the hardware price a year", a.prices_from))
    else:
        out.append(Assumption("Support", "not priced", a.prices_from))
    if c.price_per_kwh is not None:
        out += [
            Assumption(
                "Power rate",
                f"{money(c.price_per_kwh, c.currency, cents=True)} per kWh",
                a.prices_from,
            ),
            Assumption(
                "Hours powered",
                f"{HOURS_PER_MONTH:,.0f} hours a month (24 hours a day, every day), "
                f"{HOURS_PER_MONTH * months:,.0f} hours over the period, at each server's "
                "stated wattage",
                "sizing's rule: servers run all the time",
            ),
        ]
    else:
        out.append(Assumption("Power", "not priced", a.prices_from))
    return out


def _money_terms(a: AssumptionInputs) -> list[Assumption]:
    c = a.catalog
    return [
        Assumption("Discount", "none: list prices", a.prices_from),
        Assumption(
            "Currency", f"every amount in {c.currency}; no exchange rate applied", a.prices_from
        ),
        Assumption("Not priced", NEVER_PRICED, "no catalog prices them"),
    ]


# The table's rows, top to bottom; a new term is one more builder here.
ROWS: list[Row] = [_demand, _capacity, _servers, _licences, _running, _money_terms]


def assumptions(a: AssumptionInputs) -> tuple[Assumption, ...]:
    """Every assumption, in the order of :data:`ROWS`."""
    return tuple(x for row in ROWS for x in row(a))


def assumptions_table(a: AssumptionInputs) -> TableBlock:
    """The assumptions as the guide prints them."""
    return TableBlock(
        title="Assumptions and their sources",
        headers=("Assumption", "Value", "Source"),
        rows=tuple(
            (TCell(x.item, "", False), TCell(x.value, "", False), TCell(x.source, "", False))
            for x in assumptions(a)
        ),
        notes=(f"Price list: {a.citation()}.",),
    )
