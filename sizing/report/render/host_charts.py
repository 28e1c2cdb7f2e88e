"""The charts of what the servers did: throughput against the server CPU it used, and how
close each figure came to its host's physical limits (the crypto and NIC ceilings)."""

from __future__ import annotations

from sizing.ceilings import FAR_BELOW
from sizing.model import PROFILE_UNITS
from sizing.report.data.format import PLATFORM_LABELS, PROFILE_LABELS
from sizing.report.data.model import Guide
from sizing.report.render.chartkit import (
    CORE_COLOURS,
    CORE_MARKERS,
    Chart,
    chart_style,
    new_figure,
    register,
    shared_legend,
    thousands_axis,
    to_svg,
)


@register("cpu")
def cpu_chart(guide: Guide) -> Chart | None:
    """Throughput against the server CPU it used, one marker per timed repetition."""
    points = list(guide.cpu_points)
    if not points:
        return None
    profiles = [p for p in ("rps", "tps") if any(c.profile == p for c in points)]
    with chart_style():
        fig, axes = new_figure(len(profiles), height=3.1)
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
            thousands_axis(ax)
            ax.set_xlabel("Server CPU busy (% of nginx's pinned CPUs)")
            unit = PROFILE_UNITS[profile]
            ax.set_ylabel(f"{PROFILE_LABELS[profile]} ({unit})")
            ax.set_title(f"{PROFILE_LABELS[profile]} against server CPU")
        shared_legend(fig, axes, extrapolated=False)
        svg = to_svg(fig)
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


# A bar chart taller than this many bars does not fit under its title on one page: it is
# split into several figures of at most this many bars each.
BARS_PER_FIGURE = 16


@register("limits")
def limits_chart(guide: Guide) -> list[Chart] | None:
    """Each figure's share of its closest known ceiling, for the figures at or above the
    far-below line (the others are in an appendix table), as horizontal bars: one figure
    per :data:`BARS_PER_FIGURE` bars."""
    known = [x for x in guide.limit_points if x.share is not None and x.share >= FAR_BELOW]
    if not known:
        return None
    chunks = [known[i : i + BARS_PER_FIGURE] for i in range(0, len(known), BARS_PER_FIGURE)]
    top = max(110.0, max(100 * x.share for x in known) + 12)
    out: list[Chart] = []
    for n, chunk in enumerate(chunks, start=1):
        with chart_style():
            fig, (ax,) = new_figure(1, height=0.3 * len(chunk) + 1.0)
            shares = [100 * x.share for x in chunk]
            ys = list(range(len(chunk)))
            colours = ["#1f4e79" if x.unit == "handshakes/s" else "#9dc3e6" for x in chunk]
            ax.barh(ys, shares, color=colours, edgecolor="black", linewidth=0.5, height=0.6)
            for y, s in zip(ys, shares, strict=True):
                ax.text(s + 1, y, f"{s:.0f}%", va="center", fontsize=7)
            ax.axvline(100, color="black", linewidth=1.0)
            ax.axvline(100 * FAR_BELOW, color="#7f7f7f", linewidth=0.8, linestyle="--")
            ax.set_yticks(ys)
            ax.set_yticklabels([x.label for x in chunk], fontsize=7)
            ax.invert_yaxis()
            ax.set_xlim(0, top)
            ax.set_xlabel("Share of the ceiling (%)")
            svg = to_svg(fig)
        part = f" ({n} of {len(chunks)})" if len(chunks) > 1 else ""
        out.append(
            Chart(
                id="limits" if n == 1 else f"limits-{n}",
                title="Measured figures close to their physical ceilings" + part,
                caption=_limits_caption(len(known), len(guide.limit_points)),
                svg=svg,
            )
        )
    return out


def _limits_caption(shown: int, total: int) -> str:
    rest = total - shown
    return (
        "Each bar is a measured figure's share of the closest ceiling known for it: a "
        "handshake figure's crypto ceiling (openssl speed of its certificate's signing on "
        "the cores under test), or the request rate its network link allows. Solid line: the "
        f"ceiling; dashed: {FAR_BELOW * 100:.0f}%, below which something other than the "
        "private-key operation dominates a handshake figure."
        + (
            f" The {rest} figures further from every ceiling are listed in Appendix C."
            if rest
            else ""
        )
    )
