"""A run on a terminal: its pairs (overhead, HT gain), the comparison of runs, and a
latency point's curve with its knee."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sizing.model import PointResult, Status
from sizing.records import PointMeta
from sizing.report.data.format import MISSING, number, percent
from sizing.report.data.pairs import PairView
from sizing.report.render.grid import grid
from sizing.report.render.points import UNITS, WIDTH, point_json

if TYPE_CHECKING:
    from sizing.report.data.results import EnvDiff, FigureDiff


def _ratio_cells(v: PairView) -> list[str]:
    """A comparison's figure with its interval, and whether its legs were paired."""
    if v.pct is None:
        return [MISSING, ""]
    text = percent(v.pct)
    if v.low is not None and v.high is not None:
        text += f" [{v.low:.1f}, {v.high:.1f}]"
    if not v.paired:
        each = f" (legs {v.leg_coverage * 100:.3g}%)" if v.leg_coverage is not None else ""
        return [text, f"unpaired{each}"]
    cov = f" ({v.coverage * 100:.3g}%)" if v.coverage is not None else ""
    return [text, f"paired×{v.pairs}{cov}"]


def _short(value: float | None, unit: str) -> str:
    return MISSING if value is None else f"{number(value)} {UNITS.get(unit, unit)}"


def _name(v: PairView) -> str:
    k = v.a.key
    if v.kind == "ht":
        return f"{k.host} {k.cores}c {k.profile}"
    return f"{v.b.key.cores}c ht={v.b.key.ht} {v.b.key.profile}"


# (title, headers, the views of the section)
_SECTIONS: tuple[tuple[str, list[str], Callable[[PairView], bool]], ...] = (
    (
        "bare metal vs hypervisor (overhead = 1 - guest / bare metal: paired legs give the "
        "median of the per-pair ratios and its interval, unpaired ones both legs' intervals)",
        ["point", "bare metal", "hypervisor", "overhead [interval]", "legs"],
        lambda v: v.kind == "virtualization" and v.runs is None and not v.container,
    ),
    (
        "bare metal vs container (overhead = 1 - container / bare metal, the container "
        "network path: namespace, veth, bridge, NAT; paired legs give the median of the "
        "per-pair ratios and its interval)",
        ["point", "bare metal", "container", "overhead [interval]", "legs"],
        lambda v: v.kind == "virtualization" and v.runs is None and v.container,
    ),
    (
        "bare metal vs hypervisor across runs (unpaired: the legs ran in different runs, so\n"
        "the interval is the ratio of the medians with the ends of both legs' intervals)",
        ["point", "bare metal", "hypervisor", "overhead [interval]", "legs"],
        lambda v: v.kind == "virtualization" and v.runs is not None,
    ),
    (
        "HT off vs HT on (gain = HT on / HT off - 1)",
        ["point", "HT off", "HT on", "HT gain [interval]", "legs"],
        lambda v: v.kind == "ht",
    ),
)


def pairs_table(views: Sequence[PairView], width: int = WIDTH) -> str:
    """Bare metal beside hypervisor (or container) with the overhead, and HT off beside
    HT on with the HT gain (:func:`sizing.report.data.pairs.pair_views`), each with its
    interval and whether its legs were measured as a pair (the median of the per-pair
    ratios) or apart; a guest beside its host's bare metal of another run (unpaired, the
    runs named); the leg that failed its guards, the flags and a software difference
    below; empty when there is none."""
    from tabulate import tabulate

    out: list[str] = []
    for title, headers, wanted in _SECTIONS:
        items = [v for v in views if wanted(v)]
        if not items:
            continue
        rows, notes = [], []
        for v in items:
            name, cells = _name(v), _ratio_cells(v)
            if v.runs is not None:
                cells[-1] = f"{cells[-1]}, runs {v.runs[0]}/{v.runs[1]}"
            rows.append([name, _short(v.a.value, v.a.unit), _short(v.b.value, v.b.unit), *cells])
            flags = ", ".join(sorted(set(v.a.flags) | set(v.b.flags)))
            said = "; ".join(x for x in (v.failed, v.note, flags) if x)
            if said:
                notes.append(
                    textwrap.fill(
                        f"{name}: {said}",
                        width=width,
                        initial_indent="  ",
                        subsequent_indent="    ",
                        break_on_hyphens=False,
                    )
                )
        table = tabulate(rows, headers=headers, disable_numparse=True).splitlines()
        if any(len(x) > width for x in table):  # cut, as the points table is cut
            table = [x if len(x) <= width else x[: width - 1] + "…" for x in table]
            table += textwrap.wrap(f"(… cut at {width} columns: --json gives every column)", width)
        out += ["", *textwrap.wrap(title, width), *table, *notes]
        if items[0].kind == "virtualization" and any("emulated" in n for n in notes):
            out += textwrap.wrap(
                "emulated: the guest ran under software emulation (QEMU TCG); its loss is "
                "emulation's, not a virtualization overhead of KVM or ESXi",
                width,
            )
    return "\n".join(out)


def comparison_json(
    run_a: int, run_b: int, env: Sequence[EnvDiff], figs: Sequence[FigureDiff]
) -> dict[str, Any]:
    """``results --compare --json``."""
    return {
        "run_a": run_a,
        "run_b": run_b,
        "environment": [{"host": d.host, "field": d.key, "a": d.a, "b": d.b} for d in env],
        "figures": [
            {
                "point": f.point,
                "a": None if f.a is None else point_json(f.a),
                "b": None if f.b is None else point_json(f.b),
                "change": f.change,
                "intervals_overlap": f.overlapping,
            }
            for f in figs
        ],
    }


def comparisons_text(
    base: int,
    pairs: Sequence[tuple[int, Sequence[EnvDiff], Sequence[FigureDiff]]],
    width: int = WIDTH,
) -> str:
    """Three or more runs: each one's environment against ``base``, then one figures
    table with a column per run (change against ``base``, ``*`` where the intervals
    do not overlap)."""
    out: list[str] = []
    for other, env, _figs in pairs:
        out.append(f"environment: run {base} vs run {other}")
        out.extend(f"  {d.host} {d.key}: {d.a} -> {d.b}"[:width] for d in env)
        if not env:
            out.append("  no difference in the recorded fingerprints")
    points = sorted({f.point for _o, _e, figs in pairs for f in figs})
    by = {(other, f.point): f for other, _e, figs in pairs for f in figs}
    rows = []
    for point in points:
        first = next((by[(o, point)].a for o, _e, _f in pairs if (o, point) in by), None)
        row = [point, MISSING if first is None or first.value is None else number(first.value)]
        for other, _e, _f in pairs:
            f = by.get((other, point))
            if f is None or f.b is None or f.b.value is None:
                row.append(MISSING)
                continue
            change = "" if f.change is None else f" ({100 * f.change:+.1f}%)"
            mark_ = "*" if f.overlapping is False else ""
            row.append(f"{number(f.b.value)}{change}{mark_}")
        rows.append(row)
    out.append("")
    out.append(f"figures against run {base} (* the intervals of the median do not overlap)")
    out.append(grid(["point", f"run {base}", *(f"run {o}" for o, _e, _f in pairs)], rows, {0}))
    return "\n".join(out)


def comparison_text(
    run_a: int, run_b: int, env: Sequence[EnvDiff], figs: Sequence[FigureDiff]
) -> str:
    """What differs between two runs: host fingerprints, then figures."""
    from tabulate import tabulate

    def show(v: Any) -> str:
        text = str(v)
        return text if len(text) <= 60 else text[:57] + "..."

    out = [f"environment: run {run_a} vs run {run_b}"]
    if env:
        out.append(
            tabulate(
                [[d.host, d.key, show(d.a), show(d.b)] for d in env],
                headers=["host", "field", f"run {run_a}", f"run {run_b}"],
                disable_numparse=True,
            )
        )
    else:
        out.append("  no difference in the recorded fingerprints")
    out.append("")
    out.append(f"figures: run {run_a} vs run {run_b}")

    def cell(r: PointResult | None) -> str:
        if r is None:
            return MISSING
        if r.value is None:
            return str(r.status)
        return number(r.value) + ("" if r.status is Status.MEASURED else f" ({r.status})")

    rows = []
    for f in figs:
        change = MISSING if f.change is None else f"{100 * f.change:+.1f}%"
        overlap = {None: "", True: "within noise", False: "significant"}[f.overlapping]
        rows.append([f.point, cell(f.a), cell(f.b), change, overlap])
    out.append(
        tabulate(
            rows,
            headers=["point", f"run {run_a}", f"run {run_b}", "change", "intervals"],
            disable_numparse=True,
        )
    )
    return "\n".join(out)


def latency_curve_rows(meta: PointMeta) -> list[dict[str, Any]]:
    """A latency point's curve for ``run --json``: one row per offered rate, with the
    achieved rate, mean/p50/p95/p99 (ms), error ratio, server and busiest client CPU and
    where the knee is
    (``mark``: ``knee`` on the last good rate, ``first-bad`` on the next)."""
    lat = meta.latency
    interval = lat.knee_interval or (None, None)
    rows = []
    for c in lat.curve:
        mark = "knee" if c.rate == interval[0] else "first-bad" if c.rate == interval[1] else ""
        rows.append(
            {
                "offered": c.rate,
                "achieved": c.achieved,
                "mean_ms": c.mean_ms,
                "p50_ms": c.p50_ms,
                "p95_ms": c.p95_ms,
                "p99_ms": c.p99_ms,
                "error_ratio": c.error_ratio,
                "server_cpu_pct": c.server_busy,
                "client_cpu_pct": c.client_busy,
                "mark": mark,
            }
        )
    return rows


def latency_curve_json(meta: PointMeta) -> dict[str, Any]:
    """The curve, the knee, its interval and why there is none (``run --json``)."""
    lat = meta.latency
    return {
        "generator": meta.env.generator,
        "curve": latency_curve_rows(meta),
        "knee_rate": lat.knee_rate,
        "knee_interval": None if lat.knee_interval is None else list(lat.knee_interval),
        "knee_factor": lat.knee_factor,
        "knee_limit_ms": lat.knee_limit_ms,
        "knee_reason": lat.knee_reason,
        "knee_busy": lat.knee_busy,
    }


def _ms(v: Any) -> str:
    if v is None:
        return MISSING
    return f"{v:.2f}" if v < 10 else f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def latency_curve_text(title: str, meta: PointMeta, width: int = WIDTH) -> str:
    """The terminal table of a latency run: one row per offered rate, the knee marked."""
    rows = latency_curve_rows(meta)
    if not rows:
        return ""
    head = (
        f"{'offered/s':>10} {'achieved/s':>10} {'mean ms':>8} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'p99 ms':>8} {'errors':>7} {'srv CPU':>7} {'cli CPU':>7}"
    )
    lines = [f"{title}: latency against offered rate ({meta.env.generator}, open loop)", head]
    for r in rows:
        err = r["error_ratio"]
        mark = {"knee": "  <- knee", "first-bad": "  <- first bad"}.get(r["mark"], "")
        lines.append(
            f"{number(r['offered']):>10} {number(r['achieved']) if r['achieved'] else MISSING:>10}"
            f" {_ms(r['mean_ms']):>8} {_ms(r['p50_ms']):>8} {_ms(r['p95_ms']):>8}"
            f" {_ms(r['p99_ms']):>8} {(MISSING if err is None else f'{100 * err:.2f}%'):>7}"
            f" {_pct(r['server_cpu_pct']):>7} {_pct(r['client_cpu_pct']):>7}{mark}"
        )
    from sizing.knee import KNEE_FLOOR_MS  # here: recommend's start-up never needs the knee

    lat = meta.latency
    interval = lat.knee_interval
    factor = lat.knee_factor or 3
    limit = lat.knee_limit_ms
    beyond = (
        f"p95 above {_ms(limit)} ms ({factor:g}x its low-load value, at least {KNEE_FLOOR_MS:g} ms)"
        if limit
        else f"p95 above {factor:g}x its low-load value"
    )
    if interval:
        lines.append(
            f"knee: between {number(interval[0])} and {number(interval[1])} requests/s "
            f"({beyond}, or errors, from {number(interval[1])}/s)"
        )
    else:
        lines.append(f"no knee: {lat.knee_reason or 'latency stayed flat'}")
    if lat.knee_busy:
        lines.append(lat.knee_busy[0].upper() + lat.knee_busy[1:] + ".")
    return "\n".join(textwrap.fill(line, width) if len(line) > width else line for line in lines)


def _pct(v: Any) -> str:
    return MISSING if v is None else f"{v:.0f}%"
