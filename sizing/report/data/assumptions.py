"""Every commercial assumption an answer's costs rest on, each with its source: the prices
of the servers and licences (list price, discount, currency and rate), the licence terms,
the wattages and hours, the power rate, the support share, the period, the growth and the
demand's headroom and redundancy. The terminal, ``--json`` and the guide list the same
rows (:func:`assumptions`); the source is the catalog line's ``source:``, else the
catalog's, or the option that set it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.engine.answer import Recommendation
from sizing.engine.costs import HOURS_PER_MONTH, NEVER_PRICED, CostCatalog, Licence, ServerOffer
from sizing.engine.licences import EVERY_PLATFORM, lines_of, unit_words
from sizing.report.data.format import PLATFORM_LABELS, amount

__all__ = ["AssumptionRow", "assumptions", "catalog_assumptions", "licence_terms"]


@dataclass(frozen=True)
class AssumptionRow:
    """One row: what is assumed, its value in words, and where it comes from."""

    item: str
    value: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "value": self.value, "source": self.source}


def _pct(share: float) -> str:
    return f"{share * 100:g}%"


def _server(o: ServerOffer, cur: str) -> str:
    price = amount(o.price, cur)
    if o.discount and o.list_price is not None:
        price = f"{amount(o.list_price, cur)} list, {_pct(o.discount)} off: {price}"
    watts = "" if o.watts is None else f"; {o.watts:g} W at load"
    return f"{price}{watts}"


def licence_terms(lic: Licence, cur: str) -> str:
    """``$135 per core a year, at least 16 cores per CPU, at least 72 cores an order``; in
    its own currency with the rate and what it comes to, and its discount."""
    term = "a year" if lic.term == "yearly" else "once"
    own = lic.currency or cur
    listed = lic.list_price if lic.list_price is not None else lic.price
    text = f"{amount(listed, own)} per {unit_words(lic.per)} {term}"
    if lic.min_cores_per_socket and lic.per == "core":
        text += f", at least {lic.min_cores_per_socket} cores per CPU"
    if lic.min_per_order:
        text += f", at least {lic.min_per_order} {unit_words(lic.per, lic.min_per_order)} an order"
    if lic.discount:
        text += f", {_pct(lic.discount)} off"
    if own != cur or lic.discount:
        text += f": {amount(lic.price, cur)} per {unit_words(lic.per)} {term}"
        if own != cur:
            text += f" at 1 {own} = {lic.rate:g} {cur}"
    return text


def _licence_item(key: str, lic: Licence) -> str:
    """``ESXi licence``; a named line ``vSphere Foundation (ESXi licence)``, ``NGINX Plus
    (every platform's licence)``."""
    where = (
        "every platform's licence"
        if key == EVERY_PLATFORM
        else f"{PLATFORM_LABELS.get(key, key)} licence"
    )
    return f"{lic.name} ({where})" if lic.name else where[0].upper() + where[1:]


def assumptions(result: Recommendation) -> tuple[AssumptionRow, ...]:
    """Every assumption the answer's costs rest on, in the order a CFO reads them."""
    cat = result.catalog
    out: list[AssumptionRow] = []
    if cat is not None:
        out += _catalog_rows(cat, result.years)
    out += [
        AssumptionRow(
            f"{a.platform.upper() if a.platform == 'kvm' else 'ESXi'} guest share",
            f"{a.value * 100:g}% of bare metal's figures, per core count (not measured)"
            + ("" if a.used else f"; not used: {a.note}"),
            a.source,
        )
        for a in result.assumptions
    ]
    out += _demand_rows(result)
    return tuple(out)


def catalog_assumptions(cat: CostCatalog) -> tuple[AssumptionRow, ...]:
    """The catalog's rows alone, for a guide asked no demand (no answer to read)."""
    return tuple(_catalog_rows(cat, None))


def _catalog_rows(cat: CostCatalog, years: int | None) -> list[AssumptionRow]:
    cur, named = cat.currency, cat.label
    rows = [
        AssumptionRow(
            f"{o.name or 'server'} ({o.sockets} × {o.cores // max(o.sockets, 1)} cores)",
            _server(o, cur),
            o.source or named,
        )
        for o in sorted(cat.servers, key=lambda o: o.cores)
    ]
    for key, entry in sorted(cat.licences.items(), key=lambda kv: kv[0] == EVERY_PLATFORM):
        for lic in lines_of(entry):
            rows.append(
                AssumptionRow(_licence_item(key, lic), licence_terms(lic, cur), lic.source or named)
            )
    if not cat.own_licence_key("baremetal"):
        every = [lic.called(k) for k, lic in cat.licence_lines("baremetal")]
        value = "no hypervisor licence" + (f"; pays {' + '.join(every)}" if every else "")
        rows.append(AssumptionRow("Bare metal licence", value, "bare metal runs none"))
    for code, (rate, source) in sorted(cat.exchange_rates.items()):
        rows.append(AssumptionRow("Exchange rate", f"1 {code} = {rate:g} {cur}", source or named))
    if cat.discount:
        rows.append(
            AssumptionRow("Discount", f"{_pct(cat.discount)} off every line without its own", named)
        )
    months = cat.amortisation_months
    if months:
        how = f"--years {years}" if years is not None else f"catalog amortisation_months {months}"
        rows.append(AssumptionRow("Period", f"{months} months ({months / 12:g} years)", how))
    if cat.price_per_kwh is not None:
        rows.append(
            AssumptionRow(
                "Power",
                f"{cat.price_per_kwh:g} {cur} per kWh; each server at its stated load "
                f"wattage {HOURS_PER_MONTH * 12:,.0f} hours a year",
                cat.sources.get("power") or named,
            )
        )
    if cat.support is not None:
        rows.append(
            AssumptionRow(
                "Support",
                f"{_pct(cat.support.share_of_hardware_per_year)} of the hardware price a year",
                cat.sources.get("support") or named,
            )
        )
    rows.append(AssumptionRow("Not priced", NEVER_PRICED, "no catalog prices them"))
    return rows


def _demand_rows(result: Recommendation) -> list[AssumptionRow]:
    d = result.demand
    rule = {"none": "none", "n+1": "N+1", "2n": "2N (HA pairs)"}.get(d.redundancy, d.redundancy)
    rows = [
        AssumptionRow("Headroom", f"{d.headroom * 100:g}% of capacity kept free", "--headroom"),
        AssumptionRow("Redundancy", rule, "--redundancy"),
    ]
    if result.growth:
        rows.append(
            AssumptionRow(
                "Growth",
                f"{result.growth * 100:g}% a year (servers added in the year they are needed)",
                "--growth",
            )
        )
    return rows
