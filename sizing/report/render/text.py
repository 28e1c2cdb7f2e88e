"""The terminal's tables and JSON documents: the sizing table, the recommendation, the
points of a run, bare metal beside hypervisor, and two runs compared.

Money, marks and numbers come from :mod:`sizing.report.data.format`, and the sizing table's
cells from :mod:`sizing.report.data.tables`: the same implementation as the printed guide.
Functions return text; the CLI prints it. tabulate is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sizing.model import FigureKind
from sizing.report.data.format import MISSING, money, number, percent
from sizing.report.explain import explain, passed_over_line
from sizing.report.render.grid import grid
from sizing.report.render.table_text import TABLE_WIDTH, wrap
from sizing.textfit import WIDTH, fold

if TYPE_CHECKING:
    from sizing.model import Figure
    from sizing.report.data.results import (
        Basis,
        Choice,
        PlatformComparison,
        Price,
        Recommendation,
    )


# -- bases -----------------------------------------------------------------------------


def basis_line(choice: Choice, width: int = WIDTH) -> str:
    """``basis: <ids> — <why>``, then ``passed over: <id> (<why>); ...`` when a basis was
    left out: what a command sizes from, why, and what it did not use (on stdout, part of
    the answer), wrapped to ``width`` columns."""
    lines = wrap(f"basis: {', '.join(choice.ids) or 'none'} — {choice.why}", width)
    if passed_over_line(choice):
        lines += wrap(passed_over_line(choice), width)
    return "\n".join(lines)


def basis_json(choice: Choice, prices: Mapping[str, Price] | None = None) -> dict[str, Any]:
    """The ``"basis"`` object of every ``--json`` document: the chosen bases (with the
    price each one is sized on, when it has its own), why, and the bases passed over."""
    doc = choice.to_dict()
    doc["ids"] = list(choice.ids)
    for b in doc["bases"]:
        if b.get("price") is None and prices and b["id"] in prices:
            b["price"] = prices[b["id"]].to_dict()
    return doc


def bases_rows(
    bases: Sequence[Basis],
    choice: Choice,
    *,
    include_virtualized: bool = False,
    include_emulated: bool = False,
) -> list[dict[str, Any]]:
    """Every basis as ``results --bases --json`` lists it: its identity, core counts per
    profile, flags, whether the default choice may use it (and why not), its price source
    and whether the default choice took it."""
    out = []
    for b in bases:
        ok, why_not = b.qualifies(
            include_virtualized=include_virtualized, include_emulated=include_emulated
        )
        doc = b.to_dict()
        doc["qualifies"] = ok
        doc["why_not"] = why_not
        doc["price_source"] = (
            b.price.source
            if b.price is not None
            else ("catalog (article 2021 prices)" if b.origin == FigureKind.REFERENCE else None)
        )
        doc["chosen"] = b.id in choice.ids
        doc["passed_over"] = dict(choice.passed_over).get(b.id, "")
        doc["figure_flags"] = sorted({fl for f in b.figures for fl in f.flags})
        out.append(doc)
    return out


def bases_text(
    rows: Sequence[Mapping[str, Any]], choice: Choice, *, verbose: bool = False, width: int = WIDTH
) -> str:
    """``results --bases``: one record per basis, then the default choice and why. Fits
    ``width`` columns: by default two lines a basis, cut with …; ``verbose`` gives every
    field in full, a line each, wrapped (issue 62: ``-v`` wraps rather than widens; it was
    one table of 349 columns)."""
    lines: list[str] = []
    for r in rows:
        cores = "; ".join(
            f"{p.upper()} {','.join(str(c) for c in cs)}" for p, cs in r["core_counts"].items()
        )
        flags = sorted(set(r["flags"]) | set(r["figure_flags"]))
        use = (
            "chosen"
            if r["chosen"]
            else (f"no: {r['why_not']}" if not r["qualifies"] else f"no: {r['passed_over']}")
        )
        if verbose:
            fields = {
                "hardware": r["hardware"]["label"],
                "workload": r["workload"]["label"],
                "core counts": cores or MISSING,
                "software": r["software"] or MISSING,
                "runs": ",".join(str(x) for x in r["runs"]) or MISSING,
                "flags": ", ".join(flags) or MISSING,
                "price": r["price_source"] or "none",
                "default choice": use,
            }
            lines += fold(r["id"], width, subsequent="    ")
            for name, value in fields.items():
                lines += fold(f"{name}: {value}", width, indent="  ", subsequent="      ")
            continue
        # A record per basis (two lines), each cut to the width: the labels are long.
        ident, hardware, workload = r["id"], r["hardware"]["label"], r["workload"]["label"]
        lines.append(f"{ident}  [{cores or MISSING}]  {use}")
        lines.append(f"    {hardware}; {workload}; flags: {','.join(flags) or MISSING}")
    if not verbose:
        lines = [x if len(x) <= width else x[: width - 1] + "…" for x in lines]
        lines += wrap("(--verbose: every field in full, a line each)", width)
    return "\n".join([*lines, "", basis_line(choice, width)])


# -- recommend ---------------------------------------------------------------------------


def _rests_on(result: Recommendation, width: int) -> list[str]:
    """The assumptions an answer rests on and the runs that would size its floors."""
    out: list[str] = []
    for a in result.assumptions:
        out.extend(wrap(a.words() + ".", width))
    for server, command, note in result.measure:
        out.extend(wrap(f"To size the {server} on its own figures: `{command}`{note}.", width))
    return out


def recommendation_text(result: Recommendation, width: int = TABLE_WIDTH) -> str:
    """The demand, the recommendation's explanation (which names the basis, the capacity
    interval it sized on and the flags), the cheapest alternatives, each with its basis
    and flags, and, for a total cost of ownership, the plan year by year and the
    assumptions with their sources; wrapped (the table cut) to ``width`` columns."""
    from sizing.report.render.terms_text import assumptions_text, cash_flow_text, shows_terms

    text = _answer_text(result, width)
    if result.recommendation is None or not shows_terms(result):
        return text
    out = [text]
    if result.cash_flow is not None:
        out += ["", *cash_flow_text(result.cash_flow, width)]
    out += ["", *assumptions_text(result, width)]
    return "\n".join(out)


def _answer_text(result: Recommendation, width: int) -> str:
    best = result.recommendation
    out = [f"Demand: {result.demand.describe()}"]
    if best is None:
        return "\n".join(out)
    for line in explain(result):
        out.extend(wrap(line, width))
    out.extend(_rests_on(result, width))
    refused: dict[str, list[str]] = {}
    for r in result.rejected:
        if r.cores_per_server is not None and r.servers_needed is None:
            refused.setdefault(r.reason, []).append(f"{r.platform} {r.cores_per_server}-core")
    for reason, what in refused.items():
        out.extend(wrap(f"Not sized: {', '.join(dict.fromkeys(what))}: {reason}.", width))
    if not result.alternatives:
        return "\n".join(out)
    shown = result.alternatives[:8]
    several = len({c.basis for c in (best, *shown)}) > 1
    profiles = result.demand.profiles
    headers = [
        "#",
        *(["basis"] if several else ["platform"]),  # a basis id names its platform
        "HT",
        "cores",
        "servers",
        "cost",
        *(["capacity RPS"] if "rps" in profiles else []),
        *(["capacity TPS"] if "tps" in profiles else []),
        "CPU use",
        "figures",
        "flags",
    ]
    rows = [
        [
            i,
            *([c.basis] if several else [c.platform]),
            c.ht,
            c.cores_per_server,
            c.servers,
            money(c.total_cost, result.currency),
            *([number(c.capacity_rps)] if "rps" in profiles else []),
            *([number(c.capacity_tps)] if "tps" in profiles else []),
            percent(c.utilization * 100),
            _sources(c.figures),
            ", ".join(c.flags),
        ]
        for i, c in enumerate(shown, start=2)
    ]
    out.append("")
    out.extend(
        wrap(
            # numbered from 2: #1 is the recommendation (issue 62: a table starting at row 2
            # said nothing of why)
            "Identical fleets (cheapest first, from #2: #1 is the recommendation above; capacity "
            "on the low end of each figure's interval, whose coverage is stated with the figure):",
            width,
        )
    )
    n = len(headers)
    lines = grid(headers, rows, left={1, n - 2, n - 1}).splitlines()
    if any(len(x) > width for x in lines):
        lines = [x if len(x) <= width else x[: width - 1] + "…" for x in lines]
        lines += wrap(f"(… cut at {width} columns: --json gives every column)", width)
    out.extend(lines)
    more = len(result.alternatives) - len(shown)
    if more > 0:
        out.append(f"... and {more} more (see --json)")
    models = {c.cores_per_server: c.server_name for c in (best, *shown) if c.server_name}
    if models:
        out.extend(
            wrap(
                "Servers: "
                + "; ".join(f"{n} cores: {name}" for n, name in sorted(models.items()))
                + ".",
                TABLE_WIDTH,
            )
        )
    return "\n".join(out)


def _sources(figures: Sequence[Figure]) -> str:
    """How a configuration's figures were obtained: ``measured``, ``shape``, ... each once."""
    return ", ".join(dict.fromkeys(f.source for f in figures))


# -- table -------------------------------------------------------------------------------


# -- points of a run -----------------------------------------------------------------------


# -- two runs compared ---------------------------------------------------------------------


def versus_text(cmp: PlatformComparison, width: int = TABLE_WIDTH) -> str:
    """Bare metal or the hypervisor for the demand, under the answer (wrapped to
    ``width`` columns)."""
    from sizing.report.data.versus import versus_lines

    out: list[str] = []
    for line in versus_lines(cmp):
        # a line's continuations indented under it: a platform's line, the lines under it
        body = line.lstrip(" ")
        at = " " * (len(line) - len(body))
        out += [line] if len(line) <= width else fold(body, width, indent=at, subsequent=at + "  ")
    return "\n".join(out)
