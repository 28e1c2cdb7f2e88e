"""The guide's charts: matplotlib (imported lazily, Agg backend) to SVG text.

**A registry.** Each chart is a builder ``(guide) -> Chart | None`` registered under an id
with :func:`register`; the guide template shows every chart :func:`render_charts` returns,
in registration order, numbered as figures. A builder returns ``None`` when the guide has
no data for it (no measured CPU samples, no overhead pair...), and the chart is left out.
A new chart (for instance latency against offered load, with the knee marked, for the
latency profile) is one more builder registered here or in a module this one imports::

    @register("latency")
    def latency_chart(guide: Guide) -> Chart | None:
        ...

**Greyscale-safe.** Every series differs by marker shape and line style as well as by
colour, and the colours differ in lightness, so a black-and-white print stays readable.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sizing.report.guide import PLATFORM_LABELS, PROFILE_LABELS, Guide, LatencySeries

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

# Colours of clearly different lightness (dark navy, mid teal, light amber, grey).
PLATFORM_STYLE: dict[str, dict[str, Any]] = {
    "baremetal": {"color": "#1c3553", "marker": "o"},
    "hypervisor": {"color": "#3d8c86", "marker": "s"},
    "kubernetes": {"color": "#c98f2a", "marker": "^"},
}
PLATFORM_LINES = {"baremetal": "-", "hypervisor": "--", "kubernetes": "-."}
HT_MARKERS = {"on": {"baremetal": "D", "hypervisor": "P", "kubernetes": "v"}}
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


ChartBuilder = Callable[[Guide], "Chart | None"]
CHARTS: dict[str, ChartBuilder] = {}


def register(chart_id: str) -> Callable[[ChartBuilder], ChartBuilder]:
    """Register a chart builder under ``chart_id`` (see the module docstring)."""

    def deco(fn: ChartBuilder) -> ChartBuilder:
        CHARTS[chart_id] = fn
        return fn

    return deco


def render_charts(guide: Guide, only: Sequence[str] | None = None) -> list[Chart]:
    """Every registered chart the guide has data for, in registration order."""
    out: list[Chart] = []
    for chart_id, builder in CHARTS.items():
        if only is not None and chart_id not in only:
            continue
        chart = builder(guide)
        if chart is not None:
            out.append(chart)
    return out


# -- matplotlib plumbing ---------------------------------------------------------------


def _mpl() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib


@contextmanager
def _style() -> Iterator[None]:
    mpl = _mpl()
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


def _figure(ncols: int, height: float = 3.3) -> tuple[MplFigure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _svg(fig: MplFigure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: inline-safe


def _thousands(ax: Axes, axis: str = "y", prefix: str = "") -> None:
    from matplotlib.ticker import FuncFormatter

    def fmt(v: float, _pos: int) -> str:
        if abs(v) >= 1000:
            return f"{prefix}{v / 1000:,.0f}k" if v % 1000 == 0 else f"{prefix}{v / 1000:,.1f}k"
        return f"{prefix}{v:,.0f}"

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(fmt))


def _money_axis(ax: Axes, currency: str) -> None:
    from matplotlib.ticker import FuncFormatter

    sign = "$" if currency == "USD" else f"{currency} "
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _p: f"{sign}{v:,.0f}" if v >= 10 else f"{sign}{v:,.2f}")
    )


def _series_style(platform: str, ht: str) -> dict[str, Any]:
    style = dict(PLATFORM_STYLE.get(platform, {"color": "#555555", "marker": "x"}))
    if ht in HT_MARKERS:
        style["marker"] = HT_MARKERS[ht].get(platform, "x")
    return style


def _cores_axis(ax: Axes, cores: Sequence[int]) -> None:
    ax.set_xticks(list(cores))
    ax.set_xlim(0, max(cores) + 0.6)
    ax.set_xlabel("CPU cores per server")


def _multi_ht(guide: Guide) -> bool:
    return len({s.ht for s in guide.table.series}) > 1


# -- the charts ------------------------------------------------------------------------


@register("throughput")
def throughput_chart(guide: Guide) -> Chart | None:
    """Throughput vs cores per platform: observed points and the fitted curve."""
    from sizing.engine.scaling import usl

    series = [s for s in guide.table.series if s.profile in ("rps", "tps")]
    if not series:
        return None
    profiles = [p for p in ("rps", "tps") if any(s.profile == p for s in series)]
    cores = [r.cores for r in guide.table.rows]
    top = max(cores)
    multi_ht = _multi_ht(guide)
    with _style():
        fig, axes = _figure(len(profiles))
        for ax, profile in zip(axes, profiles, strict=True):
            for s in (s for s in series if s.profile == profile):
                style = _series_style(s.platform, s.ht)
                name = PLATFORM_LABELS.get(s.platform, s.platform)
                if multi_ht:
                    name += f", HT {s.ht}"
                observed = [f.cores for f in s.observed]
                lo, hi = min(observed), max(observed)
                if s.fit.model == "usl":
                    assert s.fit.lam is not None and s.fit.sigma is not None
                    assert s.fit.kappa is not None
                    lam, sig, kap = s.fit.lam, s.fit.sigma, s.fit.kappa
                    grid = [1.0 + i * (top - 1.0) / 120 for i in range(121)]
                    ys = [usl(n, lam, sig, kap) for n in grid]
                    xs = grid
                else:
                    xs = [float(n) for n in range(1, top + 1)]
                    ys = [s.fit.predict(int(n)) for n in xs]
                inside = [(x, y) for x, y in zip(xs, ys, strict=True) if lo <= x <= hi]
                below = [(x, y) for x, y in zip(xs, ys, strict=True) if x <= lo]
                above = [(x, y) for x, y in zip(xs, ys, strict=True) if x >= hi]
                fitted = "USL fit" if s.fit.model == "usl" else "linear"
                if len(inside) > 1:
                    ax.plot(*zip(*inside, strict=True), color=style["color"], linestyle="-")
                for part in (below, above):
                    if len(part) > 1:
                        ax.plot(
                            *zip(*part, strict=True),
                            color=style["color"],
                            linestyle=(0, (1.2, 1.6)),
                            linewidth=1.2,
                        )
                ax.plot(
                    [f.cores for f in s.observed],
                    [f.value for f in s.observed],
                    linestyle="none",
                    marker=style["marker"],
                    color=style["color"],
                    markeredgecolor="white" if s.basis == "measured" else style["color"],
                    markeredgewidth=0.6,
                    label=f"{name}, {s.basis} ({fitted})",
                )
                extra = [c for c in cores if c not in observed]
                if extra:
                    ax.plot(
                        extra,
                        [s.at(c).value for c in extra],
                        linestyle="none",
                        marker=style["marker"],
                        markerfacecolor="white",
                        markeredgecolor=style["color"],
                        markeredgewidth=1.0,
                    )
                for f in s.observed:
                    if f.ci_low is not None and f.ci_high is not None:
                        ax.errorbar(
                            [f.cores],
                            [f.value],
                            yerr=[[max(0.0, f.value - f.ci_low)], [max(0.0, f.ci_high - f.value)]],
                            fmt="none",
                            ecolor=style["color"],
                            elinewidth=0.8,
                            capsize=2.5,
                        )
            _cores_axis(ax, cores)
            _thousands(ax)
            ax.set_ylim(bottom=0)
            unit = "requests/s" if profile == "rps" else "handshakes/s"
            ax.set_ylabel(f"{PROFILE_LABELS[profile]} ({unit})")
            ax.set_title(f"{PROFILE_LABELS[profile]} per server")
        _shared_legend(fig, axes)
        svg = _svg(fig)
    return Chart(
        id="throughput",
        title="Throughput against CPU cores",
        caption=(
            "Filled markers: observed figures (measured or reference); solid line: the "
            "fitted scaling model over the observed core counts; dotted line and hollow "
            "markers: extrapolated beyond them. Error bars: 95% confidence interval of "
            "measured points."
        ),
        svg=svg,
    )


def _shared_legend(fig: MplFigure, axes: Sequence[Axes], extrapolated: bool = True) -> None:
    """One legend below the panels: every series once, plus the extrapolation style."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if extrapolated:
        handles.append(
            Line2D(
                [],
                [],
                color="#555555",
                linestyle=(0, (1.2, 1.6)),
                marker="o",
                markerfacecolor="white",
                markeredgecolor="#555555",
            )
        )
        labels.append("extrapolated")
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)))


@register("cost")
def cost_chart(guide: Guide) -> Chart | None:
    """Cost per 1k RPS (and per 100 TPS) against cores, per platform."""
    cells = [c for r in guide.table.rows for c in r.cells]
    profiles = [p for p in ("rps", "tps") if any(c.profile == p for c in cells)]
    if not profiles:
        return None
    cores = [r.cores for r in guide.table.rows]
    multi_ht = _multi_ht(guide)
    with _style():
        fig, axes = _figure(len(profiles))
        for ax, profile in zip(axes, profiles, strict=True):
            for s in (s for s in guide.table.series if s.profile == profile):
                style = _series_style(s.platform, s.ht)
                mine = sorted(
                    (c for c in cells if (c.platform, c.ht, c.profile) == s.key),
                    key=lambda c: c.cores,
                )
                name = PLATFORM_LABELS.get(s.platform, s.platform)
                if multi_ht:
                    name += f", HT {s.ht}"
                ax.plot(
                    [c.cores for c in mine],
                    [c.cost_per_unit for c in mine],
                    color=style["color"],
                    linestyle=PLATFORM_LINES.get(s.platform, ":"),
                    linewidth=1.2,
                    label=f"{name} ({s.basis})",
                )
                for filled in (True, False):
                    pts = [c for c in mine if (c.source != "extrapolated") is filled]
                    if pts:
                        ax.plot(
                            [c.cores for c in pts],
                            [c.cost_per_unit for c in pts],
                            linestyle="none",
                            marker=style["marker"],
                            color=style["color"],
                            markerfacecolor=style["color"] if filled else "white",
                            markeredgecolor="white" if filled else style["color"],
                            markeredgewidth=0.6 if filled else 1.0,
                        )
            _cores_axis(ax, cores)
            _money_axis(ax, guide.currency)
            ax.set_ylim(bottom=0)
            per = "1k RPS" if profile == "rps" else "100 SSL TPS"
            ax.set_ylabel(f"Cost per {per} ({guide.currency})")
            ax.set_title(f"Cost per {per}")
        _shared_legend(fig, axes)
        svg = _svg(fig)
    return Chart(
        id="cost",
        title="Cost per throughput against CPU cores",
        caption=(
            f"Server cost ({guide.cost_basis}) divided by the throughput of one server. "
            "Lower is better. Hollow markers: the throughput is extrapolated."
        ),
        svg=svg,
    )


@register("overhead")
def overhead_chart(guide: Guide) -> Chart | None:
    """Virtualization overhead per core count, with intervals where both legs have one."""
    points = list(guide.overhead)
    if not points:
        return None
    cores = sorted({p.cores for p in points})
    groups = sorted({(p.ht, p.profile) for p in points}, key=lambda k: (k[0], k[1] != "rps"))
    width = 0.8 / len(groups)
    fills = ["#1c3553", "#9fb8c9", "#3d8c86", "#d5e5e3"]
    hatches = ["", "///", "..", "xx"]
    with _style():
        fig, axes = _figure(1, height=2.6)
        ax = axes[0]
        for i, (ht, profile) in enumerate(groups):
            mine = {p.cores: p for p in points if (p.ht, p.profile) == (ht, profile)}
            xs = [cores.index(c) + (i - (len(groups) - 1) / 2) * width for c in mine]
            ys = [p.pct for p in mine.values()]
            label = PROFILE_LABELS[profile] + (f", HT {ht}" if len(groups) > 2 else "")
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
                ax.annotate(
                    f"{p.pct:.1f}%",
                    (bar.get_x() + bar.get_width() / 2, max(p.pct, 0.0)),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=6.5,
                    color=TEXT,
                )
        ax.set_xticks(range(len(cores)), [str(c) for c in cores])
        ax.set_xlabel("CPU cores per server")
        ax.set_ylabel("Throughput lost to virtualization (%)")
        ax.axhline(0, color="#555555", linewidth=0.6)
        top = max([p.high or p.pct for p in points] + [p.pct for p in points])
        ax.set_ylim(min(0.0, *(p.low or p.pct for p in points)) * 1.1, top * 1.18 + 1)
        ax.legend(loc="upper right", ncol=len(groups))
        ax.grid(axis="x", visible=False)
        svg = _svg(fig)
    sources = sorted({p.source for p in points})
    return Chart(
        id="overhead",
        title="Virtualization overhead per core count",
        caption=(
            "(bare metal − hypervisor) ÷ bare metal, from "
            + " and ".join(sources)
            + " figures. Error bars, where shown, combine the 95% confidence intervals "
            "of the two measured figures."
        ),
        svg=svg,
    )


@register("cpu")
def cpu_chart(guide: Guide) -> Chart | None:
    """Throughput against the server CPU it used, one marker per timed repetition."""
    points = list(guide.cpu_points)
    if not points:
        return None
    profiles = [p for p in ("rps", "tps") if any(c.profile == p for c in points)]
    with _style():
        fig, axes = _figure(len(profiles), height=3.1)
        for ax, profile in zip(axes, profiles, strict=True):
            mine = [c for c in points if c.profile == profile]
            keys = sorted({(c.platform, c.cores, c.ht, c.emulated) for c in mine})
            for platform, cores, ht, emulated in keys:
                for valid in (True, False):
                    sel = [
                        c
                        for c in mine
                        if (c.platform, c.cores, c.ht, c.emulated)
                        == (platform, cores, ht, emulated)
                        and (c.status == "measured") is valid
                    ]
                    if not sel:
                        continue
                    colour = CORE_COLOURS.get(cores, "#555555")
                    label = f"{PLATFORM_LABELS.get(platform, platform)}, {cores} core"
                    label += "s" if cores != 1 else ""
                    if ht == "on":
                        label += ", HT on"
                    if emulated:
                        label += ", emulated"
                    if not valid:
                        label += " (invalid)"
                    ax.plot(
                        [c.busy for c in sel],
                        [c.value for c in sel],
                        linestyle="none",
                        marker=CORE_MARKERS.get(cores, "x"),
                        color=colour,
                        markerfacecolor=colour if valid else "white",
                        markeredgecolor="white" if valid else colour,
                        markeredgewidth=0.6 if valid else 1.0,
                        alpha=0.9,
                        label=label,
                    )
            low = int(max(0.0, (min(c.busy for c in mine) // 10) * 10 - 10))
            step = 2 if 100 - low <= 20 else 5 if 100 - low <= 50 else 10
            ax.set_xticks(list(range(low, 101, step)))
            ax.set_xlim(low, 101.5)
            ax.set_ylim(bottom=0)
            _thousands(ax)
            ax.set_xlabel("Server CPU busy (% of nginx's pinned CPUs)")
            unit = "requests/s" if profile == "rps" else "handshakes/s"
            ax.set_ylabel(f"{PROFILE_LABELS[profile]} ({unit})")
            ax.set_title(f"{PROFILE_LABELS[profile]} against server CPU")
        _shared_legend(fig, axes, extrapolated=False)
        svg = _svg(fig)
    return Chart(
        id="cpu",
        title="Measured throughput against server CPU",
        caption=(
            "One marker per timed repetition of a measured point (warm-ups left out). "
            "A point far below 100% CPU was limited by something other than nginx's CPU. "
            "Hollow markers: repetitions of points judged invalid."
        ),
        svg=svg,
    )


# -- latency under steady load (the latency profiles) ------------------------------------

MEAN_LINE: Any = (0, (1.2, 1.6))  # dotted: mean; solid: p95
LOG_SPAN = 100.0  # latencies spanning more than two decades: logarithmic axis


def _latency_style(i: int) -> tuple[str, str]:
    return SERIES_STYLES[i % len(SERIES_STYLES)]


def _mark_knees(ax: Axes, series: Sequence[LatencySeries]) -> None:
    """A dotted vertical line per knee, in its series' colour, annotated "knee"."""
    for i, s in enumerate(series):
        if s.knee_rate is None:
            continue
        colour, _ = _latency_style(i)
        ax.axvline(s.knee_rate, color=colour, linestyle=":", linewidth=0.9)
        ax.annotate(
            "knee",
            xy=(s.knee_rate, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2 - 9 * i),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=6.5,
            color=colour,
        )


def _rate_axis(ax: Axes, series: Sequence[LatencySeries]) -> None:
    ax.set_xlim(0, max(r for s in series for r in s.rates) * 1.04)
    _thousands(ax, "x")
    ax.set_xlabel("Offered rate (requests/s)")


@register("latency")
def latency_chart(guide: Guide) -> Chart | None:
    """Mean and p95 latency against the offered rate, the knees and the SLO limits."""
    section = guide.latency
    series = [s for s in section.series if s.rates] if section is not None else []
    if not series:
        return None
    from matplotlib.lines import Line2D

    values = [v for s in series for v in (*s.mean_ms, *s.p95_ms) if v > 0]
    limits = sorted({(s.slo_stat, s.slo_limit_ms) for s in series if s.slo_limit_ms is not None})
    values += [limit for _, limit in limits if limit is not None]
    log = bool(values) and max(values) / min(values) > LOG_SPAN
    with _style():
        fig, axes = _figure(1, height=3.4)
        ax = axes[0]
        handles: list[Any] = []
        labels: list[str] = []
        for i, s in enumerate(series):
            colour, marker = _latency_style(i)
            common: dict[str, Any] = {"color": colour, "marker": marker, "markersize": 4.5}
            ax.plot(s.rates, s.p95_ms, linestyle="-", markeredgecolor="white",
                    markeredgewidth=0.5, **common)  # fmt: skip
            ax.plot(s.rates, s.mean_ms, linestyle=MEAN_LINE, markerfacecolor="white",
                    markeredgecolor=colour, markeredgewidth=0.9, **common)  # fmt: skip
            handles.append(Line2D([], [], linestyle="-", **common))
            labels.append(s.label)
        for stat, limit in limits:
            assert limit is not None
            ax.axhline(limit, color="#555555", linestyle="-.", linewidth=0.9)
            handles.append(Line2D([], [], color="#555555", linestyle="-.", linewidth=0.9))
            labels.append(f"SLO: {stat} ≤ {limit:g} ms")
        _mark_knees(ax, series)
        grey: dict[str, Any] = {"color": "#555555", "marker": "o", "markersize": 4.5}
        handles += [
            Line2D([], [], linestyle="-", markeredgecolor="white", **grey),
            Line2D([], [], linestyle=MEAN_LINE, markerfacecolor="white", **grey),
        ]
        labels += ["p95 (solid line, filled markers)", "mean (dotted line, hollow markers)"]
        _rate_axis(ax, series)
        if log:
            from matplotlib.ticker import FuncFormatter, NullFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylim(bottom=0)
        ax.set_ylabel("Latency (ms)" + (", logarithmic scale" if log else ""))
        ax.set_title("Latency against offered rate")
        fig.legend(handles, labels, loc="outside lower center", ncol=min(2, len(labels)))
        svg = _svg(fig)
    return Chart(
        id="latency",
        title="Latency against offered rate",
        caption=(
            "Mean and p95 latency at each constant offered rate (open loop), one pair of "
            "curves per platform and core count. Dotted vertical lines: the knee, the last "
            "rate before latency explodes"
            + ("; dash-dotted horizontal line: the latency objective (SLO)." if limits else ".")
        ),
        svg=svg,
    )


@register("latency-cpu")
def latency_cpu_chart(guide: Guide) -> Chart | None:
    """Server CPU busy against the offered rate, for the smallest measured core count."""
    section = guide.latency
    if section is None:
        return None
    with_cpu = [s for s in section.series if any(b is not None for b in s.server_busy)]
    if not with_cpu:
        return None
    cores = min(s.cores for s in with_cpu)
    # the style index follows the latency chart, so a curve keeps its colour and marker
    indexed = [(i, s) for i, s in enumerate(section.series) if s in with_cpu and s.cores == cores]
    with _style():
        fig, axes = _figure(1, height=3.0)
        ax = axes[0]
        for i, s in indexed:
            colour, marker = _latency_style(i)
            pts = [(r, b) for r, b in zip(s.rates, s.server_busy, strict=True) if b is not None]
            ax.plot(*zip(*pts, strict=True), color=colour, marker=marker, markersize=4.5,
                    markeredgecolor="white", markeredgewidth=0.5, label=s.label)  # fmt: skip
        shown = [s for _, s in indexed]
        for i, s in indexed:
            if s.knee_rate is not None:
                colour, _ = _latency_style(i)
                ax.axvline(s.knee_rate, color=colour, linestyle=":", linewidth=0.9)
        if any(s.knee_rate is not None for s in shown):
            ax.annotate("knee", xy=(min(s.knee_rate or 0.0 for s in shown if s.knee_rate), 1.0),
                        xycoords=("data", "axes fraction"), xytext=(2, -2),
                        textcoords="offset points", ha="left", va="top", fontsize=6.5,
                        color=TEXT)  # fmt: skip
        _rate_axis(ax, shown)
        ax.set_ylim(0, 105)
        ax.set_ylabel("Server CPU busy (% of nginx's pinned CPUs)")
        unit = f"{cores} core" + ("s" if cores != 1 else "")
        ax.set_title(f"Server CPU against offered rate, {unit}")
        _shared_legend(fig, axes, extrapolated=False)
        svg = _svg(fig)
    return Chart(
        id="latency-cpu",
        title=f"CPU use against offered rate ({unit})",
        caption=(
            "The mean busy share of the server's pinned CPUs during each offered rate of "
            "the latency sweep. Dotted vertical lines: the knee of the latency curve."
        ),
        svg=svg,
    )
