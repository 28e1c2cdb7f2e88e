"""The proposal's year-by-year table (the guide): what the recommended fleet's plan buys
and pays each year, part by part, the demand it carries that year, and the total the rows
add up to, as ``recommend`` prints it (:class:`sizing.engine.yearly.CashFlow`). Pure."""

from __future__ import annotations

from sizing.engine.yearly import CashFlow
from sizing.report.data.format import PLATFORM_LABELS, amount, number
from sizing.report.data.model import TableBlock, TCell

__all__ = ["cash_flow_table"]


def cash_flow_table(plan: CashFlow | None) -> TableBlock | None:
    """The plan as the guide prints it (None: no plan over whole years)."""
    if plan is None or not plan.rows:
        return None
    cur = plan.currency
    has_rps = any(r.rps is not None for r in plan.rows)
    has_tps = any(r.tps is not None for r in plan.rows)
    headers = (
        "Year",
        *(("RPS",) if has_rps else ()),
        *(("TLS handshakes/s",) if has_tps else ()),
        "Bought",
        "Servers",
        "Hardware",
        "Licence",
        "Support",
        "Power",
        "Total",
    )
    rows = tuple(
        (
            TCell(str(r.year)),
            *((TCell(number(r.rps)),) if has_rps else ()),
            *((TCell(number(r.tps)),) if has_tps else ()),
            TCell(", ".join(f"{n} × {s.split(' (', 1)[0]}" for s, n in r.bought) or "–", "", False),
            TCell(str(r.servers)),
            *(TCell(amount(v, cur)) for v in (r.hardware, r.licence, r.support, r.power)),
            TCell(amount(r.total, cur)),
        )
        for r in plan.rows
    )
    grows = f", the demand growing {plan.growth * 100:g}% a year" if plan.growth else ""
    last = ", ".join(f"{k} × {s}" for s, k in plan.last_fleet)
    notes = [
        f"Total over {len(plan.rows)} years: {amount(plan.total, cur)} (the rows add up to "
        f"it); year {plan.rows[-1].year} needs {last}. Hardware is paid the year it is "
        "bought; licences, support and power every year."
    ]
    if plan.note:
        notes.append(plan.note)
    return TableBlock(
        title=f"Year by year: {PLATFORM_LABELS.get(plan.platform, plan.platform)}, "
        f"HT {plan.ht} ({plan.years} years{grows})",
        headers=headers,
        rows=rows,
        notes=tuple(notes),
    )
