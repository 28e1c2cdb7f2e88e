"""The executive summary: headline figures and the recommendation, ready to print."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine import Configuration, Recommendation
from sizing.engine.cell import Cell
from sizing.engine.predict import too_few_runs
from sizing.engine.recommend import Fleet
from sizing.engine.table import SizingTable
from sizing.model import PROFILE_UNITS, Figure, FigureKind, SizingMetric
from sizing.report.data.format import (
    PLATFORM_LABELS,
    PROFILE_LABELS,
    amount,
    cell_source,
    counted_total,
    money,
    number,
    percent,
    platform_words,
)
from sizing.report.data.model import Fact, Headline, RecommendationView, TableBlock, TCell
from sizing.report.explain import (
    ON_BOUNDS,
    confidence_share,
    explain,
    on_lower_bounds,
    unclaimed_words,
)

# Figures a headline may quote: measured or published, never derived beyond what was
# observed; and never a virtualized host's figure under a "bare metal" label.
HEADLINE_SOURCES = (FigureKind.MEASURED, FigureKind.REFERENCE, FigureKind.INTERPOLATED)


def _detail(c: Cell, text: str) -> str:
    flags = [f for f in c.flags if f != "emulated"]
    return f"{text}; {c.basis_id}" + (f" ({', '.join(flags)})" if flags else "")


def headlines(table: SizingTable) -> list[Headline]:
    """The few figures a reader takes away, each with its basis, flags and provenance.

    Only figures observed on their basis (measured, published or interpolated between two
    measured core counts) and priced; a lower bound reads "≥".
    """
    cells = [
        c
        for r in table.rows
        for c in r.cells
        if c.source in HEADLINE_SOURCES and c.cost_per_unit is not None
    ]
    out: list[Headline] = []
    rps = [c for c in cells if c.profile == SizingMetric.RPS and c.platform != "kubernetes"]
    if rps:
        best = min(rps, key=lambda c: (c.cost_per_unit or 0.0, c.cores))
        label = PLATFORM_LABELS.get(best.platform, best.platform)
        out.append(
            Headline(
                "Lowest cost per 1k RPS",
                money(best.cost_per_unit, table.currency),
                _detail(best, f"{label}, {best.cores} cores, HT {best.ht}"),
                cell_source(best.source, best.emulated, best.flags),
            )
        )
    for profile in ("rps", "tps"):
        one = [
            c
            for c in cells
            if c.profile == profile
            and c.platform in ("baremetal", "virtualized-host")
            and c.cores == 1
        ]
        if one:
            c = min(one, key=lambda c: (c.platform != "baremetal", c.ht))
            label = platform_words(c.platform)
            out.append(
                Headline(
                    f"{PROFILE_LABELS[profile]} per core, {label}",
                    c.display,
                    _detail(c, f"1 core, HT {c.ht}, {PROFILE_UNITS[profile]}"),
                    cell_source(c.source, c.emulated, c.flags),
                )
            )
    out += _overhead_headlines(cells)
    return out


def _overhead_headlines(cells: Sequence[Cell]) -> list[Headline]:
    """The overhead's range per metric: a hypervisor's guests', then a container's
    (another kind of guest: never pooled with a hypervisor's)."""
    out: list[Headline] = []
    for profile, container in (("rps", False), ("tps", False), ("rps", True), ("tps", True)):
        ov = [
            c
            for c in cells
            if c.profile == profile
            and c.overhead_pct is not None
            and (c.platform == "container") == container
        ]
        if ov:
            pcts = [c.overhead_pct for c in ov if c.overhead_pct is not None]
            value = percent(pcts[0]) if len(pcts) == 1 else f"{min(pcts):.0f}–{max(pcts):.0f}%"
            counts = len({c.cores for c in ov})  # core counts, not core counts × HT modes
            modes = len({c.ht for c in ov})
            src = {cell_source(c.source, c.emulated, c.flags) for c in ov}
            ids = ", ".join(dict.fromkeys(c.basis_id for c in ov))
            out.append(
                Headline(
                    f"{'Container' if container else 'Virtualization'} overhead, "
                    f"{PROFILE_LABELS[profile]}",
                    value,
                    f"range over {counts} core count{'s' if counts > 1 else ''}"
                    + (f" and {modes} HT modes" if modes > 1 else "")
                    + "; "
                    f"{ids}, against its own host's bare metal",
                    src.pop() if len(src) == 1 else "",
                )
            )
    return out


def recommendation_view(result: Recommendation, currency: str) -> RecommendationView:
    """The recommendation, its figures and the next cheapest alternatives, for print."""
    best = result.recommendation
    demand = result.demand.describe()
    if best is None:
        return RecommendationView(
            demand=demand,
            feasible=False,
            headline="No configuration in the catalog carries this demand.",
            facts=(),
            figures=(),
            explanation=explain(result),
            alternatives=None,
            result=result,
        )
    fleet = result.cheaper_mix
    return RecommendationView(
        demand=demand,
        feasible=True,
        headline=_headline(result, best, fleet, currency),
        facts=tuple(_facts(best, fleet, currency, result)),
        figures=tuple(_figure_fact(f) for f in fleet_figures(best, fleet)),
        explanation=explain(result),
        alternatives=_alternatives(result.alternatives[:5], currency),
        result=result,
    )


def _headline(
    result: Recommendation, best: Configuration, fleet: Fleet | None, currency: str
) -> str:
    """The proposal's one headline figure: the fleet's total or, when the demand grows,
    the plan's over its years (never year 1's fleet beside the plan's total)."""
    text = fleet_text(fleet) if fleet is not None else config_text(best)
    plan = result.cash_flow
    if plan is not None and plan.growth and plan.rows:
        last = plan.rows[-1]
        return (
            f"{text} in year 1, {last.servers} by year {last.year}, for "
            f"{amount(plan.total, currency)} over {plan.years} years"
        )
    total = fleet.total_cost if fleet is not None else best.total_cost
    return f"{text} for {amount(total, currency)}"


def counted_words(counted: int, servers: int, redundancy: str) -> str:
    """What the servers counted on are, as the redundancy makes them: ``3 (one spare)``
    under N+1, ``3 (one half of the 6: the other half down)`` under 2N."""
    if redundancy == "2n":
        return f"{counted} (one half of the {servers}: the other half down)"
    if redundancy == "n+1":
        return f"{counted} (one spare)"
    return str(counted)


def _total_label(result: Recommendation) -> str:
    """With --growth the box's fleet is year 1's: its cost is not the plan's (said so)."""
    plan = result.cash_flow
    return "Total cost of year 1's fleet" if plan is not None and plan.growth else "Total cost"


def _year_one(result: Recommendation, total: float, currency: str) -> list[Fact]:
    """The fleet's total; none when the demand grows (the plan's total is the one figure)."""
    plan = result.cash_flow
    if plan is not None and plan.growth and plan.rows:
        return []
    return [Fact(_total_label(result), amount(total, currency))]


def _growing(result: Recommendation, currency: str) -> list[Fact]:
    """The plan's total beside year 1's fleet, when the demand grows (the options table and
    the year-by-year table give the same figure)."""
    plan = result.cash_flow
    if plan is None or not plan.growth or not plan.rows:
        return []
    last = plan.rows[-1]
    return [
        Fact(
            f"Total over {plan.years} years, growing {plan.growth * 100:g}% a year",
            f"{amount(plan.total, currency)}: servers added as the demand needs them, "
            f"{last.servers} by year {last.year} (the plan year by year)",
        )
    ]


def _facts(
    best: Configuration, fleet: Fleet | None, currency: str, result: Recommendation
) -> list[Fact]:
    """The fleet the headline recommends (the cheaper mixed fleet when there is one): what
    it is, its cost, capacity and use; then the cheapest identical fleet on a line of its
    own."""
    if fleet is None:
        facts = [
            Fact("Configuration", config_text(best)),
            *_year_one(result, best.total_cost, currency),
            *_growing(result, currency),
            Fact("Cost per server", amount(best.cost_per_server, currency)),
        ]
        facts += _capacity_facts(best)
        facts.append(Fact("CPU utilisation at the target", percent(best.utilization * 100.0)))
        if best.counted_servers != best.servers:
            facts.append(
                Fact(
                    "Servers counted on",
                    counted_words(best.counted_servers, best.servers, result.demand.redundancy),
                )
            )
        facts.append(_how_sure(best.confidence, best.figures))
        return facts
    facts = [
        Fact("Fleet", fleet_text(fleet)),
        *_year_one(result, fleet.total_cost, currency),
        *_growing(result, currency),
        *_fleet_capacity(fleet, result),
        Fact("CPU utilisation at the target", percent(fleet.utilization * 100.0)),
    ]
    facts.append(_how_sure(fleet.confidence, best.figures))
    lower = {f.profile for f in best.figures if f.lower_bound}
    alone = [
        _capacity_words(best.capacity_rps, "RPS", "rps" in lower),
        _capacity_words(best.capacity_tps, "SSL TPS", "tps" in lower),
        f"{percent(best.utilization * 100.0)} CPU at the target",
    ]
    facts.append(
        Fact(
            "Instead, all servers alike",
            f"{config_text(best)}: {amount(best.total_cost, currency)}, "
            + ", ".join(x for x in alone if x),
        )
    )
    return facts


def _how_sure(confidence: float | None, figures: Sequence[Figure]) -> Fact:
    """How likely the fleet carries the target within its headroom, or why it is not
    claimed or not known (the terminal's rule: :func:`explain.confidence_words`)."""
    few = too_few_runs([f.reps for f in figures])
    if few:
        return Fact("How likely it carries the target", "not claimed: " + unclaimed_words(few))
    if confidence is None and on_lower_bounds(figures):
        return Fact("How likely it carries the target", f"not drawn: {ON_BOUNDS}")
    if confidence is None:
        return Fact(
            "How likely it carries the target",
            "not known: its figures carry no "
            "repetitions to draw from (reference data, or single runs)",
        )
    share = confidence_share(confidence)  # as the terminal says it, never "100%"
    return Fact("How likely it carries the target", f"{share} of the plausible outcomes")


def _capacity_facts(best: Configuration) -> list[Fact]:
    """The RPS and SSL TPS capacity the sizing counted on, as a buyer checks it: servers
    counted on × one server on the low end of its interval = the total (a lower bound when
    the server's figure is one)."""
    out: list[Fact] = []
    n = best.counted_servers
    for profile, unit, label in (("rps", "requests/s", "RPS"), ("tps", "handshakes/s", "SSL TPS")):
        cap = best.capacity_rps if profile == SizingMetric.RPS else best.capacity_tps
        if cap is None:
            continue
        one = cap / n
        mine = [f for f in best.figures if f.lower_bound and f.profile == profile]
        why = _lower_why(mine[0].flags) if mine else ""
        total = _capacity(counted_total(one, n), unit, bool(mine), why)
        out.append(
            Fact(
                f"{label} capacity",
                f"{n} server{'s' if n != 1 else ''} × {number(one)} = {total}",
            )
        )
    return out


def _capacity_words(value: float | None, label: str, lower: bool) -> str:
    return "" if value is None else f"{'≥' if lower else ''}{number(value)} {label}"


def _fleet_capacity(fleet: Fleet, result: Recommendation) -> list[Fact]:
    """A mixed fleet's capacity: the demand over the share of its capacity it uses, for a
    demand of one kind (RPS or SSL TPS); for both at once the share alone says it."""
    d = result.demand
    if fleet.utilization <= 0.0 or (d.rps is None) == (d.tps is None):
        return []
    profile = "rps" if d.rps is not None else "tps"
    demand = d.rps if d.rps is not None else d.tps
    assert demand is not None
    lower = any(f.lower_bound and f.profile == profile for c, _ in fleet.parts for f in c.figures)
    label = PROFILE_LABELS[profile]
    unit = "requests/s" if profile == SizingMetric.RPS else "handshakes/s"
    return [Fact(f"{label} capacity", _capacity(demand / fleet.utilization, unit, lower))]


def fleet_figures(best: Configuration, fleet: Fleet | None) -> list[Figure]:
    """The figures the recommended fleet rests on, each once (every part's, in order)."""
    configs = [best] if fleet is None else [c for c, _ in fleet.parts]
    seen: dict[tuple[str, int, str, str], Figure] = {}
    for c in configs:
        for f in c.figures:
            seen.setdefault((f.profile, f.cores, f.platform, f.ht), f)
    return list(seen.values())


def _figure_fact(f: Figure) -> Fact:
    """One server's figure as the sizing used it (the low end of its interval, named so),
    with its interval and how it was obtained in plain words; the model behind a
    prediction is in the engineers' appendix."""
    label = f"{PROFILE_LABELS.get(f.profile, f.profile)} of one {f.cores}-core server"
    how = FIGURE_WORDS.get(cell_source(f.source, f.emulated, f.flags), f.source)
    if f.lower_bound:
        # a floor carries the low end of the measured count's interval: as sized
        low = " the low end of its interval," if f.conservative < f.value else ""
        return Fact(label + ", as sized", f"≥{number(f.conservative)}:{low} a lower bound ({how})")
    if f.ci_low is None or f.ci_high is None:
        return Fact(label, f"{number(f.conservative)} ({how})")
    low = "the quantile asked for" if f.sized is not None else "the low end of its interval"
    return Fact(
        label + ", as sized",
        f"{number(f.conservative)}: {low} {number(f.ci_low)}–{number(f.ci_high)} ({how})",
    )


# How a figure was obtained, in the words of the proposal (no model names).
FIGURE_WORDS: dict[str, str] = {
    FigureKind.MEASURED: "measured",
    FigureKind.REFERENCE: "published reference figure",
    FigureKind.INTERPOLATED: "between two measured core counts",
    FigureKind.EXTRAPOLATED: "predicted beyond the measured core counts",
    FigureKind.SHAPE: "predicted with another series' scaling shape",
    FigureKind.EMULATED: "measured in a software-emulated guest",
    FigureKind.TRANSLATED: "translated from another CPU",
    FigureKind.SIMULATED: "made up for an example, not measured",
}


def _alternatives(alts: Sequence[Configuration], currency: str) -> TableBlock | None:
    """The next cheapest configurations (None when there is none)."""
    if not alts:
        return None
    return TableBlock(
        title="Next configurations (within the measured core counts first, then by cost)",
        headers=("Configuration", "Total cost", "RPS capacity", "SSL TPS capacity", "CPU use"),
        rows=tuple(
            (
                TCell(config_text(c), FigureKind.EXTRAPOLATED if c.extrapolated else "", False),
                TCell(amount(c.total_cost, currency)),
                TCell(_at_least(c, SizingMetric.RPS) + number(c.capacity_rps)),
                TCell(_at_least(c, SizingMetric.TPS) + number(c.capacity_tps)),
                TCell(percent(c.utilization * 100.0)),
            )
            for c in alts
        ),
    )


def _at_least(c: Configuration, profile: str) -> str:
    """``≥`` before a capacity that rests on a lower bound (a floor, a client-bound figure)."""
    figs = [f for f in c.figures if f.profile == profile]
    return "≥" if figs and any(f.lower_bound for f in figs) else ""


CLIENT_BOUND_WHY = "the source's clients could not saturate the server"
FLOOR_WHY = "at least what the largest measured core count of this CPU carries"


def _lower_why(flags: tuple[str, ...]) -> str:
    """Why a figure is a lower bound: its source's clients were the limit, or it is a floor
    beyond the measured core counts (sizing.engine.reach)."""
    return CLIENT_BOUND_WHY if "client-bound" in flags else FLOOR_WHY


def _capacity(value: float, unit: str, lower: bool, why: str = CLIENT_BOUND_WHY) -> str:
    """``≥300,000 requests/s (a lower bound: ...)`` when the figure is a lower bound."""
    if lower:
        return f"≥{number(value)} {unit} (a lower bound: {why})"
    return f"{number(value)} {unit}"


def fleet_text(f: Fleet) -> str:
    """``1 × 4-core + 1 × 2-core servers, bare metal, HT off``."""
    first = f.parts[0][0]
    body = " + ".join(f"{n} × {c.cores_per_server}-core" for c, n in f.parts)
    return f"{body} servers, {platform_words(first.platform)}, HT {first.ht}"


def config_text(c: Configuration) -> str:
    """``2 servers, bare metal, 8 cores each, HT off``."""
    servers = f"{c.servers} server{'s' if c.servers != 1 else ''}"
    return f"{servers}, {platform_words(c.platform)}, {c.cores_per_server} cores each, HT {c.ht}"
