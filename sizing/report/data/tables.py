"""The article's tables: throughput and cost per core count, by architecture, as printable
:class:`TableBlock` values (the overhead, HT gain, provenance and emulated tables beside
them: :mod:`sizing.report.data.measured_tables`).

The cell functions (:func:`figure_cell`, :func:`cost_cell`, :func:`overhead_cell`) are the
one implementation of the article-shaped table's cells: the guide and the terminal
(:mod:`sizing.report.render.table_text`) both lay the table out from them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sizing.engine import CostCatalog
from sizing.engine.cell import Cell
from sizing.engine.table import SizingTable
from sizing.report.data.format import (
    CONTAINER_NOTE,
    MISSING,
    PLATFORM_LABELS,
    cell_source,
    money,
    percent,
)
from sizing.report.data.model import TableBlock, TCell

BARE = ("baremetal", "virtualized-host")  # the article's "bare metal" column
GUEST = ("esxi", "kvm", "hypervisor")  # its "hypervisor" column


def block_tables(table: SizingTable) -> list[SizingTable]:
    """One table per block of the engine's table (a group of bases: a host and its guests,
    or the reference testbed): the guide lays each out in the article's shape."""
    if not table.blocks:
        return [table]
    return [
        replace(table, rows=b.rows, series=b.series, blocks=(b,), source=b.title)
        for b in table.blocks
    ]


def column_platform(table: SizingTable, column: str) -> str:
    """The platform of a block that fills the article's ``baremetal`` or ``hypervisor``
    column (a virtualized host fills the first, labelled as what it is)."""
    candidates = BARE if column == "baremetal" else GUEST if column == "hypervisor" else (column,)
    have = {s.platform for s in table.series}
    return next((p for p in candidates if p in have), candidates[0])


def table_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> Cell | None:
    """The table's cell of one series at ``cores`` (None when the series is absent or the
    engine refused it); ``baremetal``/``hypervisor`` mean the block's column platform."""
    row = next((r for r in table.rows if r.cores == cores), None)
    if row is None:
        return None
    return row.cell(column_platform(table, platform), ht, profile)


def traditional_modes(table: SizingTable) -> list[str]:
    """The HT modes with a bare-metal or hypervisor series: one traditional table each."""
    keys = {(s.platform, s.ht) for s in table.series}
    return [ht for ht in ("off", "on") if any(p in BARE + GUEST and h == ht for p, h in keys)]


def has_kubernetes(table: SizingTable) -> bool:
    """Whether the table holds a Kubernetes series (its own table)."""
    return any(s.platform == "kubernetes" for s in table.series)


def figure_text(c: Cell) -> str:
    """A figure for print: ``≥300,000`` for a lower bound, its flags beside it."""
    flags = [f for f in c.flags if f != "emulated"]
    return c.display + (f" ({', '.join(flags)})" if flags else "")


def figure_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    """A throughput: the number (≥ for a lower bound), its flags and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None:
        return TCell(MISSING)
    return TCell(figure_text(c), cell_source(c.source, c.emulated, c.flags))


def cost_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    """A cost per 1k RPS or per 100 TPS and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None or c.cost_per_unit is None:
        return TCell(MISSING)
    return TCell(money(c.cost_per_unit, table.currency), cell_source(c.source, c.emulated, c.flags))


def overhead_cell(
    table: SizingTable, cores: int, ht: str, profile: str, platform: str = "hypervisor"
) -> TCell:
    """The virtualization overhead (%) of a guest platform's (the block's hypervisor
    column by default) and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None or c.overhead_pct is None:
        return TCell(MISSING)
    return TCell(percent(c.overhead_pct), cell_source(c.source, c.emulated, c.flags))


def sizing_tables(table: SizingTable, catalog: CostCatalog) -> list[TableBlock]:
    """Per block of bases (never mixed): the article's table per HT mode, its cost and
    overhead companion, and Kubernetes; each titled with its bases."""
    out: list[TableBlock] = []
    for sub in block_tables(table):
        out.extend(_sizing_tables(sub, catalog))
    return out


@dataclass(frozen=True)
class _Labels:
    """The block's title suffix, its column names and the notes its tables share."""

    where: str
    bm: str
    hv: str
    cost_note: str
    # every guest platform the block measured, with its label: each has its own columns
    guests: tuple[tuple[str, str], ...] = (("hypervisor", "Hypervisor"),)

    @classmethod
    def of(cls, table: SizingTable) -> _Labels:
        have = {s.platform for s in table.series}
        bm_p, hv_p = column_platform(table, "baremetal"), column_platform(table, "hypervisor")
        of = " ÷ throughput of one server on the low end of its interval, the figure sizing uses"
        cost_note = (
            f"Cost per unit = server cost ({table.cost_basis}){of} (Appendix B)."
            if table.cost_basis
            else f"Cost per unit = server cost{of} (Appendix B)."
        )
        return cls(
            where=table.blocks[0].title if table.blocks else "",
            bm=PLATFORM_LABELS.get(bm_p, bm_p) if bm_p in have else "Bare metal",
            hv=PLATFORM_LABELS.get(hv_p, hv_p) if hv_p in have else "Hypervisor",
            cost_note=cost_note,
            guests=tuple((p, PLATFORM_LABELS.get(p, p)) for p in GUEST if p in have)
            or (("hypervisor", PLATFORM_LABELS.get(hv_p, hv_p) if hv_p in have else "Hypervisor"),),
        )

    def title(self, text: str) -> str:
        return text + (f" — {self.where}" if self.where else "")


OVERHEAD_NOTE = (
    "Virtualization overhead = (bare metal − hypervisor) ÷ bare metal, shown only where "
    "both figures come from the same source and neither is extrapolated."
)


def _sizing_tables(table: SizingTable, catalog: CostCatalog) -> list[TableBlock]:
    lab = _Labels.of(table)
    blocks: list[TableBlock] = []
    for ht in traditional_modes(table):
        blocks += [_throughput_block(table, lab, ht), *_cost_block(table, lab, ht)]
    if any(s.platform == "container" for s in table.series):
        blocks.append(
            _architecture_block(
                table, lab, "container", "Container (NGINX in a Podman container, measured)"
            )
        )
    if has_kubernetes(table):
        blocks.append(
            _architecture_block(
                table, lab, "kubernetes", "Kubernetes architecture (NGINX Ingress Controller)"
            )
        )
    return blocks


def _throughput_block(table: SizingTable, lab: _Labels, ht: str) -> TableBlock:
    bm = lab.bm
    legs = [("baremetal", bm), *lab.guests]  # every measured guest beside bare metal
    rows = tuple(
        (
            TCell(money(r.hardware_cost, table.currency) if r.sold else "not sold"),
            TCell(str(r.cores)),
            *(figure_cell(table, r.cores, p, ht, "rps") for p, _ in legs),
            *(figure_cell(table, r.cores, p, ht, "tps") for p, _ in legs),
        )
        for r in table.rows
    )
    names = tuple(name for _, name in legs)
    return TableBlock(
        title=lab.title(f"Throughput per server, hyper-threading {ht}"),
        caption=lab.where,
        headers=(
            "Hardware cost",
            "CPU cores",
            *(f"RPS – {n}" for n in names),
            *(f"SSL TPS – {n}" for n in names),
        ),
        rows=rows,
        notes=(
            "RPS: requests per second; SSL TPS: new TLS connections (full handshakes) "
            "per second. ≥: a lower bound (the source could not saturate the server); "
            "flags in brackets beside a figure.",
            "Each figure is the median of its runs, or the central prediction; a "
            "recommendation sizes on the low end of its interval (Appendix B lists every "
            "interval), the figure the executive summary multiplies.",
        ),
        groups=(
            ("Hardware cost", ()),
            ("CPU cores", ()),
            ("RPS", names),
            ("SSL TPS", names),
        ),
    )


def _cost_block(table: SizingTable, lab: _Labels, ht: str) -> list[TableBlock]:
    """The cost per unit of every platform and the overhead of every guest: one table
    with one guest platform (the article's shape); with several, the overheads in a table
    of their own, so that neither runs off the page."""
    cur = table.currency
    legs = [("baremetal", lab.bm), *lab.guests]
    names = tuple(name for _, name in legs)
    several = len(lab.guests) > 1
    over = [(p, f" – {n}" if several else "") for p, n in lab.guests]
    costs = [
        (
            TCell(str(r.cores)),
            *(cost_cell(table, r.cores, p, ht, "rps") for p, _ in legs),
            *(cost_cell(table, r.cores, p, ht, "tps") for p, _ in legs),
        )
        for r in table.rows
    ]
    overheads = [
        (
            *(overhead_cell(table, r.cores, ht, "rps", p) for p, _ in over),
            *(overhead_cell(table, r.cores, ht, "tps", p) for p, _ in over),
        )
        for r in table.rows
    ]
    over_heads = (
        *(f"Overhead RPS{w}" for _, w in over),
        *(f"Overhead SSL TPS{w}" for _, w in over),
    )
    over_group = (
        "Virtualization overhead",
        tuple(f"{m}{w}" for m in ("RPS", "SSL TPS") for _, w in over),
    )
    cost_heads = (
        "CPU cores",
        *(f"Cost per 1k RPS – {n}" for n in names),
        *(f"Cost per 100 SSL TPS – {n}" for n in names),
    )
    cost_groups = (
        ("CPU cores", ()),
        (f"Cost per 1k RPS ({cur})", names),
        (f"Cost per 100 SSL TPS ({cur})", names),
    )
    if not several:
        return [
            TableBlock(
                title=lab.title(
                    f"Cost per throughput and virtualization overhead, hyper-threading {ht}"
                ),
                caption=lab.where,
                headers=(*cost_heads, *over_heads),
                rows=tuple(c + o for c, o in zip(costs, overheads, strict=True)),
                notes=(lab.cost_note, OVERHEAD_NOTE),
                groups=(*cost_groups, over_group),
            )
        ]
    return [
        TableBlock(
            title=lab.title(f"Cost per throughput, hyper-threading {ht}"),
            caption=lab.where,
            headers=cost_heads,
            rows=tuple(costs),
            notes=(lab.cost_note,),
            groups=cost_groups,
        ),
        TableBlock(
            title=lab.title(f"Virtualization overhead, hyper-threading {ht}"),
            caption=lab.where,
            headers=("CPU cores", *over_heads),
            rows=tuple(
                (TCell(str(r.cores)), *o) for r, o in zip(table.rows, overheads, strict=True)
            ),
            notes=(OVERHEAD_NOTE,),
            groups=(("CPU cores", ()), over_group),
        ),
    ]


def _architecture_block(table: SizingTable, lab: _Labels, platform: str, title: str) -> TableBlock:
    """The Kubernetes reference, or the measured container leg, in the article's shape for
    Kubernetes, each with the sentence that tells them apart."""
    cur = table.currency
    rows = tuple(
        (
            TCell(str(r.cores)),
            figure_cell(table, r.cores, platform, "off", "rps"),
            figure_cell(table, r.cores, platform, "off", "tps"),
            figure_cell(table, r.cores, platform, "on", "tps"),
            TCell(money(r.hardware_cost, cur) if r.sold else "not sold"),
            cost_cell(table, r.cores, platform, "off", "rps"),
        )
        for r in table.rows
    )
    return TableBlock(
        title=lab.title(title),
        caption=lab.where,
        headers=(
            "CPU cores",
            "RPS",
            "SSL TPS (RSA)",
            "SSL TPS (RSA) with hyper-threading",
            "Hardware cost",
            "Cost per 1k RPS",
        ),
        rows=rows,
        notes=(lab.cost_note, CONTAINER_NOTE),
        groups=(
            ("CPU cores", ()),
            ("RPS", ()),
            ("SSL TPS (RSA)", ("HT off", "HT on")),
            ("Hardware cost", ()),
            (f"Cost per 1k RPS ({cur})", ()),
        ),
    )
