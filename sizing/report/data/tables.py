"""The article's tables: throughput and cost per core count, virtualization overhead,
provenance and emulated figures, as printable :class:`TableBlock` values.

The cell functions (:func:`figure_cell`, :func:`cost_cell`, :func:`overhead_cell`) are the
one implementation of the article-shaped table's cells: the guide and the terminal
(:mod:`sizing.report.render.table_text`) both lay the table out from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sizing.engine import CostCatalog
from sizing.engine.figures import series_order
from sizing.engine.table import Cell, SizingTable
from sizing.model import Figure, FigureKind
from sizing.report.data.format import (
    CONTAINER_NOTE,
    MISSING,
    PLATFORM_LABELS,
    PROFILE_LABELS,
    PROVENANCE_TEXT,
    cell_source,
    money,
    number,
    percent,
    series_label,
)
from sizing.report.data.model import OverheadPoint, TableBlock, TCell

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
    return TCell(figure_text(c), cell_source(c.source, c.emulated))


def cost_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    """A cost per 1k RPS or per 100 TPS and its provenance."""
    c = table_cell(table, cores, platform, ht, profile)
    if c is None or c.cost_per_unit is None:
        return TCell(MISSING)
    return TCell(money(c.cost_per_unit, table.currency), cell_source(c.source, c.emulated))


def overhead_cell(table: SizingTable, cores: int, ht: str, profile: str) -> TCell:
    """The virtualization overhead (%) and its provenance."""
    c = table_cell(table, cores, "hypervisor", ht, profile)
    if c is None or c.overhead_pct is None:
        return TCell(MISSING)
    return TCell(percent(c.overhead_pct), cell_source(c.source, c.emulated))


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

    @classmethod
    def of(cls, table: SizingTable) -> _Labels:
        have = {s.platform for s in table.series}
        bm_p, hv_p = column_platform(table, "baremetal"), column_platform(table, "hypervisor")
        cost_note = (
            f"Cost per unit = server cost ({table.cost_basis}) ÷ throughput of one server."
            if table.cost_basis
            else "Cost per unit = server cost ÷ throughput of one server."
        )
        return cls(
            where=table.blocks[0].title if table.blocks else "",
            bm=PLATFORM_LABELS.get(bm_p, bm_p) if bm_p in have else "Bare metal",
            hv=PLATFORM_LABELS.get(hv_p, hv_p) if hv_p in have else "Hypervisor",
            cost_note=cost_note,
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
        blocks += [_throughput_block(table, lab, ht), _cost_block(table, lab, ht)]
    if any(s.platform == "container" for s in table.series):
        blocks.append(_architecture_block(table, lab, "container",
                                          "Container (NGINX in a Podman container, measured)"))
    if has_kubernetes(table):
        blocks.append(_architecture_block(table, lab, "kubernetes",
                                          "Kubernetes architecture (NGINX Ingress Controller)"))
    return blocks


def _throughput_block(table: SizingTable, lab: _Labels, ht: str) -> TableBlock:
    bm, hv = lab.bm, lab.hv
    rows = tuple(
        (
            TCell(money(r.hardware_cost, table.currency) if r.sold else "not sold"),
            TCell(str(r.cores)),
            figure_cell(table, r.cores, "baremetal", ht, "rps"),
            figure_cell(table, r.cores, "hypervisor", ht, "rps"),
            figure_cell(table, r.cores, "baremetal", ht, "tps"),
            figure_cell(table, r.cores, "hypervisor", ht, "tps"),
        )
        for r in table.rows
    )
    return TableBlock(
        title=lab.title(f"Throughput per server, hyper-threading {ht}"),
        caption=lab.where,
        headers=("Hardware cost", "CPU cores", f"RPS – {bm}", f"RPS – {hv}",
                 f"SSL TPS – {bm}", f"SSL TPS – {hv}"),  # fmt: skip
        rows=rows,
        notes=(
            "RPS: requests per second; SSL TPS: new TLS connections (full handshakes) "
            "per second. ≥: a lower bound (the source could not saturate the server); "
            "flags in brackets beside a figure.",
        ),
        groups=(("Hardware cost", ()), ("CPU cores", ()), ("RPS", (bm, hv)),
                ("SSL TPS", (bm, hv))),  # fmt: skip
    )


def _cost_block(table: SizingTable, lab: _Labels, ht: str) -> TableBlock:
    bm, hv, cur = lab.bm, lab.hv, table.currency
    rows = tuple(
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
    return TableBlock(
        title=lab.title(f"Cost per throughput and virtualization overhead, hyper-threading {ht}"),
        caption=lab.where,
        headers=("CPU cores", f"Cost per 1k RPS – {bm}", f"Cost per 1k RPS – {hv}",
                 f"Cost per 100 SSL TPS – {bm}", f"Cost per 100 SSL TPS – {hv}",
                 "Overhead RPS", "Overhead SSL TPS"),  # fmt: skip
        rows=rows,
        notes=(lab.cost_note, OVERHEAD_NOTE),
        groups=(
            ("CPU cores", ()),
            (f"Cost per 1k RPS ({cur})", (bm, hv)),
            (f"Cost per 100 SSL TPS ({cur})", (bm, hv)),
            ("Virtualization overhead", ("RPS", "SSL TPS")),
        ),
    )


def _architecture_block(table: SizingTable, lab: _Labels, platform: str, title: str
                        ) -> TableBlock:  # fmt: skip
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
        headers=("CPU cores", "RPS", "SSL TPS (RSA)", "SSL TPS (RSA) with hyper-threading",
                 "Hardware cost", "Cost per 1k RPS"),  # fmt: skip
        rows=rows,
        notes=(lab.cost_note, CONTAINER_NOTE),
        groups=(("CPU cores", ()), ("RPS", ()), ("SSL TPS (RSA)", ("HT off", "HT on")),
                ("Hardware cost", ()), (f"Cost per 1k RPS ({cur})", ())),  # fmt: skip
    )


def overhead_points(table: SizingTable) -> list[OverheadPoint]:
    """Virtualization overhead per HT, profile and core count, within one block of bases
    (a guest and its own host's bare metal, or the reference testbed) only, with the
    engine's interval when both legs are measured with confidence intervals.

    The interval is conservative: the lowest overhead pairs the bare-metal interval's low
    end with the hypervisor interval's high end, the highest the other way round.
    """
    out: list[OverheadPoint] = []
    for sub in block_tables(table):
        for row in sub.rows:
            for c in row.cells:
                if c.platform not in GUEST or c.overhead_pct is None:
                    continue
                low, high = (None, None) if c.overhead_ci is None else c.overhead_ci
                out.append(
                    OverheadPoint(
                        ht=c.ht,
                        profile=c.profile,
                        cores=c.cores,
                        pct=c.overhead_pct,
                        low=low,
                        high=high,
                        source=cell_source(c.source, c.emulated),
                        pairs=c.overhead_pairs,
                        interval=c.overhead_interval,
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
            TCell(_how(p.pairs, p.interval, p.low is not None), numeric=False),
        )
        for p in sorted(points, key=lambda p: (p.ht, p.profile, p.cores))
    )
    return TableBlock(
        title="Virtualization overhead per core count",
        headers=("Metric", "HT", "CPU cores", "Overhead", "Interval", "How measured"),
        rows=rows,
        notes=(
            "In alternation: the bare-metal and the guest figure ran on the same host CPUs "
            "in alternation (A B, B A, ...), and the overhead is 1 minus the median of the "
            "per-pair ratios, with the distribution-free interval of that median: drift "
            "that lands on both windows of a pair cancels. Apart: the two figures were "
            "measured at different times, and the interval combines both figures' intervals "
            "(lowest: bare-metal low against guest high; highest: the other way round); each "
            "figure's interval holds its median as often as its coverage says (75% for 3 "
            "runs), so the two together hold "
            "less often than either. Reference figures carry no interval.",
        ),
    )


def ht_gain_table(table: SizingTable) -> TableBlock | None:
    """What hyper-threading adds (HT on / HT off − 1) per platform, profile and core
    count, where a series was measured both ways: paired legs (HT off and on in
    alternation) with the interval of the median of the per-pair ratios, unpaired ones
    with the interval of both figures' intervals."""
    rows: list[tuple[TCell, ...]] = []
    for sub in block_tables(table):
        for row in sub.rows:
            for c in row.cells:
                if c.ht_gain_pct is None:
                    continue
                lo, hi = (None, None) if c.ht_gain_ci is None else c.ht_gain_ci
                span = MISSING if lo is None or hi is None else f"{percent(lo)} to {percent(hi)}"
                rows.append(
                    (
                        TCell(PROFILE_LABELS.get(c.profile, c.profile), numeric=False),
                        TCell(PLATFORM_LABELS.get(c.platform, c.platform), numeric=False),
                        TCell(str(c.cores)),
                        TCell(percent(c.ht_gain_pct), cell_source(c.source, c.emulated)),
                        TCell(span),
                        TCell(_how(c.ht_gain_pairs, c.ht_gain_interval, lo is not None),
                              numeric=False),  # fmt: skip
                    )
                )
    if not rows:
        return None
    return TableBlock(
        title="Hyper-threading gain per core count",
        headers=("Metric", "Platform", "CPU cores", "HT gain", "Interval", "How measured"),
        rows=tuple(rows),
        notes=(
            "HT gain = HT on ÷ HT off − 1 at the same physical cores. In alternation: HT off "
            "and on ran on one host in alternation, and the gain is the median of the per-pair "
            "ratios with the distribution-free interval of that median. Apart: measured "
            "apart; the interval combines both figures' intervals.",
        ),
    )


def _how(pairs: int, interval: str, has_interval: bool) -> str:
    """How the two figures of a ratio were measured, in words (the engine says "paired" and
    "legs"): ``in alternation (...)`` or ``apart (from both figures' intervals, ...)``."""
    if not has_interval and not pairs:
        return MISSING
    words = interval.replace("legs'", "figures'").replace("legs", "figures")
    words = words.replace("unpaired", "apart")
    return f"in alternation ({words})" if pairs else words


def _breakable(basis_id: str) -> str:
    """A basis id that may wrap after its ``/`` and ``+`` (a zero-width space), so that a
    pooled basis' long id does not squeeze the table's other columns."""
    return basis_id.replace("/", "/\u200b").replace("+", "+\u200b")


def provenance_table(table: SizingTable) -> TableBlock:
    """Every figure of the sizing table: its basis, provenance, flags and interval."""
    rows: list[tuple[TCell, ...]] = []
    for sub in block_tables(table):
        for s in sorted(sub.series, key=lambda s: series_order((s.platform, s.ht, s.profile))):
            for r in sub.rows:
                c = r.cell(s.platform, s.ht, s.profile)
                if c is None:
                    continue
                src = cell_source(c.source, c.emulated)
                origin = c.origin
                if c.source in (FigureKind.EXTRAPOLATED, FigureKind.SHAPE):
                    # the model's parameters are in the engineers' appendix
                    model = "predicted by the fitted scaling model (engineers' appendix)"
                    origin = f"{model}; {c.origin}" if c.origin else model
                interval = MISSING
                if c.ci_low is not None and c.ci_high is not None:
                    interval = f"{number(c.ci_low)} to {number(c.ci_high)}"
                    if c.interval:
                        interval += f" ({c.interval})"
                rows.append(
                    (
                        TCell(_breakable(c.basis_id or s.basis_id), numeric=False),
                        TCell(series_label(s.platform, s.ht, s.profile), numeric=False),
                        TCell(str(c.cores)),
                        TCell(figure_text(c), src),
                        TCell(src, numeric=False),
                        TCell(interval),
                        TCell(origin or MISSING, numeric=False),
                    )
                )
    return TableBlock(
        title="Provenance of every figure",
        headers=("Basis", "Series", "Cores", "Value", "Provenance", "Interval", "Source"),
        rows=tuple(rows),
        notes=tuple(f"{k}: {v}." for k, v in PROVENANCE_TEXT.items())
        + (
            "A measured figure's interval is that of the median of its repetitions, with "
            "its coverage; a predicted figure's is a 95% bootstrap prediction interval, or "
            "for reference data the range from no gain beyond the last published count to "
            "the fit.",
        ),
    )


def emulated_table(figures: Sequence[Figure], included: bool) -> TableBlock | None:
    """Figures from software-emulated guests, shown and labelled, used only when asked."""
    if not figures:
        return None
    rows = tuple(
        (
            TCell(series_label(f.platform, f.ht, f.profile), numeric=False),
            TCell(str(f.cores)),
            TCell(number(f.value), FigureKind.EMULATED),
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
