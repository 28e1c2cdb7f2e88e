"""The proposal's year-by-year table (the guide): what the recommended fleet's plan buys
and pays each year, part by part, the demand it carries that year, and the total the rows
add up to, as ``recommend`` prints it (:class:`sizing.engine.yearly.CashFlow`). Pure."""

from __future__ import annotations

from sizing.engine.yearly import CashFlow
from sizing.report.data.format import PLATFORM_LABELS, amount, currency_sign, number
from sizing.report.data.model import TableBlock, TCell

__all__ = ["bought_table", "cash_flow_table"]


def cash_flow_table(plan: CashFlow | None) -> TableBlock | None:
    """What the plan pays each year, part by part (None: no plan over whole years).

    Laid out so that it fits the page for any currency, up to 10 years and amounts up to
    10⁹, every amount whole: the currency once, in the title and the headers, and the
    servers bought in a table of their own (:func:`bought_table`)."""
    if plan is None or not plan.rows:
        return None
    cur = plan.currency
    sign = cur  # "USD", "EUR": the code, once per column
    rows = tuple(
        (
            TCell(str(r.year)),
            *(TCell(_plain(v, cur)) for v in (r.hardware, r.licence, r.support, r.power, r.total)),
        )
        for r in plan.rows
    )
    grows = f", the demand growing {plan.growth * 100:g}% a year" if plan.growth else ""
    last = ", ".join(f"{k} × {s}" for s, k in plan.last_fleet)
    notes = [
        f"Total over {len(plan.rows)} years: {amount(plan.total, cur)} (the rows add up to "
        f"it); year {plan.rows[-1].year} needs {last}. Hardware is paid the year it is "
        "bought; licences, support and power every year. Every amount in "
        f"{cur}."
    ]
    if plan.note:
        notes.append(plan.note)
    return TableBlock(
        title=f"Year by year: {PLATFORM_LABELS.get(plan.platform, plan.platform)}, "
        f"HT {plan.ht} ({plan.years} years{grows}), in {cur}",
        headers=(
            "Year",
            *(f"{h} ({sign})" for h in ("Hardware", "Licence", "Support", "Power", "Total")),
        ),
        rows=rows,
        notes=tuple(notes),
    )


def bought_table(plan: CashFlow | None) -> TableBlock | None:
    """The demand each year of the plan, the servers bought and those in service."""
    if plan is None or not plan.rows:
        return None
    has_rps = any(r.rps is not None for r in plan.rows)
    has_tps = any(r.tps is not None for r in plan.rows)
    rows = tuple(
        (
            TCell(str(r.year)),
            *((TCell(number(r.rps)),) if has_rps else ()),
            *((TCell(number(r.tps)),) if has_tps else ()),
            TCell(", ".join(f"{n} × {s.split(' (', 1)[0]}" for s, n in r.bought) or "–", "", False),
            TCell(str(r.servers)),
        )
        for r in plan.rows
    )
    return TableBlock(
        title=f"Year by year: the demand and the servers bought "
        f"({PLATFORM_LABELS.get(plan.platform, plan.platform)}, HT {plan.ht})",
        headers=(
            "Year",
            *(("RPS",) if has_rps else ()),
            *(("TLS handshakes/s",) if has_tps else ()),
            "Bought",
            "Servers",
        ),
        rows=rows,
    )


def _plain(v: float, currency: str) -> str:
    """An amount without its currency (the column's header says it), whole."""
    return amount(v, currency).removeprefix(currency_sign(currency))
