"""The latency charts: latency and server CPU against the offered rate (latency profiles)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sizing.report.data.model import Guide, LatencySeries
from sizing.report.render.chartkit import (
    SERIES_STYLES,
    TEXT,
    Chart,
    chart_style,
    new_figure,
    register,
    shared_legend,
    thousands_axis,
    to_svg,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
    thousands_axis(ax, "x")
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
    with chart_style():
        fig, axes = new_figure(1, height=3.4)
        ax = axes[0]
        handles: list[Any] = []
        labels: list[str] = []
        for i, s in enumerate(series):
            colour, marker = _latency_style(i)
            common: dict[str, Any] = {"color": colour, "marker": marker, "markersize": 4.5}
            ax.plot(
                s.rates,
                s.p95_ms,
                linestyle="-",
                markeredgecolor="white",
                markeredgewidth=0.5,
                **common,
            )
            ax.plot(
                s.rates,
                s.mean_ms,
                linestyle=MEAN_LINE,
                markerfacecolor="white",
                markeredgecolor=colour,
                markeredgewidth=0.9,
                **common,
            )
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
        svg = to_svg(fig)
    return Chart(
        id="latency",
        title="Latency against offered rate",
        caption=(
            "Mean and p95 latency at each constant offered rate (open loop), one pair of "
            "curves per platform and core count. Dotted vertical lines: the knee, the last "
            "rate before latency spikes"
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
    with chart_style():
        fig, axes = new_figure(1, height=3.0)
        ax = axes[0]
        for i, s in indexed:
            colour, marker = _latency_style(i)
            pts = [(r, b) for r, b in zip(s.rates, s.server_busy, strict=True) if b is not None]
            ax.plot(
                *zip(*pts, strict=True),
                color=colour,
                marker=marker,
                markersize=4.5,
                markeredgecolor="white",
                markeredgewidth=0.5,
                label=s.label,
            )
        shown = [s for _, s in indexed]
        for i, s in indexed:
            if s.knee_rate is not None:
                colour, _ = _latency_style(i)
                ax.axvline(s.knee_rate, color=colour, linestyle=":", linewidth=0.9)
        if any(s.knee_rate is not None for s in shown):
            ax.annotate(
                "knee",
                xy=(min(s.knee_rate or 0.0 for s in shown if s.knee_rate), 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(2, -2),
                textcoords="offset points",
                ha="left",
                va="top",
                fontsize=6.5,
                color=TEXT,
            )
        _rate_axis(ax, shown)
        ax.set_ylim(0, 105)
        ax.set_ylabel("Server CPU busy (% of nginx's pinned CPUs)")
        unit = f"{cores} core" + ("s" if cores != 1 else "")
        ax.set_title(f"Server CPU against offered rate, {unit}")
        shared_legend(fig, axes, extrapolated=False)
        svg = to_svg(fig)
    return Chart(
        id="latency-cpu",
        title=f"CPU use against offered rate ({unit})",
        caption=(
            "The mean busy share of the server's pinned CPUs during each offered rate of "
            "the latency sweep. Dotted vertical lines: the knee of the latency curve."
        ),
        svg=svg,
    )
