"""The proposal a CFO reads (the guide's first page after the cover): the options side by
side (platform, servers, cost per year and in total), what each costs part by part and
carries, and the recommendation. The assumptions behind every figure are
:mod:`sizing.report.data.assumptions`. Pure.

An option is one platform's priced fleet. Its capacity is shown as the sizing used it:
servers counted on × what one server carries on the low end of its interval, so that
multiplying what the page says gives the total (:func:`counted_total`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sizing.engine import Configuration, Recommendation
from sizing.engine.costs import CostBreakdown, CostCatalog, Licence
from sizing.engine.licences import EVERY_PLATFORM, LicenceCost
from sizing.engine.versus import PlatformComparison
from sizing.model import SizingMetric, cost_family
from sizing.report.data.assumptions import AssumptionRow, assumptions, catalog_assumptions
from sizing.report.data.capacity_view import capacity_table
from sizing.report.data.cashflow_view import bought_table, cash_flow_table
from sizing.report.data.format import (
    PLATFORM_LABELS,
    amount,
    platform_words,
)
from sizing.report.data.model import TableBlock, TCell

__all__ = ["Option", "Proposal", "assumptions_table", "options", "proposal"]

_LABELS: dict[str, str] = {SizingMetric.RPS: "RPS", SizingMetric.TPS: "TLS handshakes/s"}


@dataclass(frozen=True)
class Option:
    """One platform's cheapest fleet for the demand: what it is, costs and carries."""

    platform: str
    parts: tuple[tuple[Configuration, int], ...]  # (server type, count)
    counted: int  # servers the capacity counts on (one fewer under N+1)
    total: float
    breakdown: CostBreakdown
    recommended: bool
    grown: tuple[int, int] | None = None  # with --growth: (first year, last year) servers
    # what it was sized on when not the answer's basis (Kubernetes: reference figures)
    sized_on: str = ""

    @property
    def servers(self) -> int:
        return sum(n for _, n in self.parts)

    @property
    def ht(self) -> str:
        return self.parts[0][0].ht

    def fleet_text(self, ht: bool = True) -> str:
        """``4 × PowerEdge R460 (12 cores), HT on``: the one HT mode of this fleet."""
        body = " + ".join(
            f"{n} × {c.server_name} ({c.cores_per_server} cores)"
            if c.server_name
            else f"{n} × {c.cores_per_server}-core server"
            for c, n in self.parts
        )
        if self.grown is not None:
            body += f" in year 1, {self.grown[1]} by the last year"
        return f"{body}, HT {self.ht}" if ht else body

    def per_server(self, profile: str) -> float | None:
        """What one server carries as sized (the low end of its interval), identical
        fleets only (a mixed fleet's servers differ)."""
        if len(self.parts) != 1:
            return None
        c = self.parts[0][0]
        cap = c.capacity_rps if profile == SizingMetric.RPS else c.capacity_tps
        return None if cap is None else cap / c.counted_servers


def _option(platform: str, result: Recommendation, recommended: bool) -> Option | None:
    got = _flat_option(platform, result, recommended)
    plan = result.cash_flow
    if got is None or plan is None or not result.growth or not plan.rows:
        return got
    # growing demand: the total is the plan's, year by year, part by part
    rows = plan.rows
    keys = {x.name: x.key for x in got.breakdown.licences}
    lines: dict[str, float] = {}
    for r in rows:
        for name, cost in r.licences:
            lines[name] = lines.get(name, 0.0) + cost
    paid = CostBreakdown(
        hardware=sum(r.hardware for r in rows),
        licence=sum(r.licence for r in rows),
        support=sum(r.support for r in rows),
        power=sum(r.power for r in rows),
        licence_key=got.breakdown.licence_key,
        licences=tuple(LicenceCost(n, keys.get(n, ""), c) for n, c in lines.items()),
        no_hypervisor_licence=got.breakdown.no_hypervisor_licence,
    )
    return replace(got, total=plan.total, breakdown=paid, grown=(rows[0].servers, rows[-1].servers))


def _flat_option(platform: str, result: Recommendation, recommended: bool) -> Option | None:
    best = result.recommendation
    if best is None:
        return None
    mix = result.cheaper_mix
    if mix is not None:
        spare = 1 if result.demand.redundancy == "n+1" else 0
        return Option(
            platform, mix.parts, mix.servers - spare, mix.total_cost, mix.breakdown, recommended
        )
    return Option(
        platform,
        ((best, best.servers),),
        best.counted_servers,
        best.total_cost,
        best.breakdown,
        recommended,
    )


def options(result: Recommendation, versus: PlatformComparison | None) -> list[Option]:
    """Every platform priced for the demand, the recommended one first: the comparison's
    sides when there is one (each the cheapest fleet on its platform), else the answer."""
    best = result.recommendation
    if best is None:
        return []
    out: list[Option] = []
    sides = [] if versus is None else list(versus.sides)
    for s in sides:
        mine = s.platform == best.platform
        got = _option(s.platform, result if mine else s.result, mine)
        if got is not None:
            out.append(replace(got, sized_on=_sized_on(s.sized_on)))
    if not any(o.recommended for o in out):
        got = _option(best.platform, result, True)
        if got is not None:
            out.insert(0, got)
    return sorted(out, key=lambda o: (not o.recommended, o.total))


def _sized_on(words: str) -> str:
    """An option's own basis in a few words (the guide's summary says it whole)."""
    if not words:
        return ""
    return "reference figures" if "reference data" in words else "a measured container leg"


def unpriced(result: Recommendation, versus: PlatformComparison | None) -> list[tuple[str, str]]:
    """The platforms compared that no fleet prices, each with the first reason the engine
    gives (the options table says it on the platform's own row)."""
    if versus is None or result.recommendation is None:
        return []
    out = []
    for s in versus.sides:
        if s.not_priced:
            out.append((s.platform, s.not_priced))
        elif s.result.recommendation is None:
            reasons = list(dict.fromkeys(r.reason for r in s.result.rejected))
            out.append((s.platform, reasons[0] if reasons else "no figures to size it from"))
    # a platform the catalog prices but nothing measured or assumed: what would price it
    out += list(versus.unpriced)
    return out


@dataclass(frozen=True)
class Proposal:
    """The proposal's lead sentence and tables (see the module)."""

    lead: str
    options: TableBlock | None
    costs: TableBlock | None
    capacity: TableBlock | None
    unpriced: tuple[tuple[str, str], ...] = ()  # (platform, the engine's reason)
    cash_flow: TableBlock | None = None  # the recommended fleet's plan, year by year
    bought: TableBlock | None = None  # the plan's demand and servers bought, year by year


def _years(catalog: CostCatalog) -> float | None:
    months = catalog.amortisation_months
    return None if not months else months / 12.0


def _platform(o: Option) -> str:
    own = f" (on {o.sized_on})" if o.sized_on else ""
    return (
        PLATFORM_LABELS.get(o.platform, o.platform)
        + own
        + (" (recommended)" if o.recommended else "")
    )


def _options_table(
    opts: Sequence[Option], catalog: CostCatalog, missing: Sequence[tuple[str, str]] = ()
) -> TableBlock:
    cur, years = catalog.currency, _years(catalog)
    headers: tuple[str, ...]
    rows: tuple[tuple[TCell, ...], ...]
    if years is None:
        headers = ("Option", "Servers", "Price (hardware, one-off)")
        rows = tuple(
            (
                TCell(_platform(o), "", False),
                TCell(o.fleet_text(), "", False),
                TCell(amount(o.total, cur)),
            )
            for o in opts
        )
    else:
        headers = ("Option", "Servers", "Cost per year", f"Total over {years:g} years")
        rows = tuple(
            (
                TCell(_platform(o), "", False),
                TCell(o.fleet_text(), "", False),
                TCell(amount(o.total / years, cur)),
                TCell(amount(o.total, cur)),
            )
            for o in opts
        )
    rows += tuple(
        (
            TCell(PLATFORM_LABELS.get(p, p), "", False),
            TCell(f"not priced: {_first_clause(why)} (why: the engineers' appendix)", "", False),
            *(TCell("–") for _ in headers[2:]),
        )
        for p, why in missing
    )
    return TableBlock(title="The options side by side", headers=headers, rows=rows)


def _first_clause(why: str) -> str:
    """A reason's first clause (``no kvm guest measured``): the appendix says it whole."""
    return re.split(r"; | \(|: ", why, maxsplit=1)[0]


def _hardware(c: Configuration) -> float:
    """One server's hardware price."""
    return c.unit_cost.hardware if c.unit_cost is not None else c.cost_per_server


def _power_cell(o: Option, currency: str) -> str:
    """The option's power, or what of it is not priced: a server whose price came from
    elsewhere (an inventory's sizing_price_usd) states no watts, and its power is never
    shown as 0."""
    unstated = [c for c, _ in o.parts if c.offer is not None and c.offer.watts is None]
    if not unstated:
        return amount(o.breakdown.power, currency)
    names = ", ".join(
        dict.fromkeys(c.server_name or f"{c.cores_per_server}-core" for c in unstated)
    )
    missing = (
        f"not priced for the {names} server{'s' if len(unstated) > 1 else ''} (no watts stated)"
    )
    if len(unstated) == len(o.parts):
        return missing
    return f"{amount(o.breakdown.power, currency)}; {missing}"


def _licence_cell(o: Option, catalog: CostCatalog) -> str:
    """The platform's own licence lines (never a line every platform pays)."""
    b = o.breakdown
    if b.licence_key:
        own = [x.cost for x in b.licences if x.key != EVERY_PLATFORM]
        return amount(sum(own) if b.licences else b.licence, catalog.currency)
    if o.platform == "baremetal":
        return "none: no hypervisor"
    return "not priced"


def _own_licence_label(opts: Sequence[Option]) -> str:
    """The row of each platform's own licence: a hypervisor's, or with a Kubernetes (or
    container) option beside, the platform's (OpenShift is no hypervisor licence)."""
    if any(cost_family(o.platform) in ("kubernetes", "container") for o in opts):
        return "Platform licence (hypervisor, Kubernetes)"
    return "Hypervisor licence"


def _every_rows(opts: Sequence[Option], cur: str) -> list[tuple[str, list[str]]]:
    """A row per licence line every platform pays (``all``), under its own name."""
    names = list(
        dict.fromkeys(x.name for o in opts for x in o.breakdown.licences if x.key == EVERY_PLATFORM)
    )
    out = []
    for name in names:
        cells = []
        for o in opts:
            paid = [x.cost for x in o.breakdown.licences if x.name == name]
            cells.append(amount(sum(paid), cur) if paid else "–")
        label = name if name.lower().endswith("licence") else f"{name} licence"
        out.append((label[0].upper() + label[1:], cells))
    return out


def _costs_table(opts: Sequence[Option], catalog: CostCatalog) -> TableBlock:
    """What each option's total is made of, part by part (a column per option)."""
    cur = catalog.currency

    def row(label: str, cells: Sequence[str]) -> tuple[TCell, ...]:
        return (TCell(label, "", False), *(TCell(c) for c in cells))

    rows = [
        row(
            "Hardware",
            [
                amount(o.breakdown.hardware, cur)
                if o.grown is not None
                else " + ".join(f"{n} × {amount(_hardware(c), cur)}" for c, n in o.parts)
                + f" = {amount(o.breakdown.hardware, cur)}"
                for o in opts
            ],
        ),
        row(_own_licence_label(opts), [_licence_cell(o, catalog) for o in opts]),
        *(row(label, cells) for label, cells in _every_rows(opts, cur)),
    ]
    if catalog.support is not None and catalog.amortisation_months:
        rows.append(row("Support", [amount(o.breakdown.support, cur) for o in opts]))
    if catalog.price_per_kwh is not None and catalog.amortisation_months:
        rows.append(row("Power", [_power_cell(o, cur) for o in opts]))
    rows.append(row("Total", [amount(o.total, cur) for o in opts]))
    months = catalog.amortisation_months
    return TableBlock(
        title="What each option costs" + (f" over {months} months" if months else ""),
        headers=("", *(PLATFORM_LABELS.get(o.platform, o.platform) for o in opts)),
        rows=tuple(rows),
        notes=("The licence terms, wattage, hours and rates are in the assumptions below.",),
    )


def proposal(
    result: Recommendation | None, versus: PlatformComparison | None, catalog: CostCatalog
) -> Proposal:
    """The proposal for the answer ``result`` (None: no demand was given)."""
    if result is None:
        return Proposal(
            "No demand was given: pass --rps and/or --tps for a proposal with options and "
            "costs. The prices and terms the guide's costs rest on:",
            None,
            None,
            None,
        )
    opts = options(result, versus)
    if not opts:
        return Proposal(
            f"No configuration in the catalog carries {result.demand.describe()}.", None, None, None
        )
    rec, cur = opts[0], catalog.currency
    missing = unpriced(result, versus)
    lead = (
        f"For {result.demand.describe()}, we recommend {rec.fleet_text(ht=False)} on "
        f"{platform_words(rec.platform)}, hyper-threading "
        f"{rec.ht}, for {amount(rec.total, cur)}"
        + (f" over {catalog.amortisation_months} months" if catalog.amortisation_months else "")
        + "."
    )
    for o in opts[1:]:
        diff = round(o.total, 2) - round(rec.total, 2)  # as the options table prints them
        lead += (
            f" On {PLATFORM_LABELS.get(o.platform, o.platform)} the same demand needs "
            f"{o.servers} server{'s' if o.servers != 1 else ''}"
            + (f" (sized on {o.sized_on})" if o.sized_on else "")
            + " and costs "
            + (
                f"{amount(diff, cur)} more than on {platform_words(rec.platform)}."
                if diff > 0.005
                else f"the same as on {platform_words(rec.platform)}."
            )
        )
    for platform, _ in missing:
        lead += f" {PLATFORM_LABELS.get(platform, platform)} is not priced: see the options."
    return Proposal(
        lead,
        _options_table(opts, catalog, missing),
        _costs_table(opts, catalog),
        capacity_table(opts, result.demand.profiles),
        tuple(missing),
        cash_flow_table(result.cash_flow),
        bought_table(result.cash_flow),
    )


def assumptions_table(
    result: Recommendation | None, catalog: CostCatalog, figures_from: str
) -> TableBlock:
    """Every assumption the costs rest on, with its source: the rows ``recommend`` prints
    and ``--json`` carries (:func:`sizing.report.data.assumptions.assumptions`), after
    where one server's capacity comes from."""
    rows = [
        AssumptionRow(
            "Capacity of one server",
            "the low end of its figure's interval, for its core count and platform",
            figures_from,
        ),
        *(catalog_assumptions(catalog) if result is None else assumptions(result)),
        *_absent(result, catalog),
    ]
    return TableBlock(
        title="Assumptions and their sources",
        headers=("Assumption", "Value", "Source"),
        rows=tuple(
            (TCell(x.item, "", False), TCell(x.value, "", False), TCell(x.source, "", False))
            for x in rows
        ),
    )


def _absent(result: Recommendation | None, catalog: CostCatalog) -> list[AssumptionRow]:
    """The demand, and the terms a proposal is read for that this one does not apply, said
    so (no discount, no growth, one currency) rather than left for the reader to guess."""
    out = []
    if result is not None:
        d = result.demand
        what = " + ".join(
            f"{v:,.0f} {u}"
            for v, u in ((d.rps, "requests/s"), (d.tps, "TLS handshakes/s"))
            if v is not None
        )
        out.append(AssumptionRow("Demand", what, "--rps, --tps"))
        if not result.growth:
            out.append(AssumptionRow("Growth", "none: the same demand every year", "--growth"))
    discounted = catalog.discount or any(s.discount for s in catalog.servers)
    lines = [
        lic
        for entry in catalog.licences.values()
        for lic in ((entry,) if isinstance(entry, Licence) else entry)
    ]
    if not discounted and not any(lic.discount for lic in lines):
        out.append(AssumptionRow("Discount", "none: list prices", catalog.label))
    if not catalog.exchange_rates:
        out.append(
            AssumptionRow(
                "Currency", f"every amount in {catalog.currency}; no exchange rate", catalog.label
            )
        )
    return out
