"""The sizing charts: throughput and cost per core count, and the virtualization overhead
(what the servers' CPUs did and how close they came to their limits: ``host_charts``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.model import PROFILE_UNITS, FigureKind, SizingMetric
from sizing.report.data.curves import SeriesCurve, series_id
from sizing.report.data.format import PLATFORM_LABELS, PROFILE_LABELS, cell_source, money
from sizing.report.data.model import Guide
from sizing.report.render.chartkit import (
    TEXT,
    Chart,
    chart_style,
    cores_axis,
    money_axis,
    new_figure,
    register,
    series_style,
    several_ht_modes,
    shared_legend,
    thousands_axis,
    to_svg,
)

NO_CURVE = "no-curve:"  # a drawn tag: the series named after it has no curve


@register("throughput")
def throughput_chart(guide: Guide) -> Chart | None:
    """Throughput vs cores per platform: observed points and the fitted curve."""
    series = [s for s in guide.table.series if s.profile in tuple(SizingMetric)]
    if not series:
        return None
    profiles = [p for p in ("rps", "tps") if any(s.profile == p for s in series)]
    cores = [r.cores for r in guide.table.rows]
    curves = {c.series: c for c in guide.curves}
    multi_ht = several_ht_modes(guide)
    drawn: set[str] = set()
    with chart_style():
        fig, axes = new_figure(len(profiles))
        for ax, profile in zip(axes, profiles, strict=True):
            for s in (s for s in series if s.profile == profile):
                drawn |= _plot_series(ax, s, curves.get(series_id(s)), multi_ht)
            cores_axis(ax, cores)
            thousands_axis(ax)
            # an arrow does not widen the axis: make room for it above a lower bound
            bounds = [
                f.value * 1.18
                for s in series
                if s.profile == profile
                for f in s.observed
                if f.lower_bound
            ]
            ax.set_ylim(0, max([ax.get_ylim()[1], *bounds]))
            unit = PROFILE_UNITS[profile]
            ax.set_ylabel(f"{PROFILE_LABELS[profile]} ({unit})")
            ax.set_title(f"{PROFILE_LABELS[profile]} per server")
        shared_legend(
            fig, axes, extrapolated="extrapolated" in drawn, lower_bound="lower-bound" in drawn
        )
        svg = to_svg(fig)
    return Chart(
        id="throughput",
        title="Throughput against CPU cores",
        caption=_throughput_caption(drawn, sorted({_shown_origin(s) for s in series})),
        svg=svg,
    )


def _throughput_caption(drawn: set[str], kinds: Sequence[str]) -> str:
    """The caption of Figure 1: what was drawn, and nothing else; ``kinds``: how its
    observed figures are said (measured, reference, simulated, emulated)."""
    parts = [
        f"Filled markers: observed figures ({' or '.join(kinds)}); solid line: the "
        "fitted scaling model over the core counts observed in full."
    ]
    if "lower-bound" in drawn:
        parts.append(
            "Open marker with an upward arrow (≥): a lower bound, the most the "
            "source's load generators could drive; the server's true figure is "
            "higher, by an amount nobody measured."
        )
    if "extrapolated" in drawn:
        parts.append(
            "Dotted line and hollow markers: predicted beyond the observed core "
            "counts by the fitted model."
        )
    if "errorbars" in drawn:
        parts.append(
            "Error bars: the interval of each measured figure's median (the range "
            "of its repetitions)."
        )
    if "erratic" in drawn:
        parts.append(
            "Crosses (×): erratic figures, a repetition below half or above twice the "
            "median; drawn as measured, never fitted or sized on."
        )
    bare = sorted(d[len(NO_CURVE) :] for d in drawn if d.startswith(NO_CURVE))
    if bare:
        parts.append(
            f"No curve for {', '.join(bare)}: none of its figures can be fitted (each is "
            "erratic or a lower bound); re-measure them."
        )
    return " ".join(parts)


def _lower_bound(ax: Any, f: Any, colour: str, marker: str) -> None:
    """A client-bound figure: an open marker, an arrow up and "≥" with its value."""
    ax.plot(
        [f.cores],
        [f.value],
        linestyle="none",
        marker=marker,
        markerfacecolor="white",
        markeredgecolor=colour,
        markeredgewidth=1.2,
    )
    ax.annotate(
        "",
        xy=(f.cores, f.value * 1.12),
        xytext=(f.cores, f.value),
        arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.0},
    )
    ax.annotate(
        f"≥{f.value / 1000:,.0f}k" if f.value >= 1000 else f"≥{f.value:,.0f}",
        (f.cores, f.value),
        xytext=(-6, 0),
        textcoords="offset points",
        ha="right",
        va="center",
        fontsize=6.5,
        color=colour,
    )


def _observed(ax: Any, s: Any, style: dict[str, Any], full: list[Any], label: str) -> set[str]:
    """The observed figures that are not lower bounds: filled markers, and a cross for an
    erratic one (drawn as measured, never fitted). The series' legend entry is on the
    first drawn."""
    erratic = [f for f in full if "erratic" in f.flags]
    kept = [f for f in full if f not in erratic]
    if kept or not erratic:
        ax.plot(
            [f.cores for f in kept],
            [f.value for f in kept],
            linestyle="none",
            marker=style["marker"],
            color=style["color"],
            markeredgecolor="white" if s.origin == FigureKind.MEASURED else style["color"],
            markeredgewidth=0.6,
            label=label,
        )
    if not erratic:
        return set()
    ax.plot(
        [f.cores for f in erratic],
        [f.value for f in erratic],
        linestyle="none",
        marker="x",
        color=style["color"],
        markeredgewidth=1.2,
        label=None if kept else label,
    )
    return {"erratic"}


def _shown_origin(s: Any) -> str:
    """How a series' figures are said in a legend: as its table cells say them
    (:func:`~sizing.report.data.format.cell_source`), so that a made-up figure
    (examples/simulated.py) is never called measured, nor an emulated one."""
    kinds = {cell_source(s.origin, f.emulated, f.flags) for f in s.observed}
    return kinds.pop() if len(kinds) == 1 else str(s.origin)


def _plot_series(ax: Any, s: Any, drawing: SeriesCurve | None, multi_ht: bool) -> set[str]:
    """One series: its fitted curve (solid over the core counts observed in full, dotted
    beyond), its observed figures with their intervals, an open marker and an arrow for a
    lower bound, hollow markers for predicted ones (``drawing``: the curve and the
    predicted figures, :func:`sizing.report.data.curves.series_curves`). Returns what it
    drew beyond the observed figures (``extrapolated``, ``lower-bound``, ``errorbars``)."""
    drawn: set[str] = set()
    style = series_style(s.platform, s.ht)
    name = PLATFORM_LABELS.get(s.platform, s.platform) + (f", HT {s.ht}" if multi_ht else "")
    full = [f for f in s.observed if not f.lower_bound]
    bounds = [f for f in s.observed if f.lower_bound]
    lo, hi = min(f.cores for f in full or s.observed), max(f.cores for f in full or s.observed)
    extra = [] if drawing is None else list(drawing.derived)
    curve = [] if drawing is None else list(drawing.curve)
    inside = [(x, y) for x, y in curve if lo <= x <= hi]
    fitted = "USL fit" if s.fit.model == "usl" else "linear"
    if not s.exact:
        fitted = "no curve: no figure to fit"
        drawn.add(NO_CURVE + name)
    if len(inside) > 1:
        ax.plot(*zip(*inside, strict=True), color=style["color"], linestyle="-")
    for part in ([(x, y) for x, y in curve if x <= lo], [(x, y) for x, y in curve if x >= hi]):
        if len(part) > 1:
            drawn.add("extrapolated")
            ax.plot(
                *zip(*part, strict=True),
                color=style["color"],
                linestyle=(0, (1.2, 1.6)),
                linewidth=1.2,
            )
    drawn |= _observed(ax, s, style, full, f"{name}, {_shown_origin(s)} ({fitted})")
    for f in bounds:
        drawn.add("lower-bound")
        _lower_bound(ax, f, style["color"], style["marker"])
    if extra:
        drawn.add("extrapolated")
        ax.plot(
            [c for c, _ in extra],
            [v for _, v in extra],
            linestyle="none",
            marker=style["marker"],
            markerfacecolor="white",
            markeredgecolor=style["color"],
            markeredgewidth=1.0,
        )
    for f in full:
        if f.ci_low is not None and f.ci_high is not None and f.ci_high > f.ci_low:
            drawn.add("errorbars")
            ax.errorbar(
                [f.cores],
                [f.value],
                yerr=[[max(0.0, f.value - f.ci_low)], [max(0.0, f.ci_high - f.value)]],
                fmt="none",
                ecolor=style["color"],
                elinewidth=0.8,
                capsize=2.5,
            )
    return drawn


@register("cost")
def cost_chart(guide: Guide) -> Chart | None:
    """Cost per 1k RPS (and per 100 TPS) per priced core count: a bar per series, side by
    side, only at the core counts the catalog prices (no axis running empty)."""
    cells = [c for r in guide.table.rows for c in r.cells if c.cost_per_unit is not None]
    profiles = [p for p in ("rps", "tps") if any(c.profile == p for c in cells)]
    if not profiles:
        return None
    multi_ht = several_ht_modes(guide)
    predicted = any(c.source == FigureKind.EXTRAPOLATED for c in cells)
    kinds = sorted({str(c.source) for c in cells})
    # a floor or a prediction of made-up figures is made up too: said as the cover says it
    made_up = getattr(guide.cover, "kind", "") == FigureKind.SIMULATED
    if made_up and FigureKind.SIMULATED not in kinds:
        kinds = [f"{k} (made up for an example, not measured)" for k in kinds]
    with chart_style():
        fig, axes = new_figure(len(profiles))
        for ax, profile in zip(axes, profiles, strict=True):
            _cost_bars(ax, guide, [c for c in cells if c.profile == profile], multi_ht)
            money_axis(ax, guide.currency)
            per = "1k RPS" if profile == SizingMetric.RPS else "100 SSL TPS"
            ax.set_ylabel(f"Cost per {per} ({guide.currency})")
            ax.set_title(f"Cost per {per}")
        shared_legend(fig, axes, extrapolated=False)
        svg = to_svg(fig)
    return Chart(
        id="cost",
        title="Cost per throughput per server size",
        caption=(
            f"Server cost ({guide.cost_basis}) divided by the throughput of one server on "
            "the low end of its interval (the figure sizing uses), at each core count the "
            f"catalog prices, from {' and '.join(kinds)} figures. Lower is better."
            + (
                " Hollow bars: the throughput is predicted beyond the measured core counts."
                if predicted
                else ""
            )
        ),
        svg=svg,
    )


def _cost_bars(ax: Any, guide: Guide, cells: list[Any], multi_ht: bool) -> None:
    """One bar per series at each priced core count, the value printed above it when the
    bars are few enough to read."""
    cores = sorted({c.cores for c in cells})
    keys = [
        s.key
        for s in guide.table.series
        if any((c.platform, c.ht, c.profile) == s.key for c in cells)
    ]
    width = min(0.8 / max(1, len(keys)), 0.3)  # one bar alone is no wider than four
    label_them = len(cores) * len(keys) <= 12
    # Bars side by side are narrower than their amounts ("EUR 12,345"): the labels stand
    # upright, or each runs into its neighbour's
    upright = len(cores) * len(keys) > 1
    longest = max(len(money(c.cost_per_unit, guide.currency)) for c in cells)
    for i, key in enumerate(keys):
        platform, ht, _ = key
        style = series_style(platform, ht)
        mine = sorted(
            (c for c in cells if (c.platform, c.ht, c.profile) == key), key=lambda c: c.cores
        )
        name = PLATFORM_LABELS.get(platform, platform) + (f", HT {ht}" if multi_ht else "")
        # the legend shows the series' filled bar when it has one
        labelled = next((c for c in mine if c.source != FigureKind.EXTRAPOLATED), mine[0])
        for c in mine:
            x = cores.index(c.cores) + (i - (len(keys) - 1) / 2) * width
            hollow = c.source == FigureKind.EXTRAPOLATED
            ax.bar(
                [x],
                [c.cost_per_unit],
                width=width * 0.9,
                color="white" if hollow else style["color"],
                edgecolor=style["color"],
                linewidth=1.0,
                hatch="///" if ht == "on" else "",
                label=name if c is labelled else None,
            )
            if label_them:
                ax.annotate(
                    money(c.cost_per_unit, guide.currency),
                    (x, c.cost_per_unit),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    rotation=90 if upright else 0,
                    fontsize=6.0,
                    color=TEXT,
                )
    ax.set_xticks(range(len(cores)), [f"{n} cores" for n in cores])
    ax.set_xlim(-0.6, len(cores) - 0.4)
    ax.set_xlabel("CPU cores per server")
    ax.grid(axis="x", visible=False)
    top = max(c.cost_per_unit for c in cells)
    # room above the tallest bar for its upright label: 6-point characters of about 3.8
    # points each, on a plot about 110 points high (a chart is 3 inches with its title,
    # axis label and legend)
    room = (longest * 3.8 + 6) / 110 if label_them and upright else 0.13
    ax.set_ylim(0, top / (1 - min(room, 0.6)))


def _bar_label(ax: Any, bar: Any, p: Any, rotate: bool) -> None:
    """An overhead bar's value above its error bar, never across it; upright when the bars
    stand side by side (their labels would touch)."""
    top = max(p.pct, p.high if p.high is not None else p.pct, 0.0)
    ax.annotate(
        f"{p.pct:.1f}%" + (" P" if p.pairs else " U" if p.low is not None else ""),
        (bar.get_x() + bar.get_width() / 2, top),
        xytext=(0, 2),
        textcoords="offset points",
        ha="center",
        va="bottom",
        rotation=90 if rotate else 0,
        fontsize=6.0,
        color=TEXT,
    )


@register("overhead")
def overhead_chart(guide: Guide) -> Chart | None:
    """Virtualization overhead per core count, with intervals where both legs have one."""
    points = list(guide.overhead)
    if not points:
        return None
    cores = sorted({p.cores for p in points})
    groups = sorted(
        {(p.ht, p.profile, p.group) for p in points},
        key=lambda k: (k[0], k[1] != SizingMetric.RPS, k[2]),
    )
    width = 0.8 / len(groups)
    container = any(p.platform == "container" for p in points)
    lost = "virtualization or the container" if container else "virtualization"
    fills = ["#1c3553", "#9fb8c9", "#3d8c86", "#d5e5e3"]
    hatches = ["", "///", "..", "xx"]
    with chart_style():
        fig, axes = new_figure(1, height=2.6)
        ax = axes[0]
        for i, (ht, _, group) in enumerate(groups):
            mine = {p.cores: p for p in points if (p.ht, p.group) == (ht, group)}
            xs = [cores.index(c) + (i - (len(groups) - 1) / 2) * width for c in mine]
            ys = [p.pct for p in mine.values()]
            label = group + (f", HT {ht}" if len(groups) > 2 else "")
            bars = ax.bar(
                xs,
                ys,
                width=width * 0.92,
                color=fills[i % len(fills)],
                edgecolor="#1c3553",
                linewidth=0.6,
                hatch=hatches[i % len(hatches)],
                label=label,
            )
            for bar, p in zip(bars, mine.values(), strict=True):
                if p.low is not None and p.high is not None:
                    ax.errorbar(
                        [bar.get_x() + bar.get_width() / 2],
                        [p.pct],
                        yerr=[[max(0.0, p.pct - p.low)], [max(0.0, p.high - p.pct)]],
                        fmt="none",
                        ecolor=TEXT,
                        elinewidth=0.8,
                        capsize=3,
                    )
                _bar_label(ax, bar, p, rotate=len(groups) > 2)
        ax.set_xticks(range(len(cores)), [str(c) for c in cores])
        ax.set_xlabel("CPU cores per server")
        ax.set_ylabel(f"Throughput lost to {lost} (%)")
        ax.axhline(0, color="#555555", linewidth=0.6)
        top = max([p.high or p.pct for p in points] + [p.pct for p in points])
        ax.set_ylim(min(0.0, *(p.low or p.pct for p in points)) * 1.1, top * 1.45 + 1)
        fig.legend(loc="outside lower center", ncol=len(groups))  # never over a bar
        ax.grid(axis="x", visible=False)
        svg = to_svg(fig)
    sources = sorted({p.source for p in points})
    whiskers = any(p.low is not None and p.high is not None for p in points)
    return Chart(
        id="overhead",
        title="Virtualization overhead per core count",
        caption=(
            f"(bare metal − {'guest' if container else 'hypervisor'}) ÷ bare metal, from "
            + " and ".join(sources)
            + " figures."
            + (
                " Error bars: P, the two figures measured in alternation (the interval of the "
                "median of the per-pair ratios); U, measured apart (the interval combines both "
                "figures' intervals, and is wider)."
                if whiskers
                else ""
            )
        ),
        svg=svg,
    )
