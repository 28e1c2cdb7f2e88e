"""The API gateway's CPU curve: server CPU busy against offered calls per second."""

from __future__ import annotations

from typing import Any

from sizing.report.data.model import Guide
from sizing.report.render.chartkit import (
    SERIES_STYLES,
    Chart,
    chart_style,
    new_figure,
    register,
    thousands_axis,
    to_svg,
)


@register("gateway-cpu")
def gateway_cpu_chart(guide: Guide) -> Chart | None:
    """One curve per gateway point: the server's CPU busy % at each offered rate."""
    section = guide.gateway
    series = [s for s in section.series if s.rates] if section is not None else []
    if not series:
        return None
    with chart_style():
        fig, axes = new_figure(1, height=3.0)
        ax = axes[0]
        for i, s in enumerate(series):
            colour, marker = SERIES_STYLES[i % len(SERIES_STYLES)]
            pts = [(r, b) for r, b in zip(s.rates, s.server_busy, strict=True) if b is not None]
            if not pts:
                continue
            style: dict[str, Any] = {"color": colour, "marker": marker, "markersize": 4.5}
            ax.plot(
                *zip(*pts, strict=True),
                linestyle="-",
                markeredgecolor="white",
                markeredgewidth=0.5,
                label=s.label,
                **style,
            )
        ax.set_xlim(0, max(r for s in series for r in s.rates) * 1.04)
        thousands_axis(ax, "x")
        ax.set_xlabel("Offered API calls per second")
        ax.set_ylim(0, 105)
        ax.set_ylabel("Server CPU busy (% of pinned CPUs)")
        ax.set_title("API gateway: CPU against calls per second")
        fig.legend(loc="outside lower center", ncol=1)
        svg = to_svg(fig)
    return Chart(
        id="gateway-cpu",
        title="API gateway: CPU against calls per second",
        caption=(
            "The mean busy share of the gateway's pinned CPUs at each constant offered rate "
            "of API calls (open loop), as in the API-gateway article's CPU figure; one curve "
            "per gateway profile and core count."
        ),
        svg=svg,
    )
