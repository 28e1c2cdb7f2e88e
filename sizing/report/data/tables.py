"""The article's tables: throughput and cost per core count, virtualization overhead,
provenance and emulated figures, as printable :class:`TableBlock` values.

The cell functions (:func:`figure_cell`, :func:`cost_cell`, :func:`overhead_cell`) are the
one implementation of the article-shaped table's cells: the guide and the terminal
(:mod:`sizing.report.render.text`) both lay the table out from them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine import CostCatalog
from sizing.engine.figures import series_order
from sizing.engine.table import Cell, SizingTable, overhead_bounds, overhead_pct
from sizing.model import Figure
from sizing.report.data.format import (
    MISSING,
    PROFILE_LABELS,
    PROVENANCE_TEXT,
    cell_source,
    money,
    number,
    percent,
    series_label,
)
from sizing.report.data.model import OverheadPoint, TableBlock, TCell


def table_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> Cell | None:
    """The table's cell of one series at ``cores`` (None when the series is absent)."""
    row = next(r for r in table.rows if r.cores == cores)
    return row.cell(platform, ht, profile)


def traditional_modes(table: SizingTable) -> list[str]:
    """The HT modes with a bare-metal or hypervisor series: one traditional table each."""
    keys = {s.key for s in table.series}
    return [
        ht
        for ht in ("off", "on")
        if any(k[0] in ("baremetal", "hypervisor") and k[1] == ht for k in keys)
    ]


def has_kubernetes(table: SizingTable) -> bool:
    """Whether the table holds a Kubernetes series (its own table)."""
    return any(s.key[0] == "kubernetes" for s in table.series)


def figure_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    """A throughput: the number and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None:
        return TCell(MISSING)
    return TCell(number(c.value), cell_source(c.source, c.emulated))


def cost_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    """A cost per 1k RPS or per 100 TPS and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None:
        return TCell(MISSING)
    return TCell(money(c.cost_per_unit, table.currency), cell_source(c.source, c.emulated))


def overhead_cell(table: SizingTable, cores: int, ht: str, profile: str) -> TCell:
    """The virtualization overhead (%) and its provenance."""
    c = table_cell(table, cores, "hypervisor", ht, profile)
    if c is None or c.overhead_pct is None:
        return TCell(MISSING)
    return TCell(percent(c.overhead_pct), cell_source(c.source, c.emulated))


def sizing_tables(table: SizingTable, catalog: CostCatalog) -> list[TableBlock]:
    """The article's table per HT mode, its cost and overhead companion, and Kubernetes."""
    cur = table.currency
    blocks: list[TableBlock] = []
    cost_note = (
        f"Cost per unit = server cost ({table.cost_basis}) ÷ throughput of one server."
        if table.cost_basis
        else "Cost per unit = server cost ÷ throughput of one server."
    )
    overhead_note = (
        "Virtualization overhead = (bare metal − hypervisor) ÷ bare metal, shown only where "
        "both figures come from the same source and neither is extrapolated."
    )
    for ht in traditional_modes(table):
        rows = tuple(
            (
                TCell(money(r.hardware_cost, cur)),
                TCell(str(r.cores)),
                figure_cell(table, r.cores, "baremetal", ht, "rps"),
                figure_cell(table, r.cores, "hypervisor", ht, "rps"),
                figure_cell(table, r.cores, "baremetal", ht, "tps"),
                figure_cell(table, r.cores, "hypervisor", ht, "tps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title=f"Throughput per server, traditional architecture, hyper-threading {ht}",
                headers=(
                    "Hardware cost",
                    "CPU cores",
                    "RPS – Bare metal",
                    "RPS – Hypervisor",
                    "SSL TPS – Bare metal",
                    "SSL TPS – Hypervisor",
                ),
                rows=rows,
                notes=(
                    "RPS: requests per second; SSL TPS: new TLS connections (full handshakes) "
                    "per second.",
                ),
                groups=(
                    ("Hardware cost", ()),
                    ("CPU cores", ()),
                    ("RPS", ("Bare metal", "Hypervisor")),
                    ("SSL TPS", ("Bare metal", "Hypervisor")),
                ),
            )
        )
        cost_rows = tuple(
            (
                TCell(str(r.cores)),
                cost_cell(table, r.cores, "baremetal", ht, "rps"),
                cost_cell(table, r.cores, "hypervisor", ht, "rps"),
                cost_cell(table, r.cores, "baremetal", ht, "tps"),
                cost_cell(table, r.cores, "hypervisor", ht, "tps"),
                overhead_cell(table, r.cores, ht, "rps"),
                overhead_cell(table, r.cores, ht, "tps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title=f"Cost per throughput and virtualization overhead, hyper-threading {ht}",
                headers=(
                    "CPU cores",
                    "Cost per 1k RPS – Bare metal",
                    "Cost per 1k RPS – Hypervisor",
                    "Cost per 100 SSL TPS – Bare metal",
                    "Cost per 100 SSL TPS – Hypervisor",
                    "Overhead RPS",
                    "Overhead SSL TPS",
                ),
                rows=cost_rows,
                notes=(cost_note, overhead_note),
                groups=(
                    ("CPU cores", ()),
                    (f"Cost per 1k RPS ({cur})", ("Bare metal", "Hypervisor")),
                    (f"Cost per 100 SSL TPS ({cur})", ("Bare metal", "Hypervisor")),
                    ("Virtualization overhead", ("RPS", "SSL TPS")),
                ),
            )
        )
    if has_kubernetes(table):
        rows = tuple(
            (
                TCell(str(r.cores)),
                figure_cell(table, r.cores, "kubernetes", "off", "rps"),
                figure_cell(table, r.cores, "kubernetes", "off", "tps"),
                figure_cell(table, r.cores, "kubernetes", "on", "tps"),
                TCell(money(r.hardware_cost, cur)),
                cost_cell(table, r.cores, "kubernetes", "off", "rps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title="Kubernetes architecture (NGINX Ingress Controller)",
                headers=(
                    "CPU cores",
                    "RPS",
                    "SSL TPS (RSA)",
                    "SSL TPS (RSA) with hyper-threading",
                    "Hardware cost",
                    "Cost per 1k RPS",
                ),
                rows=rows,
                notes=(cost_note,),
                groups=(
                    ("CPU cores", ()),
                    ("RPS", ()),
                    ("SSL TPS (RSA)", ("HT off", "HT on")),
                    ("Hardware cost", ()),
                    (f"Cost per 1k RPS ({cur})", ()),
                ),
            )
        )
    return blocks


def overhead_points(table: SizingTable) -> list[OverheadPoint]:
    """Virtualization overhead per HT, profile and core count, with an interval when the
    two legs are measured with confidence intervals.

    The interval is conservative: the lowest overhead pairs the bare-metal interval's low
    end with the hypervisor interval's high end, the highest the other way round.
    """
    series = {s.key: s for s in table.series}
    out: list[OverheadPoint] = []
    for (platform, ht, profile), hv in series.items():
        bm = series.get(("baremetal", ht, profile))
        if platform != "hypervisor" or bm is None:
            continue
        for row in table.rows:
            f_bm, f_hv = bm.at(row.cores), hv.at(row.cores)
            pct = overhead_pct(f_bm, f_hv)
            if pct is None:
                continue
            bounds = overhead_bounds(f_bm.ci_low, f_bm.ci_high, f_hv.ci_low, f_hv.ci_high)
            low, high = (None, None) if bounds is None else bounds
            out.append(
                OverheadPoint(
                    ht=ht,
                    profile=profile,
                    cores=row.cores,
                    pct=pct,
                    low=low,
                    high=high,
                    source=cell_source(f_bm.source, f_bm.emulated or f_hv.emulated),
                )
            )
    return out


def overhead_table(points: Sequence[OverheadPoint]) -> TableBlock | None:
    """The overhead with its interval, one row per HT, profile and core count.

    Only when some overhead has an interval: the cost table already shows the rest.
    """
    if not any(p.low is not None for p in points):
        return None
    rows = tuple(
        (
            TCell(PROFILE_LABELS.get(p.profile, p.profile), numeric=False),
            TCell(p.ht, numeric=False),
            TCell(str(p.cores)),
            TCell(percent(p.pct), p.source),
            TCell(
                MISSING
                if p.low is None or p.high is None
                else f"{percent(p.low)} to {percent(p.high)}"
            ),
        )
        for p in sorted(points, key=lambda p: (p.ht, p.profile, p.cores))
    )
    return TableBlock(
        title="Virtualization overhead per core count",
        headers=("Metric", "HT", "CPU cores", "Overhead", "Interval (95% per leg)"),
        rows=rows,
        notes=(
            "The interval combines the 95% confidence intervals of the bare-metal and the "
            "hypervisor figure (lowest: bare-metal low against hypervisor high; highest: "
            "the other way round). Reference figures carry no interval.",
        ),
    )




def provenance_table(table: SizingTable) -> TableBlock:
    """Every figure of the sizing table, its provenance and where it comes from."""
    rows: list[tuple[TCell, ...]] = []
    fits = {s.key: s for s in table.series}
    for s in sorted(table.series, key=lambda s: series_order(s.key)):
        for r in table.rows:
            c = r.cell(*s.key)
            if c is None:
                continue
            src = cell_source(c.source, c.emulated)
            observed = next((f for f in s.observed if f.cores == c.cores), None)
            origin = c.origin
            if c.source == "extrapolated":
                origin = f"{fits[s.key].fit.describe()}, from the {s.basis} figures"
            interval = MISSING
            if observed is not None and observed.ci_low is not None and observed.ci_high:
                interval = f"{number(observed.ci_low)} to {number(observed.ci_high)}"
            rows.append(
                (
                    TCell(series_label(*s.key), numeric=False),
                    TCell(str(c.cores)),
                    TCell(number(c.value), src),
                    TCell(src, numeric=False),
                    TCell(interval),
                    TCell(origin or MISSING, numeric=False),
                )
            )
    return TableBlock(
        title="Provenance of every figure",
        headers=("Series", "Cores", "Value", "Provenance", "95% interval", "Source"),
        rows=tuple(rows),
        notes=tuple(f"{k}: {v}." for k, v in PROVENANCE_TEXT.items()),
    )


def emulated_table(figures: Sequence[Figure], included: bool) -> TableBlock | None:
    """Figures from software-emulated guests, shown and labelled, used only when asked."""
    if not figures:
        return None
    rows = tuple(
        (
            TCell(series_label(f.platform, f.ht, f.profile), numeric=False),
            TCell(str(f.cores)),
            TCell(number(f.value), "emulated"),
            TCell(f.unit, numeric=False),
            TCell(f.origin or MISSING, numeric=False),
        )
        for f in sorted(
            figures, key=lambda f: (series_order((f.platform, f.ht, f.profile)), f.cores)
        )
    )
    note = (
        "These figures are used in this guide's sizing because it was asked for."
        if included
        else "These figures are not used for sizing: a software-emulated guest (QEMU TCG) "
        "runs far slower than a guest on a real hypervisor."
    )
    return TableBlock(
        title="Figures measured in software-emulated guests",
        headers=("Series", "Cores", "Value", "Unit", "Source"),
        rows=rows,
        notes=(note,),
    )
