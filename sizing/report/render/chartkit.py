"""The charts' toolkit: the registry (:class:`Chart`, :func:`register`), the greyscale-safe
styles and the matplotlib plumbing (imported lazily, Agg backend) shared by the chart
modules :mod:`sizing.report.render.sizing_charts` and
:mod:`sizing.report.render.latency_charts`."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sizing.report.data.format import money
from sizing.report.data.model import Guide
from sizing.report.render.printable import printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

# Colours of clearly different lightness (dark navy, mid teal, light amber, grey).
# Every basis platform has a style of its own: a platform without one would fall back to
# a grey "x", whose white edge (a measured figure's) makes it invisible in the legend.
PLATFORM_STYLE: dict[str, dict[str, Any]] = {
    "baremetal": {"color": "#1c3553", "marker": "o"},
    "virtualized-host": {"color": "#5b2a4a", "marker": "o"},
    "hypervisor": {"color": "#3d8c86", "marker": "s"},
    "esxi": {"color": "#3d8c86", "marker": "s"},
    "kvm": {"color": "#c98f2a", "marker": "^"},
    "kubernetes": {"color": "#7a7a7a", "marker": "v"},
    "container": {"color": "#7a7a7a", "marker": "v"},
}
PLATFORM_LINES = {
    "baremetal": "-",
    "virtualized-host": "-",
    "hypervisor": "--",
    "esxi": "--",
    "kvm": "-.",
    "kubernetes": ":",
    "container": ":",
}
HT_MARKERS = {
    "on": {
        "baremetal": "D",
        "virtualized-host": "D",
        "hypervisor": "h",  # a filled plus ("P") reads as a thin cross at print size
        "esxi": "h",
        "kvm": "p",
        "kubernetes": "<",
        "container": "<",
    }
}
MIN_TICK_GAP_IN = 0.18  # the least distance between two tick labels' centres, in inches
CORE_MARKERS = {1: "o", 2: "s", 4: "^", 8: "D", 16: "v", 32: "P"}
CORE_COLOURS = {1: "#1c3553", 2: "#3d8c86", 4: "#c98f2a", 8: "#7a7a7a"}
# Latency series: colour and marker per curve (the lightness steps as above).
SERIES_STYLES: tuple[tuple[str, str], ...] = (
    ("#1c3553", "o"),
    ("#3d8c86", "s"),
    ("#c98f2a", "^"),
    ("#7a7a7a", "D"),
    ("#5b2a4a", "v"),
    ("#9fb8c9", "P"),
)
TEXT = "#222222"
GRID = "#d9d9d9"
WIDTH_IN = 6.7  # the text width of an A4/Letter page with 20 mm margins


@dataclass(frozen=True)
class Chart:
    """A rendered chart: its id, title, caption and SVG text."""

    id: str
    title: str
    caption: str
    svg: str


# A builder returns one chart, several (a long chart split over pages), or None (no data).
ChartBuilder = Callable[[Guide], "Chart | Sequence[Chart] | None"]
CHARTS: dict[str, ChartBuilder] = {}


def register(chart_id: str) -> Callable[[ChartBuilder], ChartBuilder]:
    """Register a chart builder under ``chart_id`` (see the module docstring)."""

    def deco(fn: ChartBuilder) -> ChartBuilder:
        CHARTS[chart_id] = fn
        return fn

    return deco


# -- matplotlib plumbing ---------------------------------------------------------------


def matplotlib_agg() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib


@contextmanager
def chart_style() -> Iterator[None]:
    mpl = matplotlib_agg()
    rc = {
        "font.family": "DejaVu Sans",
        "font.size": 8.0,
        "axes.titlesize": 9.0,
        "axes.titleweight": "bold",
        "axes.labelsize": 8.0,
        "axes.edgecolor": "#555555",
        "axes.labelcolor": TEXT,
        "axes.linewidth": 0.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.axisbelow": True,
        "grid.color": GRID,
        "grid.linewidth": 0.5,
        "xtick.color": TEXT,
        "ytick.color": TEXT,
        "xtick.labelsize": 7.5,
        "ytick.labelsize": 7.5,
        "legend.fontsize": 7.0,
        "legend.frameon": False,
        "lines.linewidth": 1.4,
        "lines.markersize": 5.5,
        "svg.fonttype": "none",  # text stays text: searchable in the PDF, crisp in print
        "svg.hashsalt": "sizing-guide",  # stable ids: the same data gives the same SVG
    }
    with mpl.rc_context(rc):
        yield


def new_figure(ncols: int, height: float = 3.0) -> tuple[MplFigure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def to_svg(fig: MplFigure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    # drop the XML prolog and doctype (inline-safe); a label's control characters escaped
    # (an SVG may not hold them, and they would act in the PDF): sizing writes none itself
    return printable(text[text.index("<svg") :], keep="\n\t\r")


def thousands_axis(ax: Axes, axis: str = "y", prefix: str = "") -> None:
    from matplotlib.ticker import FuncFormatter

    def fmt(v: float, _pos: int) -> str:
        if abs(v) >= 1000:
            return f"{prefix}{v / 1000:,.0f}k" if v % 1000 == 0 else f"{prefix}{v / 1000:,.1f}k"
        return f"{prefix}{v:,.0f}"

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(fmt))


def money_axis(ax: Axes, currency: str) -> None:
    """Amounts on the y axis, exact: every tick with cents when any tick has cents ($12.50
    never printed as "$12"), whole units when none has."""
    from matplotlib.ticker import FuncFormatter

    def fmt(v: float, _pos: int) -> str:
        locs = ax.yaxis.get_majorticklocs()
        cents = any(abs(x * 100 - round(x * 100)) < 1e-6 and round(x * 100) % 100 for x in locs)
        return money(v, currency, cents=cents)

    ax.yaxis.set_major_formatter(FuncFormatter(fmt))


def series_style(platform: str, ht: str) -> dict[str, Any]:
    style = dict(PLATFORM_STYLE.get(platform, {"color": "#555555", "marker": "x"}))
    if ht in HT_MARKERS:
        style["marker"] = HT_MARKERS[ht].get(platform, "x")
    return style


def cores_axis(ax: Axes, cores: Sequence[int]) -> None:
    """The core counts as the x axis, scaled to what the axes drew (never running empty to
    a catalog core count nothing was drawn at), with ticks that never collide."""
    drawn = [float(x) for line in ax.get_lines() for x in line.get_xdata(orig=False)]  # type: ignore[union-attr, arg-type]
    top = max(drawn) if drawn else max(cores)
    shown = sorted({c for c in cores if c <= top + 1e-9}) or sorted(cores)
    span = top + 0.6
    ax.set_xlim(0, span)
    width = WIDTH_IN * ax.get_position().width  # every chart is a page's text wide
    ax.set_xticks(spaced_ticks(shown, span, width))
    ax.set_xlabel("CPU cores per server")


def spaced_ticks(ticks: Sequence[int], span: float, width_in: float) -> list[int]:
    """The ticks whose labels stay at least :data:`MIN_TICK_GAP_IN` apart on an axis of
    ``span`` units and ``width_in`` inches: the smallest and the largest are kept, those
    crowding a kept neighbour are left out ("1" and "2" never print as "12")."""
    if not ticks:
        return []
    per_unit = width_in / span if span > 0 else 0.0
    kept = [ticks[0]]
    for t in ticks[1:]:
        if (t - kept[-1]) * per_unit >= MIN_TICK_GAP_IN:
            kept.append(t)
    last = ticks[-1]
    if kept[-1] != last:  # the largest always shows: it replaces a crowding neighbour
        while len(kept) > 1 and (last - kept[-1]) * per_unit < MIN_TICK_GAP_IN:
            kept.pop()
        kept.append(last)
    return kept


def several_ht_modes(guide: Guide) -> bool:
    return len({s.ht for s in guide.table.series}) > 1


# -- the charts ------------------------------------------------------------------------


def shared_legend(
    fig: MplFigure, axes: Sequence[Axes], extrapolated: bool = True, lower_bound: bool = False
) -> None:
    """One legend below the panels: every series once, then the styles of what else was
    drawn (a predicted figure, a lower bound), only when it was drawn."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    grey: dict[str, Any] = {
        "color": "#555555",
        "markerfacecolor": "white",
        "markeredgecolor": "#555555",
    }
    if extrapolated:
        handles.append(Line2D([], [], linestyle=(0, (1.2, 1.6)), marker="o", **grey))
        labels.append("predicted by the fitted model")
    if lower_bound:
        handles.append(Line2D([], [], linestyle="none", marker=r"$\geq$", color="#555555"))
        labels.append("≥ lower bound (client-bound)")
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)))
