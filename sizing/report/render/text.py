"""The terminal's tables and JSON documents: the sizing table, the recommendation, the
points of a run, bare metal beside hypervisor, and two runs compared.

Money, marks and numbers come from :mod:`sizing.report.data.format`, and the sizing table's
cells from :mod:`sizing.report.data.tables`: the same implementation as the printed guide.
Functions return text; the CLI prints it. tabulate is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sizing.model import PointResult, Status
from sizing.report.data.format import MISSING, mark, money, number, percent

if TYPE_CHECKING:
    from sizing.engine import Recommendation, Selection, SizingTable
    from sizing.engine.compare import EnvDiff, FigureDiff
    from sizing.knee import Slo
    from sizing.model import Figure


def grid(
    headers: Sequence[str], rows: Sequence[Sequence[object]], left: set[int] | None = None
) -> str:
    """A plain-text table: right-aligned columns (``left`` ones left-aligned).

    Hand-rolled rather than tabulate, whose import costs more than the whole engine.
    """
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    left = left or set()

    def line(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if i in left else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


# -- what the engine sized from (stderr) --------------------------------------------------


def source_lines(selection: Selection, citation: str, note: str) -> list[str]:
    """Which figures were used: the source, and the runs measured ones came from."""
    ref = f"reference data ({citation})"
    if selection.source == "reference":
        lines = [f"source: {ref}" + (f"; {note}" if note else "")]
    elif selection.source == "measured":
        lines = [f"source: measured ({_series_list(selection.measured_series)})"]
    else:
        lines = [
            f"source: measured for {_series_list(selection.measured_series)}; {ref} for the rest"
        ]
    origins = sorted({f.origin for f in selection.figures if f.source == "measured"})
    if origins:
        lines.append("measured figures from: " + "; ".join(origins))
    return lines


def _series_list(keys: tuple[tuple[str, str, str], ...]) -> str:
    return ", ".join(f"{p} {prof.upper()} HT {ht}" for p, ht, prof in keys)


def slo_line(slo: Slo, found: Sequence[Figure]) -> str:
    """``--p95``: the RPS-under-objective figures the recommendation sizes from."""
    from sizing.engine.slo import slo_profile_name

    return f"sizing RPS as {slo_profile_name(slo)}: " + "; ".join(
        f"{f.platform} {f.cores}c HT {f.ht} {f.value:,.0f}/s ({f.origin})" for f in found
    )


# -- recommend ---------------------------------------------------------------------------


def recommendation_text(result: Recommendation) -> str:
    """The demand, the recommendation's explanation and the cheapest alternatives."""
    best = result.recommendation
    out = [f"Demand: {result.demand.describe()}"]
    if best is None:
        return "\n".join(out)
    out.extend(result.explanation)
    for s in result.series:
        if any(f.source == "extrapolated" for f in best.figures if f.profile == s.profile) and (
            s.platform,
            s.ht,
        ) == (best.platform, best.ht):
            out.append(f"  {s.platform} {s.profile.upper()} HT {s.ht}: {s.fit.describe()}")
    if not result.alternatives:
        return "\n".join(out)
    shown = result.alternatives[:8]
    rows = [
        [
            i,
            c.platform,
            c.ht,
            c.cores_per_server,
            c.servers,
            money(c.total_cost, result.currency),
            number(c.capacity_rps),
            number(c.capacity_tps),
            percent(c.utilization * 100),
            "yes" if c.extrapolated else "",
        ]
        for i, c in enumerate(shown, start=2)
    ]
    out.append("")
    out.append("Alternatives (cheapest first):")
    headers = [
        "#",
        "platform",
        "HT",
        "cores",
        "servers",
        "cost",
        "capacity RPS",
        "capacity TPS",
        "utilisation",
        "extrapolated",
    ]
    out.append(grid(headers, rows, left={1, 2, 9}))
    more = len(result.alternatives) - len(shown)
    if more > 0:
        out.append(f"... and {more} more (see --json)")
    return "\n".join(out)


# -- table -------------------------------------------------------------------------------


def sizing_table_text(table: SizingTable) -> str:
    """The article's table, one block per HT mode and one for Kubernetes, with the cells
    of the printed guide (:mod:`sizing.report.data.tables`) and their provenance marks."""
    from sizing.report.data.tables import (
        cost_cell,
        figure_cell,
        has_kubernetes,
        overhead_cell,
        table_cell,
        traditional_modes,
    )

    cur = table.currency

    def fig(platform: str, ht: str, profile: str, cores: int) -> str:
        cell = figure_cell(table, cores, platform, ht, profile)
        return f"{cell.text} {cell.mark}" if cell.mark else cell.text

    def per_k(platform: str, ht: str, cores: int) -> str:
        return cost_cell(table, cores, platform, ht, "rps").text

    def overhead(ht: str, profile: str, cores: int) -> str:
        text = overhead_cell(table, cores, ht, profile).text
        c = table_cell(table, cores, "hypervisor", ht, profile)
        if c is not None and c.overhead_pct is not None and c.overhead_ci is not None:
            lo, hi = c.overhead_ci
            text += f" [{lo:.1f}, {hi:.1f}]"
        return text

    out: list[str] = []
    for ht in traditional_modes(table):
        rows = [
            [
                money(r.hardware_cost, cur),
                r.cores,
                fig("baremetal", ht, "rps", r.cores),
                fig("hypervisor", ht, "rps", r.cores),
                fig("baremetal", ht, "tps", r.cores),
                fig("hypervisor", ht, "tps", r.cores),
                per_k("baremetal", ht, r.cores),
                per_k("hypervisor", ht, r.cores),
                overhead(ht, "rps", r.cores),
                overhead(ht, "tps", r.cores),
            ]
            for r in table.rows
        ]
        if out:
            out.append("")
        out.append(f"Traditional architecture, HT {ht}")
        headers = [
            "Hardware cost",
            "CPU cores",
            "RPS bare metal",
            "RPS hypervisor",
            "SSL TPS bare metal",
            "SSL TPS hypervisor",
            "$/1k RPS bare metal",
            "$/1k RPS hypervisor",
            "RPS overhead",
            "TPS overhead",
        ]
        out.append(grid(headers, rows))
    if has_kubernetes(table):
        rows = [
            [
                r.cores,
                fig("kubernetes", "off", "rps", r.cores),
                fig("kubernetes", "off", "tps", r.cores),
                fig("kubernetes", "on", "tps", r.cores),
                money(r.hardware_cost, cur),
                per_k("kubernetes", "off", r.cores),
            ]
            for r in table.rows
        ]
        out.append("")
        out.append("Kubernetes (NGINX Ingress Controller)")
        headers = [
            "Cores",
            "RPS",
            "SSL TPS (RSA)",
            "SSL TPS RSA with HT",
            "Hardware cost",
            "$/1k RPS",
        ]
        out.append(grid(headers, rows))
    out.append("")
    out.append(
        f"{mark('reference')} reference, {mark('measured')} measured, "
        f"{mark('extrapolated')} extrapolated, {mark('emulated')} emulated; cost per unit on "
        f"{table.cost_basis}; overhead = (bare metal - hypervisor) / bare metal"
        ", [95% interval] where both figures are measured"
    )
    for s in table.series:
        if any(
            c.source == "extrapolated"
            for r in table.rows
            for c in r.cells
            if (c.platform, c.ht, c.profile) == s.key
        ):
            out.append(f"{s.platform} {s.profile.upper()} HT {s.ht}: {s.fit.describe()}")
    return "\n".join(out)


# -- points of a run -----------------------------------------------------------------------


def value_text(value: float | None, unit: str) -> str:
    """A point's figure with its unit (``70,123 requests/s``)."""
    return MISSING if value is None else f"{number(value)} {unit}"


def spread_text(spread: float | None) -> str:
    """A point's spread as ± half of it, in percent."""
    return MISSING if spread is None else f"±{100 * spread / 2:.1f}%"


def point_json(r: PointResult) -> dict[str, Any]:
    """A point for ``--json`` (without its metadata)."""
    return {
        "host": r.key.host,
        "platform": r.key.platform,
        "cores": r.key.cores,
        "ht": r.key.ht,
        "profile": r.key.profile,
        "status": str(r.status),
        "reason": r.reason,
        "value": r.value,
        "unit": r.unit,
        "repetitions": r.repetitions,
        "spread": r.spread,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "flags": list(r.flags),
    }


def points_table(points: Sequence[PointResult]) -> str:
    """A run's points: status and flags, median, spread, repetitions, reason."""
    from tabulate import tabulate

    rows = []
    for r in points:
        rows.append(
            [
                f"{r.key.host} {r.key.platform} {r.key.cores}c ht={r.key.ht} {r.key.profile}",
                str(r.status) + (f" ({', '.join(r.flags)})" if r.flags else ""),
                value_text(r.value, r.unit),
                spread_text(r.spread),
                r.repetitions or MISSING,
                r.reason or "",
            ]
        )
    return tabulate(
        rows,
        headers=["point", "status", "median", "spread", "reps", "reason"],
        tablefmt="simple",
        disable_numparse=True,
        maxcolwidths=[None, None, None, None, None, 60],
    )


def pairs_table(points: Sequence[PointResult]) -> str:
    """Bare metal beside hypervisor, with the virtualization overhead and its interval;
    empty when the run holds no such pair."""
    from tabulate import tabulate

    from sizing.engine.compare import paired

    pairs = paired(points)
    if not pairs:
        return ""
    rows = []
    for p in pairs:
        ci = p.overhead_ci
        over = percent(p.overhead_pct)
        if ci is not None:
            over += f" [{ci[0]:.1f}, {ci[1]:.1f}]"
        flags = sorted(set(p.baremetal.flags) | set(p.hypervisor.flags))
        rows.append(
            [
                f"{p.cores}c ht={p.ht} {p.profile}",
                value_text(p.baremetal.value, p.baremetal.unit),
                value_text(p.hypervisor.value, p.hypervisor.unit),
                over,
                ", ".join(flags),
            ]
        )
    return "\n".join(
        [
            "",
            "bare metal vs hypervisor (overhead = (bare metal - guest) / bare metal, [95%])",
            tabulate(
                rows,
                headers=["point", "bare metal", "hypervisor", "overhead", "flags"],
                disable_numparse=True,
            ),
        ]
    )


# -- two runs compared ---------------------------------------------------------------------


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
            headers=["point", f"run {run_a}", f"run {run_b}", "change", "95% intervals"],
            disable_numparse=True,
        )
    )
    return "\n".join(out)
