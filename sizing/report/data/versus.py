"""Bare metal or the hypervisor for the customer's demand, in words: the lines under
``sizing recommend``'s answer and the guide's comparison box say the same thing
(:class:`sizing.engine.versus.PlatformComparison`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sizing.engine.answer import Fleet
from sizing.engine.licences import EVERY_PLATFORM
from sizing.engine.versus import Overhead, PlatformComparison, Side
from sizing.model import HYPERVISOR_PLATFORMS
from sizing.report.data.format import PLATFORM_LABELS, amount
from sizing.report.explain import cost_words

if TYPE_CHECKING:  # the guide's box only: recommend's lines never load the guide's model
    from sizing.report.data.model import TableBlock

__all__ = ["VersusView", "versus_lines", "versus_sentence", "versus_view"]

_UNITS = {"rps": ("RPS", "requests"), "tps": ("TLS handshakes", "handshakes")}


def _name(platform: str) -> str:
    return PLATFORM_LABELS.get(platform, platform)


def _fleet(f: Fleet) -> str:
    """``2 × PowerEdge R460 (8 cores) + 1 × 4-core (HT on)``: the catalog's model names."""
    body = " + ".join(
        f"{n} × {c.server_name} ({c.cores_per_server} cores)"
        if c.server_name
        else f"{n} × {c.cores_per_server}-core"
        for c, n in f.parts
    )
    return f"{body} (HT {f.parts[0][0].ht})"


def _cost(s: Side, currency: str) -> str:
    """The fleet's total and its parts (hardware, licence, support, power)."""
    if s.fleet is None:
        return ""
    return cost_words(s.fleet.breakdown, currency)


def _side(s: Side) -> str:
    if s.not_priced:
        return f"not priced: {s.not_priced}"
    if s.fleet is None:
        return "no fleet in the catalog carries the demand"
    n = s.servers or 0
    return f"{n} server{'s' if n != 1 else ''}: {_fleet(s.fleet)}"


def _made_of(s: Side, currency: str) -> str:
    """The guide's cell: the fleet's cost in parts, and the basis when it is its own; or
    why the platform is not priced."""
    if s.not_priced:
        return f"not priced: {s.not_priced}"
    cost = _cost(s, currency)
    return f"{cost} ({s.sized_on})" if s.sized_on else cost


def _share(o: Overhead) -> str:
    text = f"{o.share * 100:.0f}%"
    if o.low is not None and o.high is not None:
        text += f" [{o.low * 100:.0f}–{o.high * 100:.0f}%]"
    return text


def _how(o: Overhead) -> str:
    if o.source == "reference":
        return "published"
    if o.simulated:  # an example store's made-up figures are never called measured
        return "simulated, paired" if o.paired else "simulated, in separate runs, unpaired"
    return "paired measurement" if o.paired else "measured in separate runs, unpaired"


def _servers(n: int | None) -> str:
    return f"{n} server{'s' if n != 1 else ''}"


def _own_licence(side: Side) -> float:
    """What a side pays for its platform's own licence lines (not every platform's): over
    its plan when the demand grows (the total it is compared on), else its fleet's."""
    assert side.fleet is not None
    cost = side.fleet.breakdown
    plan = side.result.cash_flow
    if plan is not None and plan.growth and plan.rows:
        every = {x.name for x in cost.licences if x.key == EVERY_PLATFORM}
        return sum(c for r in plan.rows for n, c in r.licences if n not in every)
    if not cost.licences:
        return cost.licence
    return sum(x.cost for x in cost.licences if x.key != EVERY_PLATFORM)


def versus_sentence(cmp: PlatformComparison) -> str:
    """One plain sentence a buyer can say back: how many servers each platform needs for
    the demand, what the difference costs (and how much of it is the hypervisor's
    licence), and the measured share a guest carries of bare metal's figure."""
    bm, guest = cmp.baremetal, cmp.guest
    g = _name(guest.platform)
    if guest.not_priced:
        return f"{g} is not priced: {guest.not_priced}."
    if bm.cost is None or guest.cost is None or bm.fleet is None or guest.fleet is None:
        missing = bm if bm.fleet is None else guest
        return f"On {_name(missing.platform).lower()} no fleet in the catalog carries the demand."
    extra = cmp.extra_cost or 0.0
    # When the demand grows, the sides are compared on their plans' totals (Side.total):
    # the sentence says so, and that its server counts are the first year's, so that its
    # difference is the year-by-year totals' and never read as the one-fleet lines' above.
    plan = guest.result.cash_flow
    grows = plan is not None and bool(plan.growth) and bool(plan.rows)
    over = (
        f" over {plan.years} years of demand growing {plan.growth * 100:g}% a year (the"
        " year-by-year totals)"
        if plan is not None and grows
        else ""
    )
    # the reference said: the summary compares with the recommended option, this with
    # bare metal, and a reader must never take the one difference for the other
    if abs(extra) < 0.005:
        money = f"costs the same as on bare metal{over}"
    else:
        more = "more" if extra > 0 else "less"
        money = f"costs {amount(abs(extra), cmp.currency)} {more} than on bare metal{over}"
    what = "" if cmp.cost_basis == "hardware only" else f" ({cmp.cost_basis})"
    first = " in the first year" if grows else ""
    servers = (
        f"needs {_servers(guest.servers)} instead of {bm.servers}{first}"
        if guest.servers != bm.servers
        else f"needs the same {_servers(bm.servers)}{first}"
    )
    why = []
    # the hypervisor's own lines: a licence every platform pays (NGINX Plus) is not its
    licence = _own_licence(guest) - _own_licence(bm)
    if licence > 0.005:
        whose = "the hypervisor's" if guest.platform in HYPERVISOR_PLATFORMS else f"the {g}"
        of_it = " of it" if grows else ""
        why.append(f"{whose} licence comes to {amount(licence, cmp.currency)}{of_it}")
    cores = guest.fleet.parts[-1][0].cores_per_server
    ht = guest.fleet.parts[0][0].ht
    shares = []
    for p in cmp.demand.profiles:
        o = cmp.share_at(p, cores, ht)
        if o is not None:
            shares.append(
                f"{o.share * 100:.0f}% of bare metal's {_UNITS[p][0]}"
                f" at {o.cores} core{'s' if o.cores != 1 else ''}"
            )
    if shares:
        why.append("core for core a guest carries " + " and ".join(shares))
    tail = f": {'; '.join(why)}" if why else ""
    return f"On {g} the same demand {servers} and {money}{what}{tail}."


def versus_lines(cmp: PlatformComparison) -> list[str]:
    """The comparison under ``recommend``'s answer (text). What a guest carries of bare
    metal's figure sits under its own platform's line, the guest named (issue 62: "a guest
    carries of bare metal's RPS" sat under the KVM line with ESXi's published shares)."""
    names = [_name(s.platform) for s in cmp.sides] + [_name(p) for p, _ in cmp.unpriced]
    which = ", ".join(names[:-1]) + f" or {names[-1]}"
    out = [f"{which} for {cmp.demand.describe()} ({cmp.cost_basis}):"]
    shares = _share_lines(cmp)
    for side in cmp.sides:
        cost = "" if side.fleet is None else f"; {_cost(side, cmp.currency)}"
        out.append(f"  {_name(side.platform)}: {_side(side)}{cost}")
        if side.sized_on:
            out.append(f"    {side.sized_on}")
        plan = side.result.cash_flow
        if plan is not None and plan.rows and (plan.growth or side.result.years):
            years = "; ".join(f"year {r.year} {amount(r.total, cmp.currency)}" for r in plan.rows)
            out.append(f"    year by year: {years}; total {amount(plan.total, cmp.currency)}")
        assumed = [a for a in side.result.assumptions if a.used and a.platform == side.platform]
        out.extend(f"    {a.words()}" for a in assumed)
        out.extend(f"    {line}" for line in shares.pop(side.platform, []))
    # a guest's shares whose platform has no line of its own
    out.extend(f"  {line}" for lines in shares.values() for line in lines)
    for platform, words in cmp.unpriced:
        out.append(f"  {_name(platform)}: not priced: {words}")
    out.append("  " + versus_sentence(cmp))
    return out


def _share_lines(cmp: PlatformComparison) -> dict[str, list[str]]:
    """Per guest platform, a line a profile: ``an ESXi guest carries 83% (1c HT off), 80%
    (2c HT off) of bare metal's RPS (published)``."""
    out: dict[str, list[str]] = {}
    guests = list(dict.fromkeys(o.platform or cmp.guest.platform for o in cmp.overheads))
    for platform in guests:
        name = _name(platform)
        who = f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} guest"
        for p in cmp.demand.profiles:
            mine = [
                o
                for o in cmp.overheads
                if o.profile == p and (o.platform or cmp.guest.platform) == platform
            ]
            if mine:
                out.setdefault(platform, []).append(
                    f"{who} carries "
                    + ", ".join(f"{_share(o)} ({o.cores}c HT {o.ht})" for o in mine)
                    + f" of bare metal's {_UNITS[p][0]} ({_how(mine[0])})"
                )
    return out


@dataclass(frozen=True)
class VersusView:
    """The guide's comparison box: the sentence, the two fleets, the shares per core
    count."""

    title: str
    sentence: str
    fleets: TableBlock
    shares: TableBlock
    comparison: PlatformComparison


def versus_view(cmp: PlatformComparison) -> VersusView:
    """The comparison as the guide prints it."""
    # deferred: importing the guide's model costs recommend ~20 ms it never needs
    from sizing.report.data.model import TableBlock, TCell

    g = _name(cmp.guest.platform)
    fleets = TableBlock(
        title=f"{_which(cmp)} for {cmp.demand.describe()}",
        headers=("Platform", "Servers", "Fleet", "Total cost", "What it is made of"),
        rows=tuple(
            (
                TCell(_name(s.platform), "", False),
                TCell("–" if s.servers is None else str(s.servers)),
                TCell("–" if s.fleet is None else _fleet(s.fleet), "", False),
                TCell("–" if s.cost is None else amount(s.cost, cmp.currency)),
                TCell(_made_of(s, cmp.currency), "", False),
            )
            for s in cmp.sides
        ),
    )
    several = len({o.platform or cmp.guest.platform for o in cmp.overheads}) > 1
    who = "a guest" if several else f"{'an' if g[0] in 'AEIOU' else 'a'} {g} guest"
    shares = TableBlock(
        title=f"What {who} carries of bare metal's figure on the same server",
        headers=(
            *(("Guest",) if several else ()),
            "Cores",
            "HT",
            "Figure",
            "Guest share",
            "How it was obtained",
        ),
        rows=tuple(
            (
                *((TCell(_name(o.platform or cmp.guest.platform), "", False),) if several else ()),
                TCell(str(o.cores)),
                TCell(o.ht, "", False),
                TCell(_UNITS[o.profile][0], "", False),
                TCell(_share(o)),
                TCell(_how(o), "", False),
            )
            for o in cmp.overheads
            if o.profile in cmp.demand.profiles
        ),
    )
    return VersusView(_which(cmp), versus_sentence(cmp), fleets, shares, cmp)


def _which(cmp: PlatformComparison) -> str:
    """``Bare metal or ESXi``; ``Bare metal, ESXi or KVM`` with every priced platform."""
    names = [_name(s.platform) for s in cmp.sides]
    return ", ".join(names[:-1]) + f" or {names[-1]}"
