"""A recommendation in words and numbers (``sizing recommend``, the guide's summary): the
basis and why, the figures with their intervals and flags, the price, the cheapest fleet and
how sure it is. Prose and money are written here, not in the engine."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine.choice import Choice
from sizing.engine.costs import CostBreakdown, CostCatalog, LicenceCost
from sizing.engine.licences import EVERY_PLATFORM, lines_of, unit_words
from sizing.engine.predict import DRAWS, MIN_CLAIM_RUNS, too_few_runs
from sizing.engine.recommend import Configuration, Demand, Recommendation
from sizing.engine.slo import slo_profile_name
from sizing.knee import Slo
from sizing.model import DERIVED, Figure, SizingMetric
from sizing.report.data.format import amount, counted_total, money

__all__ = [
    "confidence_share",
    "confidence_words",
    "cost_words",
    "describe_figure",
    "explain",
    "unclaimed_words",
]


_money = amount  # whole units when the amount is whole, cents otherwise


def _money_cents(v: float, currency: str) -> str:
    return money(v, currency, cents=True)


def _unit(profile: str) -> str:
    return "RPS" if profile == SizingMetric.RPS else "TPS"


def cost_words(cost: CostBreakdown, currency: str, catalog: CostCatalog | None = None) -> str:
    """``hardware $1,300 + licence (hypervisor, per socket, once) $1,000 + power $315.36 =
    $2,615.36; left out: support not priced``: every part priced, then what is not."""
    if cost.total == cost.hardware and not cost.licence_key and not cost.licences:
        text = f"hardware only, {_money(cost.hardware, currency)}"
        return text + ("; left out: " + ", ".join(cost.left_out) if cost.left_out else "")
    parts = [f"hardware {_money(cost.hardware, currency)}"]
    if cost.no_hypervisor_licence:
        parts.append("no hypervisor licence")
    parts += [_licence_part(x, currency, catalog) for x in cost.licences]
    if cost.licence_key and not cost.licences:  # a cost made without its lines
        parts.append(f"licence ({cost.licence_key}) {_money(cost.licence, currency)}")
    if cost.support:
        parts.append(f"support {_money(cost.support, currency)}")
    if cost.power:
        parts.append(f"power {_money(cost.power, currency)}")
    text = " + ".join(parts) + f" = {_money(cost.total, currency)}"
    if cost.left_out:
        text += "; left out: " + ", ".join(cost.left_out)
    return text


def _licence_part(x: LicenceCost, currency: str, catalog: CostCatalog | None) -> str:
    """``licence (esxi, per core, yearly) $29,160`` of an unnamed line; a named one says
    its name: ``licence NGINX Plus (every platform, per server, yearly) $7,500``."""
    lines = () if catalog is None or x.key not in catalog.licences else catalog.licences[x.key]
    lic = next((v for v in lines_of(lines) if v.called(x.key) == x.name), None)
    where = "every platform" if x.key == EVERY_PLATFORM else x.key
    how = "" if lic is None else f", {lic.describe()}"
    name = f" {lic.name}" if lic is not None and lic.name else ""
    if lic is None and x.name:
        name = f" {x.name}"
    return f"licence{name} ({where}{how}) {_money(x.cost, currency)}"


def describe_figure(f: Figure) -> str:
    """``capacity 131,000–140,000 RPS (measured; range of 3 runs, 75%), sized on 131,000``
    and kin: every interval says what it is and what it covers."""
    unit = _unit(f.profile)
    notes = [f.source, *f.flags]
    if f.source in DERIVED and f.origin:
        notes[0] = f"{f.source}: {f.origin}"
    if f.interval:
        notes.append(f.interval)
    tail = f" ({'; '.join(notes)})"
    if f.lower_bound:
        return f"≥{f.value:,.0f} {unit}{tail}, sized on {f.conservative:,.0f}"
    how = " (the quantile of its draws --confidence asked for)" if f.sized is not None else ""
    if f.ci_low is not None and f.ci_high is not None:
        return (
            f"capacity {f.value:,.0f} [{f.ci_low:,.0f}–{f.ci_high:,.0f}] {unit}{tail}, "
            f"sized on {f.conservative:,.0f}{how}"
        )
    return f"{f.value:,.0f} {unit}{tail}"


def confidence_share(conf: float) -> str:
    """``97%``, or ``more than 99.5%`` when every draw carries it: never "100%" (what all of
    DRAWS draws can say); the terminal and the guide say it the same way."""
    top = 1.0 - 1.0 / (DRAWS + 1)
    return f"more than {top * 100:.1f}%" if conf >= 1.0 else f"{min(conf, top) * 100:.0f}%"


def unclaimed_words(few: int) -> str:
    """Why no confidence is claimed on ``few`` repetitions of a point, and what to do."""
    return (
        f"{few} repetitions of a point cannot say how much runs vary; measure "
        f"{MIN_CLAIM_RUNS} or more per core count"
    )


ON_BOUNDS = (
    "it is sized on a lower bound, which has no high end to draw from; the fleet carries it "
    "whenever the server carries at least the bound's low end, as it did when measured"
)


def on_lower_bounds(figures: Sequence[Figure]) -> bool:
    """Sized on measured lower bounds alone (a client-bound replay): no draws to state."""
    measured = [f for f in figures if f.reps or f.coverage is not None]
    return bool(measured) and all(f.lower_bound for f in figures)


def confidence_words(
    conf: float | None, demand: Demand, basis: str, figures: Sequence[Figure] = ()
) -> str:
    """ "Carries 200,000 RPS at ≤ 80% of capacity in 97% of the plausible outcomes on
    basis B", or why that cannot be said."""
    limit = 100 - demand.headroom * 100
    what = " + ".join(
        f"{v:,.0f} {u}" for v, u in ((demand.rps, "RPS"), (demand.tps, "TPS")) if v is not None
    )
    few = too_few_runs([f.reps for f in figures])
    if few:
        return (
            f"How likely it carries {what} at ≤ {limit:g}% of capacity is not claimed: "
            + unclaimed_words(few)
            + "."
        )
    if conf is None and on_lower_bounds(figures):
        return (
            f"How likely it carries {what} at ≤ {limit:g}% of capacity is not drawn: {ON_BOUNDS}."
        )
    if conf is None:
        return (
            f"How likely it carries {what} at ≤ {limit:g}% of capacity is not known: its "
            "figures carry no repetitions to draw from (reference data, or single runs)."
        )
    return (
        f"Carries {what} at ≤ {limit:g}% of capacity in {confidence_share(conf)} of the plausible "
        f"outcomes on basis {basis} ({DRAWS} draws of its capacity: the runs' noise and its "
        "uncertainty, the law's misfit, the distance from the measured core counts)."
    )


def explain(result: Recommendation) -> tuple[str, ...]:
    """The choice in words and numbers: the basis and why, the figures with their
    intervals and flags, the price that applied, the cheapest fleet and how sure it is."""
    head = [f"Basis: {result.why}."] if result.why else []
    best = result.recommendation
    if best is None:
        return (*head, _unanswered(result))
    basis = result.sized_on
    if basis is not None:
        head.append(f"Sized on {basis.label()}.")
    elif best.basis:
        head.append(f"Sized on basis {best.basis}.")
    return (*head, *_cheapest(result, best), *_capacity(result, best), *_after(result, best))


def _unanswered(result: Recommendation) -> str:
    """Why no configuration carries the demand."""
    rejected, max_servers = result.rejected, result.max_servers
    within = "" if max_servers is None else f" within {max_servers} servers"
    sized = [r for r in rejected if r.servers_needed is not None]
    if sized:
        r = min(sized, key=lambda r: (r.servers_needed or 0, r.cores_per_server or 0))
        larger = sorted(
            {
                x.cores_per_server or 0
                for x in sized
                if (x.cores_per_server or 0) > (r.cores_per_server or 0)
            }
        )
        if larger:
            names = ", ".join(f"{n} cores" for n in larger)
            how = (
                f"raise --max-servers; the catalog's larger servers ({names}) need as many, "
                "sized at least on what was measured: a run at their core counts would size "
                "them on their own figures (the answer without --max-servers names it)"
            )
        else:
            how = "raise --max-servers or add larger servers to the catalog"
        reason = (
            f"the fewest would be {r.servers_needed:,} × {r.platform} "
            f"{r.cores_per_server}-core (HT {r.ht}); {how}"
        )
    else:
        reason = "; ".join(sorted({r.reason for r in rejected})) or "no figures to size from"
    return f"No configuration carries {result.demand.describe()}{within}: {reason}."


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 5th, 11th, 21st."""
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def _cheapest(result: Recommendation, best: Configuration) -> list[str]:
    """The cheapest fleet (mixed, when a mix is cheaper) and what it costs, and the figures
    each server is sized on."""
    cur, asked = result.currency, result.confidence_asked
    price = f"; price: {best.price_source}" if best.price_source else ""
    on = (
        f"each server sized on the {_ordinal(round((1 - asked) * 100))} percentile of its "
        "capacity's draws"
        if asked is not None
        else "each server sized on the low end of its figures' intervals"
    )
    mix = result.cheaper_mix
    # what this fleet's cost includes: its own platform's licence, never another's
    catalog = result.catalog
    includes = result.cost_basis if catalog is None else catalog.basis_for(best.platform)
    lines = []
    if mix is not None:
        less = round(best.total_cost, 2) - round(mix.total_cost, 2)  # as both are printed
        lines.append(
            f"Recommended: {mix.label}, {_money(mix.total_cost, cur)} (the cheapest fleet, "
            f"{_money(less, cur)} less than the cheapest "
            f"identical fleet; {includes}{price}; {on})."
        )
        lines.append(
            f"Cheapest identical fleet: {best.label}, {_money(best.total_cost, cur)} "
            f"({best.servers} × {_money(best.cost_per_server, cur)}"
            f"{_topup(best.total_cost - best.servers * best.cost_per_server, cur, catalog, best)})."
        )
        if mix.gap > 0:
            lines.append(
                f"The mixed fleet's search stopped at its node budget: it is not proven the "
                f"cheapest, and is at most {mix.gap * 100:.2f}% above the cheapest possible."
            )
    else:
        lines.append(
            f"Recommended: {best.label}, {_money(best.total_cost, cur)} "
            f"(the cheapest: {best.servers} × {_money(best.cost_per_server, cur)}"
            f"{_topup(best.total_cost - best.servers * best.cost_per_server, cur, catalog, best)}"
            f"; {includes}{price}; {on}; no mix of server sizes is cheaper)."
        )
    cpu, unnamed = result.cpu_assumed
    if unnamed:
        lines.append(
            f"Taken to be the {cpu} the figures are of (the catalog names no CPU for them, "
            f"and names one for others): {', '.join(unnamed)}."
        )
    fleet_cost = best.breakdown if mix is None else mix.breakdown
    months = None if result.catalog is None else result.catalog.amortisation_months
    period = f" over {months} months" if months and fleet_cost.total != fleet_cost.hardware else ""
    lines.append(f"Cost{period}: {cost_words(fleet_cost, cur, result.catalog)}.")
    per_server = "Per server" + ("" if mix is None else " of the identical fleet")
    lines.append(f"{per_server}: " + ", ".join(describe_figure(f) for f in best.figures) + ".")
    lab_bound = [
        f
        for f in best.figures
        if f.lower_bound and "client-bound" in f.flags and not f.basis.startswith("reference/")
    ]
    if lab_bound:  # the published data's own words say what its clients did
        lines.append(
            "A lower bound: the load generator saturated before the server (client-bound), "
            "so the true capacity is higher and this fleet may be larger than needed, never "
            "smaller; a client host in the inventory measures the whole figure."
        )
    return lines


def _topup(extra: float, cur: str, catalog: CostCatalog | None, best: Configuration) -> str:
    """`` + $3,240 to the licence's order minimum of 72 cores``: what an order minimum adds
    to the servers' own costs (empty when it adds nothing)."""
    if extra < 0.005 or catalog is None:
        return ""
    minimums = [(k, lic) for k, lic in catalog.licence_lines(best.platform) if lic.min_per_order]
    if len(minimums) != 1:
        topups = catalog.order_topups(best.platform, {best.cores_per_server: best.servers})
        each = ", ".join(f"{n} {_money(v, cur)}" for n, v in topups.items() if v >= 0.005)
        return f" + {_money(extra, cur)} to the licences' order minimums ({each})"
    _, lic = minimums[0]
    whose = f"{lic.name}'s" if lic.name else "the licence's"
    units = unit_words(lic.per, lic.min_per_order)
    return f" + {_money(extra, cur)} to {whose} order minimum of {lic.min_per_order} {units}"


def _capacity(result: Recommendation, best: Configuration) -> list[str]:
    """The share of capacity the demand takes, and how likely the fleet carries it."""
    demand, asked = result.demand, result.confidence_asked
    shares = []
    for f in best.figures:
        target = demand.rps if f.profile == SizingMetric.RPS else demand.tps
        assert target is not None
        n = best.counted_servers
        cap = counted_total(f.conservative, n)  # n × one server as printed: it multiplies
        # below 1 a second as printed (a stored rate may be 1e-3): the share of the exact one
        of = cap if cap > 0 else f.conservative * n
        shares.append(
            f"{target:,.0f} {_unit(f.profile)} uses {target / of * 100:.1f}% of {cap:,.0f}"
            f" ({n} × {f.conservative:,.0f})"
        )
    counted = f"{best.counted_servers} server" + ("s" if best.counted_servers > 1 else "")
    if demand.redundancy == "n+1":
        counted += " (one of the " + f"{best.servers} down)"
    elif demand.redundancy == "2n":
        counted += f" (one half of the {best.servers}: the other half down)"
    lines = [
        f"Capacity on {counted}: "
        + " + ".join(shares)
        + f" = {best.utilization * 100:.1f}% of {result.capacity_of} at the target, "
        f"limit {100 - demand.headroom * 100:g}% ({demand.headroom * 100:g}% headroom)."
    ]
    mix = result.cheaper_mix
    conf = best.confidence if mix is None else mix.confidence
    lines.append(confidence_words(conf, demand, best.basis or "the figures", best.figures))
    if asked is not None and conf is not None and conf < asked:
        lines.append(
            f"Below the {asked * 100:.0f}% asked for: the servers' draws do not all "
            "fall short together; add a server to be sure."
        )
    return lines


def _after(result: Recommendation, best: Configuration) -> list[str]:
    """Cost per unit, predicted figures, the next configuration, and --max-servers."""
    cur, demand, max_servers = result.currency, result.demand, result.max_servers
    lines = []
    per = [
        f"{_money_cents(v, cur)} per {u}"
        for p, u in (("rps", "1k RPS"), ("tps", "100 TPS"))
        if p in demand.profiles and (v := best.cost_per(p)) is not None
    ]
    if per:
        lines.append("Cost per unit of capacity: " + ", ".join(per) + ".")
    if best.extrapolated:
        lines.append(
            "Some figures are not measured at this core count: they are predicted by the "
            "scaling fit or a borrowed shape, with the prediction interval shown."
        )
    if result.alternatives:
        nxt = result.alternatives[0]
        diff = nxt.total_cost - best.total_cost
        delta = (
            f"+{_money(diff, cur)}"
            if diff >= 0
            else f"{_money(-diff, cur)} less, but not measured at that core count"
        )
        lines.append(f"Next identical: {nxt.label}, {_money(nxt.total_cost, cur)} ({delta}).")
    capped = [r for r in result.rejected if r.servers_needed is not None]
    if capped and max_servers is not None:
        lines.append(
            f"--max-servers {max_servers} excluded {len(capped)} configuration(s) that need "
            "more servers (see the rejected list)."
        )
    return lines


def passed_over_line(choice: Choice) -> str:
    """The bases not used and why (those the basis sentence already names left out);
    empty when there are none."""
    left = [(i, r) for i, r in choice.passed_over if f"{i}: {r}" not in choice.why]
    if not left:
        return ""
    return "passed over: " + "; ".join(f"{i} ({r})" for i, r in left)


def slo_line(slo: Slo, found: Sequence[Figure], workload: str = "") -> str:
    """``--p95``: the RPS-under-objective figures the recommendation sizes from, of one
    latency workload; a figure whose objective held at the highest rate measured is a
    lower bound (no knee reached)."""
    of = f" of latency workload {workload}" if workload else ""
    return f"sizing RPS as {slo_profile_name(slo)}{of}: " + "; ".join(
        f"{f.platform} {f.cores}c HT {f.ht} {'>= ' if f.lower_bound else ''}{f.value:,.0f}/s"
        f" ({f.origin}{'; only a lower bound: no knee reached' if f.lower_bound else ''})"
        for f in found
    )
