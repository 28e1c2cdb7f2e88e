"""The commercial terms in the terminal: the plan year by year (what is bought, and what
is paid each year, part by part) and the assumptions the costs rest on, each with its
source. Within 100 columns."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from sizing.report.data.assumptions import assumptions
from sizing.report.data.format import amount, currency_sign, money, number
from sizing.report.render.grid import grid
from sizing.report.render.table_text import TABLE_WIDTH, wrap

if TYPE_CHECKING:  # the engine's answer, formatted here, never computed
    from sizing.report.data.results import CashFlow, Recommendation

__all__ = ["assumptions_json", "assumptions_text", "cash_flow_text", "shows_terms"]


def assumptions_json(result: Recommendation) -> list[dict[str, str]]:
    """The ``"assumptions"`` of ``recommend --json``: item, value and source each."""
    return [a.to_dict() for a in assumptions(result)]


def shows_terms(result: Recommendation) -> bool:
    """Whether the terminal shows the plan and the assumptions: when the answer is a total
    cost of ownership (the catalog states a period) or --years/--growth asked for it."""
    cat = result.catalog
    return bool(
        result.years is not None
        or result.growth
        or (cat is not None and cat.amortisation_months is not None)
    )


def _short(label: str) -> str:
    """``PowerEdge R460`` of ``PowerEdge R460 (12 cores)``: the table's width."""
    return label.split(" (", 1)[0]


def cash_flow_text(plan: CashFlow, width: int = TABLE_WIDTH) -> list[str]:
    """The plan as a table, a line of its total and the fleet the last year needs."""
    cur = plan.currency
    grows = f", the demand growing {plan.growth * 100:g}% a year" if plan.growth else ""
    names = list(dict.fromkeys(n for r in plan.rows for n, _ in r.licences))
    which = f" ({' + '.join(names)})" if names else ""
    head = (
        f"Year by year ({plan.years} years{grows}; {plan.platform}, HT {plan.ht}; "
        f"hardware when bought, licences{which}, support and power each year):"
    )
    lines = _year_table(plan, width)
    last = ", ".join(f"{k} × {s}" for s, k in plan.last_fleet)
    tail = (
        f"Total over {len(plan.rows)} years: {amount(plan.total, cur)} (the rows add up to it,"
        f" to the cent); year {plan.rows[-1].year} needs {last}."
        if plan.rows
        else "No year could be planned."
    )
    out = [*wrap(head, width), *lines, *_licence_lines(plan, width), *wrap(tail, width)]
    if plan.note:
        out.extend(wrap(f"Stopped: {plan.note}.", width))
    return out


_MONEY = ("hardware", "licence", "support", "power", "total")


def _year_table(plan: CashFlow, width: int) -> list[str]:
    """The plan's rows within ``width``, every amount whole (to the cent, as the total
    line promises), by rule: one table; else the demand and the servers bought apart
    from the money; else the money's currency in its headers. Only the names of the
    servers bought are ever cut (``…``), never an amount."""
    cur = plan.currency
    has_rps = any(r.rps is not None for r in plan.rows)
    has_tps = any(r.tps is not None for r in plan.rows)
    what = [
        "year",
        *(["RPS"] if has_rps else []),
        *(["TPS"] if has_tps else []),
        "bought",
        "servers",
    ]
    left = {len(what) - 2}
    demand = [
        [
            str(r.year),
            *([number(r.rps)] if has_rps else []),
            *([number(r.tps)] if has_tps else []),
            ", ".join(f"{n} × {_short(s)}" for s, n in r.bought) or "–",
            str(r.servers),
        ]
        for r in plan.rows
    ]

    def paid(sign: bool) -> list[list[str]]:
        return [
            [
                amount(v, cur) if sign else amount(v, cur).removeprefix(currency_sign(cur))
                for v in (r.hardware, r.licence, r.support, r.power, r.total)
            ]
            for r in plan.rows
        ]

    one = grid([*what, *_MONEY], [a + b for a, b in zip(demand, paid(True), strict=True)], left)
    if _fits(one, width):
        return one.splitlines()
    money_table = grid(
        ["year", *_MONEY], [[str(r.year), *p] for r, p in zip(plan.rows, paid(True), strict=True)]
    )
    if not _fits(money_table, width):
        sign = currency_sign(cur).strip()
        money_table = grid(
            ["year", *(f"{h} ({sign})" for h in _MONEY)],
            [[str(r.year), *p] for r, p in zip(plan.rows, paid(False), strict=True)],
        )
    if not _fits(money_table, width):
        # too wide even so: a sentence a year, wrapped, each amount whole
        said = [
            f"year {r.year}: "
            + " + ".join(f"{h} {v}" for h, v in zip(_MONEY[:-1], p[:-1], strict=True))
            + f" = {p[-1]}"
            for r, p in zip(plan.rows, paid(True), strict=True)
        ]
        money_table = "\n".join(x for line in said for x in wrap(line, width))
    first = [
        x if len(x) <= width else x[: width - 1] + "…"
        for x in grid(what, demand, left).splitlines()
    ]
    return [*first, "", *money_table.splitlines()]


def _fits(table: str, width: int) -> bool:
    return all(len(x) <= width for x in table.splitlines())


def _licence_lines(plan: CashFlow, width: int) -> list[str]:
    """The licence column line by line, each year, when there are several lines:
    ``year  vSphere Foundation  NGINX Plus`` under the plan."""
    names = list(dict.fromkeys(n for r in plan.rows for n, _ in r.licences))
    if len(names) < 2:
        return []
    cur = plan.currency
    rows = [
        [r.year, *(money(dict(r.licences).get(n, 0.0), cur, cents=False) for n in names)]
        for r in plan.rows
    ]
    lines = grid(["year", *names], rows).splitlines()
    lines = [x if len(x) <= width else x[: width - 1] + "…" for x in lines]
    return ["Licences each year, line by line (the licence column above):", *lines]


def assumptions_text(result: Recommendation, width: int = TABLE_WIDTH) -> list[str]:
    """Every assumption the costs rest on, one per line, with its source."""
    out = ["Assumptions (each with its source in brackets):"]
    for a in assumptions(result):
        out.extend(
            textwrap.wrap(
                f"{a.item}: {a.value} [{a.source}]",
                width=width,
                initial_indent="  ",
                subsequent_indent="    ",
                break_on_hyphens=False,
            )
        )
    return out
