"""The terminal's tables and JSON documents: the sizing table, the recommendation, the
points of a run, bare metal beside hypervisor, and two runs compared.

Money, marks and numbers come from :mod:`sizing.report.data.format`, and the sizing table's
cells from :mod:`sizing.report.data.tables`: the same implementation as the printed guide.
Functions return text; the CLI prints it. tabulate is imported inside the functions.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sizing.model import PREDICTED, FigureKind, PointResult, Status
from sizing.records import PointMeta
from sizing.report.data.format import MISSING, cell_source, mark, money, number, percent
from sizing.report.explain import explain
from sizing.report.render.grid import grid
from sizing.report.render.points import UNITS, point_json

if TYPE_CHECKING:
    from sizing.engine import Recommendation, SizingTable
    from sizing.engine.basis import Basis, Choice, Price
    from sizing.engine.compare import EnvDiff, FigureDiff
    from sizing.engine.table import Cell
    from sizing.knee import Slo
    from sizing.model import Figure


# -- bases -----------------------------------------------------------------------------


def basis_line(choice: Choice) -> str:
    """``basis: <ids> — <why>``, then ``passed over: <id> (<why>); ...`` when a basis was
    left out: what a command sizes from, why, and what it did not use (on stdout, part of
    the answer), wrapped to 100 columns."""
    lines = _wrap(f"basis: {', '.join(choice.ids) or 'none'} — {choice.why}", 100)
    if passed_over_line(choice):
        lines += _wrap(passed_over_line(choice), 100)
    return "\n".join(lines)


def passed_over_line(choice: Choice) -> str:
    """The bases not used and why (those the basis sentence already names left out);
    empty when there are none."""
    left = [(i, r) for i, r in choice.passed_over if f"{i}: {r}" not in choice.why]
    if not left:
        return ""
    return "passed over: " + "; ".join(f"{i} ({r})" for i, r in left)


def basis_json(choice: Choice, prices: Mapping[str, Price] | None = None) -> dict[str, Any]:
    """The ``"basis"`` object of every ``--json`` document: the chosen bases (with the
    price each one is sized on, when it has its own), why, and the bases passed over."""
    doc = choice.to_dict()
    doc["ids"] = list(choice.ids)
    for b in doc["bases"]:
        if b.get("price") is None and prices and b["id"] in prices:
            b["price"] = prices[b["id"]].to_dict()
    return doc


def bases_rows(
    bases: Sequence[Basis],
    choice: Choice,
    *,
    include_virtualized: bool = False,
    include_emulated: bool = False,
) -> list[dict[str, Any]]:
    """Every basis as ``results --bases --json`` lists it: its identity, core counts per
    profile, flags, whether the default choice may use it (and why not), its price source
    and whether the default choice took it."""
    out = []
    for b in bases:
        ok, why_not = b.qualifies(
            include_virtualized=include_virtualized, include_emulated=include_emulated
        )
        doc = b.to_dict()
        doc["qualifies"] = ok
        doc["why_not"] = why_not
        doc["price_source"] = (
            b.price.source
            if b.price is not None
            else ("catalog (article 2021 prices)" if b.origin == FigureKind.REFERENCE else None)
        )
        doc["chosen"] = b.id in choice.ids
        doc["passed_over"] = dict(choice.passed_over).get(b.id, "")
        doc["figure_flags"] = sorted({fl for f in b.figures for fl in f.flags})
        out.append(doc)
    return out


def bases_text(rows: Sequence[Mapping[str, Any]], choice: Choice, *, verbose: bool = False) -> str:
    """``results --bases``: one line per basis, then the default choice and why. Fits 100
    columns (the last column cut with …); ``verbose`` adds software, runs and price, in
    full."""
    from sizing.report.render.points import WIDTH

    table = []
    for r in rows:
        cores = "; ".join(
            f"{p.upper()} {','.join(str(c) for c in cs)}" for p, cs in r["core_counts"].items()
        )
        flags = sorted(set(r["flags"]) | set(r["figure_flags"]))
        use = (
            "chosen"
            if r["chosen"]
            else (f"no: {r['why_not']}" if not r["qualifies"] else f"no: {r['passed_over']}")
        )
        row = [r["id"], r["hardware"]["label"], r["workload"]["label"], cores or MISSING]
        if verbose:
            row += [
                r["software"] or MISSING,
                ",".join(str(x) for x in r["runs"]) or MISSING,
                ", ".join(flags) or MISSING,
                r["price_source"] or "none",
            ]
        else:
            row.append(",".join(flags) or MISSING)
        table.append([*row, use])
    if verbose:
        headers = ["basis", "hardware", "workload", "core counts"]
        headers += ["software", "runs", "flags", "price", "default choice"]
        lines = grid(headers, table, left=set(range(len(headers)))).splitlines()
    else:
        # A record per basis (two lines), each cut to the width: the labels are long.
        lines = []
        for row in table:
            ident, hardware, workload, cores, flags, use = row
            lines.append(f"{ident}  [{cores}]  {use}")
            lines.append(f"    {hardware}; {workload}; flags: {flags}")
        lines = [x if len(x) <= WIDTH else x[: WIDTH - 1] + "…" for x in lines]
        lines.append("(--verbose: one wide table with software, runs and price, in full)")
    return "\n".join([*lines, "", basis_line(choice)])


def slo_line(slo: Slo, found: Sequence[Figure], workload: str = "") -> str:
    """``--p95``: the RPS-under-objective figures the recommendation sizes from, of one
    latency workload; a figure whose objective held at the highest rate measured is a
    lower bound (no knee reached)."""
    from sizing.engine.slo import slo_profile_name

    of = f" of latency workload {workload}" if workload else ""
    return f"sizing RPS as {slo_profile_name(slo)}{of}: " + "; ".join(
        f"{f.platform} {f.cores}c HT {f.ht} {'>= ' if f.lower_bound else ''}{f.value:,.0f}/s"
        f" ({f.origin}{'; only a lower bound: no knee reached' if f.lower_bound else ''})"
        for f in found
    )


# -- recommend ---------------------------------------------------------------------------


def recommendation_text(result: Recommendation) -> str:
    """The demand, the recommendation's explanation (which names the basis, the capacity
    interval it sized on and the flags) and the cheapest alternatives, each with its basis
    and flags."""
    best = result.recommendation
    out = [f"Demand: {result.demand.describe()}"]
    if best is None:
        return "\n".join(out)
    for line in explain(result):
        out.extend(_wrap(line, TABLE_WIDTH))
    refused: dict[str, list[str]] = {}
    for r in result.rejected:
        if r.cores_per_server is not None and r.servers_needed is None:
            refused.setdefault(r.reason, []).append(f"{r.platform} {r.cores_per_server}-core")
    for reason, what in refused.items():
        out.extend(_wrap(f"Not sized: {', '.join(dict.fromkeys(what))}: {reason}.", TABLE_WIDTH))
    if not result.alternatives:
        return "\n".join(out)
    shown = result.alternatives[:8]
    several = len({c.basis for c in (best, *shown)}) > 1
    profiles = result.demand.profiles
    headers = [
        "#",
        *(["basis"] if several else ["platform"]),  # a basis id names its platform
        "HT",
        "cores",
        "servers",
        "cost",
        *(["capacity RPS"] if "rps" in profiles else []),
        *(["capacity TPS"] if "tps" in profiles else []),
        "CPU use",
        "figures",
        "flags",
    ]
    rows = [
        [
            i,
            *([c.basis] if several else [c.platform]),
            c.ht,
            c.cores_per_server,
            c.servers,
            money(c.total_cost, result.currency),
            *([number(c.capacity_rps)] if "rps" in profiles else []),
            *([number(c.capacity_tps)] if "tps" in profiles else []),
            percent(c.utilization * 100),
            _sources(c.figures),
            ", ".join(c.flags),
        ]
        for i, c in enumerate(shown, start=2)
    ]
    out.append("")
    out.extend(
        _wrap(
            "Identical fleets (cheapest first; capacity on the low end of each figure's "
            "interval, whose coverage is stated with the figure):",
            TABLE_WIDTH,
        )
    )
    n = len(headers)
    lines = grid(headers, rows, left={1, n - 2, n - 1}).splitlines()
    if any(len(x) > TABLE_WIDTH for x in lines):
        lines = [x if len(x) <= TABLE_WIDTH else x[: TABLE_WIDTH - 1] + "…" for x in lines]
        lines.append("(… cut at 100 columns: --json gives every column)")
    out.extend(lines)
    more = len(result.alternatives) - len(shown)
    if more > 0:
        out.append(f"... and {more} more (see --json)")
    return "\n".join(out)


def _sources(figures: Sequence[Figure]) -> str:
    """How a configuration's figures were obtained: ``measured``, ``shape``, ... each once."""
    return ", ".join(dict.fromkeys(f.source for f in figures))


# -- table -------------------------------------------------------------------------------


def _compared(pct: float | None, ci: tuple[float, float] | None, pairs: int) -> str:
    """An overhead or HT gain cell: the percentage, its interval, paired or not."""
    if pct is None:
        return MISSING
    text = percent(pct)
    if ci is not None:
        text += f" [{ci[0]:.1f}, {ci[1]:.1f}]"
        text += f" paired×{pairs}" if pairs else " unpaired"
    return text


def _overhead(c: Cell | None) -> str:
    return MISSING if c is None else _compared(c.overhead_pct, c.overhead_ci, c.overhead_pairs)


def _ht_gain(c: Cell | None) -> str:
    return MISSING if c is None else _compared(c.ht_gain_pct, c.ht_gain_ci, c.ht_gain_pairs)


def cell_text(c: Cell) -> str:
    """A table figure for the terminal: ``≥300,000 r (client-bound)``: the value (lower
    bounds with ≥), its provenance mark and its flags."""
    text = c.display
    m = mark(cell_source(c.source, c.emulated))
    if m:
        text += f" {m}"
    flags = [f for f in c.flags if f != "emulated"]
    if flags:
        text += f" ({', '.join(flags)})"
    return text


TABLE_WIDTH = 100  # the default text table fits this many columns (--wide: one table)


def _column_groups(
    fixed: Sequence[tuple[str, Sequence[str]]],
    groups: Sequence[Sequence[tuple[str, Sequence[str]]]],
    width: int | None,
) -> list[str]:
    """Render ``fixed`` columns plus as many whole ``groups`` of columns as fit ``width``
    per table (every table repeats the fixed ones); ``width`` None: one table."""

    def render(cols: Sequence[tuple[str, Sequence[str]]]) -> str:
        headers = [h for h, _ in cols]
        n = len(cols[0][1])
        rows = [[c[1][i] for c in cols] for i in range(n)]
        return grid(headers, rows)

    if width is None:
        return [render([*fixed, *(c for g in groups for c in g)])]
    tables: list[str] = []
    current: list[tuple[str, Sequence[str]]] = []
    for g in groups:
        trial = render([*fixed, *current, *g])
        if current and max(len(x) for x in trial.splitlines()) > width:
            tables.append(render([*fixed, *current]))
            current = list(g)
        else:
            current.extend(g)
    if current or not tables:
        tables.append(render([*fixed, *current]))
    return tables


def _wrap(text: str, width: int | None) -> list[str]:
    """A note wrapped to ``width`` (continuation lines indented); as is when None."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width=width, subsequent_indent="  ", break_on_hyphens=False)


def sizing_table_text(table: SizingTable, wide: bool = False) -> str:
    """The article-shaped table, one titled block per group of bases (a host and its
    guests, or the reference testbed): per core count each platform's RPS and SSL TPS with
    provenance marks and flags, cost per 1k RPS, and the overhead within the block only.

    Fits :data:`TABLE_WIDTH` columns: a block whose series do not fit in one table is split
    into several, each repeating the core count and the server price, a platform's figures,
    cost and overhead kept together; notes are wrapped. ``wide``: one table per block."""
    width = None if wide else TABLE_WIDTH
    out: list[str] = []
    for block in table.blocks:
        if out:
            out.append("")
        out.extend(_wrap(f"[{block.title}]", width))
        for i, t in enumerate(_block_tables(block, table.currency, width)):
            if i:
                out.append("")
            out.append(t)
        for n in _block_notes(block):
            out.extend(_wrap(n, width))
    out.append("")
    legend = (
        f"{mark('reference')} reference, {mark('measured')} measured, "
        f"{mark('interpolated')} interpolated, {mark('extrapolated')} extrapolated or "
        f"shape-borrowed, {mark('emulated')} emulated, {mark('translated')} translated to "
        "another CPU; "
        "≥ a lower bound (the source could not saturate the server); (flags) beside a "
        f"figure; cost per unit on {table.cost_basis}, sized on the low end of each figure's "
        "interval (range of n runs with its coverage, or a 95% prediction interval); "
        "overhead = (bare metal - guest) / bare metal within one block only, "
        "[interval from both figures' intervals] where both are measured"
    )
    out.extend(_wrap(legend, width))
    return "\n".join(out)


def _block_tables(block: Any, cur: str, width: int | None) -> list[str]:
    """A block's table, split to fit ``width``: the core count and price repeated, each
    series' figures, cost, overhead and HT gain kept together."""
    rows = list(block.rows)
    fixed = [
        ("CPU cores", [str(r.cores) for r in rows]),
        ("server price", [money(r.hardware_cost, cur) if r.hardware_cost else MISSING
                          for r in rows]),
    ]  # fmt: skip
    groups: list[list[tuple[str, Sequence[str]]]] = []
    for s in block.series:
        pl, ht, p = s.platform, s.ht, s.profile
        cells = [r.cell(pl, ht, p) for r in rows]
        group: list[tuple[str, Sequence[str]]] = [
            (f"{p.upper()} {pl} HT {ht}", [MISSING if c is None else cell_text(c) for c in cells])
        ]
        if p == "rps":
            group.append((f"$/1k RPS {pl}", [MISSING if c is None else money(c.cost_per_unit, cur)
                                             for c in cells]))  # fmt: skip
        if pl in ("kvm", "esxi", "hypervisor"):
            group.append((f"{p.upper()} overhead {pl}", [_overhead(c) for c in cells]))
        if any(c is not None and c.ht_gain_pct is not None for c in cells):
            group.append((f"{p.upper()} HT gain {pl}", [_ht_gain(c) for c in cells]))
        groups.append(group)
    return list(_column_groups(fixed, groups, width))


def _cells_of(block: Any, srs: Any) -> list[Any]:
    return [c for r in block.rows for c in r.cells
            if (c.platform, c.ht, c.profile) == (srs.platform, srs.ht, srs.profile)]  # fmt: skip


def _block_notes(block: Any) -> list[str]:
    """Under a block: prices, what was not sized, each series' intervals (figures,
    overhead, HT gain), the fits of predicted figures, and the ceilings."""
    notes = [f"price of {basis_id}: {price}" for basis_id, price in block.price_sources]
    notes += list(dict.fromkeys(
        f"not sized: {x.platform} {x.profile.upper()} HT {x.ht}: {x.reason}"
        for x in block.refused))  # fmt: skip
    for srs in block.series:
        name = f"{srs.platform} {srs.profile.upper()} HT {srs.ht}"
        shown = [c for c in _cells_of(block, srs) if c.ci_low is not None and c.ci_high is not None]
        if shown:
            notes.append(f"{name} intervals: " + "; ".join(
                f"{c.cores}c {number(c.ci_low)}–{number(c.ci_high)}"
                + (f" ({c.interval})" if c.interval else "") for c in shown))  # fmt: skip
    for srs in block.series:
        compared = [
            (c.cores, what, words)
            for c in _cells_of(block, srs)
            for what, words, ci in (
                ("overhead", c.overhead_interval, c.overhead_ci),
                ("HT gain", c.ht_gain_interval, c.ht_gain_ci),
            )
            if words and ci is not None
        ]
        for what in dict.fromkeys(w for _, w, _ in compared):
            notes.append(
                f"{srs.platform} {srs.profile.upper()} HT {srs.ht} {what} intervals: "
                + "; ".join(f"{n}c {words}" for n, w, words in compared if w == what)
            )
    for srs in block.series:
        if {c.source for c in _cells_of(block, srs)} & set(PREDICTED):
            notes.append(f"{srs.platform} {srs.profile.upper()} HT {srs.ht}: {srs.fit.describe()}")
    if any(srs.origin == FigureKind.REFERENCE for srs in block.series):
        notes.append("ceilings: not stated (the reference data names no CPU model)")
    for srs in block.series:
        notes += _ceiling_notes(block, srs)
    return notes


def _ceiling_notes(block: Any, srs: Any) -> list[str]:
    """A series' physical ceilings and each figure's share of them ("ceiling: ... 1c 46%,
    2c 44%"); none for reference data (its block says "not stated")."""
    from sizing.ceilings import ABOVE

    name = f"{srs.platform} {srs.profile.upper()} HT {srs.ht}"
    out = []
    for b in srs.bounds:
        shares = []
        for r in block.rows:
            c = r.cell(srs.platform, srs.ht, srs.profile)
            limit = b.at(r.cores)
            if c is not None and limit:
                shares.append(f"{r.cores}c {100 * c.value / limit:.0f}%")
        line = f"{name} ceiling: {b.what}" + (f": {', '.join(shares)}" if shares else "")
        over = any(
            (c := r.cell(srs.platform, srs.ht, srs.profile)) is not None
            and c.source == FigureKind.MEASURED
            and (lim := b.at(r.cores))
            and c.value > 1.05 * lim
            for r in block.rows
        )
        out.append(line + (ABOVE if over else ""))
    return out


# -- points of a run -----------------------------------------------------------------------


def value_text(value: float | None, unit: str) -> str:
    """A point's figure with its unit (``70,123 requests/s``)."""
    return MISSING if value is None else f"{number(value)} {unit}"


def _ratio_cells(ratio: Any, pct: tuple[float, float | None, float | None] | None) -> list[str]:
    """A comparison's figure with its interval, and whether its legs were paired."""
    if ratio is None or pct is None:
        return [MISSING, ""]
    value, lo, hi = pct
    text = percent(value)
    if lo is not None and hi is not None:
        text += f" [{lo:.1f}, {hi:.1f}]"
    if not ratio.paired:
        each = f" (legs {ratio.leg_coverage * 100:.3g}%)" if ratio.leg_coverage is not None else ""
        return [text, f"unpaired{each}"]
    cov = f" ({ratio.coverage * 100:.3g}%)" if ratio.coverage is not None else ""
    return [text, f"paired×{ratio.pairs}{cov}"]


def _short(value: float | None, unit: str) -> str:
    return MISSING if value is None else f"{number(value)} {UNITS.get(unit, unit)}"


def pairs_table(points: Sequence[PointResult]) -> str:
    """Bare metal beside hypervisor with the virtualization overhead, and HT off beside
    HT on with the HT gain, each with its interval and whether its legs were measured
    as a pair (the median of the per-pair ratios) or apart; the leg that failed its
    guards and the flags below; empty when there is none."""
    from tabulate import tabulate

    from sizing.engine.compare import ht_pairs, paired

    out: list[str] = []
    sections = [
        (
            "bare metal vs hypervisor (overhead = 1 - guest / bare metal: paired legs give the\n"
            "median of the per-pair ratios and its interval, unpaired ones both legs' intervals)",
            ["point", "bare metal", "hypervisor", "overhead [interval]", "legs"],
            [
                (f"{p.cores}c ht={p.ht} {p.profile}", p.baremetal, p.hypervisor,
                 p.ratio, True, p.failed)
                for p in paired(points)
            ],
        ),
        (
            "HT off vs HT on (gain = HT on / HT off - 1)",
            ["point", "HT off", "HT on", "HT gain [interval]", "legs"],
            [
                (f"{h.off.key.host} {h.off.key.cores}c {h.off.key.profile}", h.off, h.on,
                 h.ratio, False, h.failed)
                for h in ht_pairs(points)
            ],
        ),
    ]  # fmt: skip
    for title, headers, items in sections:
        if not items:
            continue
        rows, notes = [], []
        for name, a, b, ratio, loss, failed in items:
            pct = None if ratio is None else (ratio.as_loss_pct() if loss else ratio.as_gain_pct())
            rows.append(
                [name, _short(a.value, a.unit), _short(b.value, b.unit), *_ratio_cells(ratio, pct)]
            )
            flags = ", ".join(sorted(set(a.flags) | set(b.flags)))
            said = "; ".join(x for x in (failed, flags) if x)
            if said:
                notes.append(
                    textwrap.fill(
                        f"{name}: {said}",
                        width=100,
                        initial_indent="  ",
                        subsequent_indent="    ",
                        break_on_hyphens=False,
                    )
                )
        out += ["", title, tabulate(rows, headers=headers, disable_numparse=True), *notes]
        if loss and any("emulated" in n for n in notes):
            out.append(
                "emulated: the guest ran under software emulation (QEMU TCG); its loss is "
                "emulation's,\nnot a virtualization overhead of KVM or ESXi"
            )
    return "\n".join(out)


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


def comparisons_text(
    base: int, pairs: Sequence[tuple[int, Sequence[EnvDiff], Sequence[FigureDiff]]]
) -> str:
    """Three or more runs: each one's environment against ``base``, then one figures
    table with a column per run (change against ``base``, ``*`` where the intervals
    do not overlap)."""
    out: list[str] = []
    for other, env, _figs in pairs:
        out.append(f"environment: run {base} vs run {other}")
        out.extend(f"  {d.host} {d.key}: {d.a} -> {d.b}"[:100] for d in env)
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


def latency_curve_text(title: str, meta: PointMeta) -> str:
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
    return "\n".join(textwrap.fill(line, 100) if len(line) > 100 else line for line in lines)


def _pct(v: Any) -> str:
    return MISSING if v is None else f"{v:.0f}%"
