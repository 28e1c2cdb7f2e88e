"""What the measurements say beside the sizing table, as printable :class:`TableBlock`
values: the virtualization overhead (paired or not), the hyper-threading gain, where every
figure came from (provenance), and the emulated figures left out."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine.figures import series_order
from sizing.engine.overhead import GUEST_KINDS
from sizing.engine.table import SizingTable
from sizing.model import Figure, FigureKind
from sizing.report.data.format import (
    MISSING,
    PLATFORM_LABELS,
    PROFILE_LABELS,
    cell_source,
    number,
    percent,
    provenance_text,
    series_label,
)
from sizing.report.data.model import OverheadPoint, TableBlock, TCell
from sizing.report.data.tables import block_tables, figure_text


def overhead_points(table: SizingTable) -> list[OverheadPoint]:
    """Virtualization overhead per HT, profile and core count (a container's too), within
    one block of bases (a guest and its own host's bare metal, or the reference testbed)
    only, with the engine's interval when both legs are measured with confidence intervals.

    The interval is conservative: the lowest overhead pairs the bare-metal interval's low
    end with the hypervisor interval's high end, the highest the other way round.
    """
    out: list[OverheadPoint] = []
    for sub in block_tables(table):
        for row in sub.rows:
            for c in row.cells:
                if c.platform not in GUEST_KINDS or c.overhead_pct is None:
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
                        source=cell_source(c.source, c.emulated, c.flags),
                        pairs=c.overhead_pairs,
                        interval=c.overhead_interval,
                        platform=c.platform,
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
            TCell(p.group, numeric=False),
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
        for p in sorted(points, key=lambda p: (p.ht, p.profile, p.platform == "container", p.cores))
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
                        TCell(percent(c.ht_gain_pct), cell_source(c.source, c.emulated, c.flags)),
                        TCell(span),
                        TCell(
                            _how(c.ht_gain_pairs, c.ht_gain_interval, lo is not None), numeric=False
                        ),
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
    made_up = False  # a figure examples/simulated.py made up: the legend names its mark
    for sub in block_tables(table):
        for s in sorted(sub.series, key=lambda s: series_order((s.platform, s.ht, s.profile))):
            for r in sub.rows:
                c = r.cell(s.platform, s.ht, s.profile)
                if c is None:
                    continue
                src = cell_source(c.source, c.emulated, c.flags)
                made_up = made_up or src == FigureKind.SIMULATED
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
        notes=tuple(f"{k}: {v}." for k, v in provenance_text(simulated=made_up).items())
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
