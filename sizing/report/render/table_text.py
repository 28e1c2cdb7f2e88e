"""The sizing table on a terminal: one titled block per group of bases, split to fit the
terminal (at most 100 columns), with each series' intervals, fits and ceilings listed under
its block."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sizing.ceilings import ABOVE
from sizing.model import PREDICTED, FigureKind, SizingMetric
from sizing.report.data.format import (
    CONTAINER_NOTE,
    MISSING,
    cell_source,
    currency_sign,
    mark,
    money,
    number,
    percent,
)
from sizing.report.render.grid import grid
from sizing.textfit import fold

if TYPE_CHECKING:
    from sizing.report.data.results import Cell, SizingTable


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
    m = mark(cell_source(c.source, c.emulated, c.flags))
    if m:
        text += f" {m}"
    flags = [f for f in c.flags if f != "emulated"]
    if flags:
        text += f" ({', '.join(flags)})"
    return text


TABLE_WIDTH = 100  # the default text table fits this many columns (--wide: one table)
MIN_NAME = 16  # a server's name is never folded narrower than this


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
        return grid(headers, rows, left={i for i, h in enumerate(headers) if h == "server"})

    if width is None:
        return [render([*fixed, *(c for g in groups for c in g)])]

    def fits(cols: Sequence[tuple[str, Sequence[str]]]) -> bool:
        return max(len(x) for x in render(cols).splitlines()) <= width

    # a group too wide alone (a platform's figures beside its overhead interval at 80
    # columns) is parted column by column rather than overflow the terminal
    parts = [part for g in groups for part in ([g] if fits([*fixed, *g]) else [[c] for c in g])]
    tables: list[str] = []
    current: list[tuple[str, Sequence[str]]] = []
    for g in parts:
        if current and not fits([*fixed, *current, *g]):
            tables.append(render([*fixed, *current]))
            current = list(g)
        else:
            current.extend(g)
    if current or not tables:
        tables.append(render([*fixed, *current]))
    return tables


def wrap(text: str, width: int | None) -> list[str]:
    """A note wrapped to ``width`` (continuation lines indented); as is when None."""
    if width is None or len(text) <= width:
        return [text]
    return fold(text, width)


def sizing_table_text(table: SizingTable, wide: bool = False, width: int = TABLE_WIDTH) -> str:
    """The article-shaped table, one titled block per group of bases (a host and its
    guests, or the reference testbed): per core count each platform's RPS and SSL TPS with
    provenance marks and flags, cost per 1k RPS, and the overhead within the block only.

    Fits ``width`` columns (:data:`TABLE_WIDTH` unless the terminal is narrower): a block
    whose series do not fit in one table is split into several, each repeating the core
    count and the server price, a platform's figures, cost and overhead kept together;
    notes are wrapped. ``wide``: one table per block."""
    fit: int | None = None if wide else width
    out: list[str] = []
    for block in table.blocks:
        if out:
            out.append("")
        out.extend(wrap(f"[{block.title}]", fit))
        for i, t in enumerate(_block_tables(block, table.currency, fit)):
            if i:
                out.append("")
            out.append(t)
        for n in _block_notes(block, table.currency):
            out.extend(wrap(n, fit))
    out.append("")
    made_up = any(
        "simulated" in c.flags
        for b in table.blocks
        for r in b.rows
        for s in b.series
        if (c := r.cell(s.platform, s.ht, s.profile)) is not None
    )
    legend = (
        f"{mark('reference')} reference, {mark('measured')} measured, "
        f"{mark('interpolated')} interpolated, {mark('extrapolated')} extrapolated, "
        f"{mark('shape')} shape-borrowed, {mark('emulated')} emulated, "
        f"{mark('translated')} translated to another CPU"
        + (f", {mark('simulated')} made up for an example, not measured" if made_up else "")
        + "; "
        "≥ a lower bound (the source could not saturate the server); (flags) beside a "
        f"figure; cost per unit on {table.cost_basis}, sized on the low end of each figure's "
        "interval (range of n runs with its coverage, or a 95% prediction interval); "
        "overhead = (bare metal - guest) / bare metal within one block only, "
        "[interval from both figures' intervals] where both are measured"
    )
    out.extend(wrap(legend, fit))
    if any(s.platform in ("container", "kubernetes") for b in table.blocks for s in b.series):
        out.extend(wrap(CONTAINER_NOTE, fit))
    cat = table.catalog
    if cat is not None:
        out.extend(wrap(f"prices: {cat.label}; {table.cost_basis}", fit))
        # a row per core count: the catalog's other servers of a count are named, never
        # left out (recommend prices each, and names the one passed over)
        shown = {r.server_name for r in table.rows if r.server_name}
        also = [
            f"{o.label()} {money(o.price, table.currency)}"
            for o in cat.servers
            if o.name and o.name not in shown and any(r.cores == o.cores for r in table.rows)
        ]
        if also:
            out.extend(
                wrap(
                    "also in the catalog at a core count above (one server a row; `sizing "
                    "recommend` prices each): " + "; ".join(also),
                    fit,
                )
            )
    if table.left_out:
        out.extend(wrap("left out of the costs: " + ", ".join(table.left_out), fit))
    return "\n".join(out)


def _block_tables(block: Any, cur: str, width: int | None) -> list[str]:
    """A block's table, split to fit ``width``: the core count and price repeated, each
    series' figures, cost, overhead and HT gain kept together."""
    rows = list(block.rows)
    names = [_server_name(r) for r in rows]
    fixed = [
        ("CPU cores", [str(r.cores) for r in rows]),
        *([("server", [n or MISSING for n in names])] if any(names) else []),
        (
            "server price",
            [money(r.hardware_cost, cur) if r.hardware_cost else MISSING for r in rows],
        ),
    ]
    groups: list[list[tuple[str, Sequence[str]]]] = []
    for s in block.series:
        pl, ht, p = s.platform, s.ht, s.profile
        cells = [r.cell(pl, ht, p) for r in rows]
        group: list[tuple[str, Sequence[str]]] = [
            (f"{p.upper()} {pl} HT {ht}", [MISSING if c is None else cell_text(c) for c in cells])
        ]
        if p == SizingMetric.RPS:
            group.append(
                (
                    f"{currency_sign(cur).strip()}/1k RPS {pl}",
                    [MISSING if c is None else money(c.cost_per_unit, cur) for c in cells],
                )
            )
        # a container's overhead only where it has one (a container without bare metal)
        if pl in ("kvm", "esxi", "hypervisor") or any(
            c is not None and c.overhead is not None for c in cells
        ):
            group.append((f"{p.upper()} overhead {pl}", [_overhead(c) for c in cells]))
        if any(c is not None and c.ht_gain_pct is not None for c in cells):
            group.append((f"{p.upper()} HT gain {pl}", [_ht_gain(c) for c in cells]))
        groups.append(group)
    return list(_column_groups(_names_folded(fixed, groups, width), groups, width))


def _names_folded(
    fixed: Sequence[tuple[str, Sequence[str]]],
    groups: Sequence[Sequence[tuple[str, Sequence[str]]]],
    width: int | None,
) -> list[tuple[str, Sequence[str]]]:
    """The fixed columns, the server's names folded over lines when they are too long for
    the table to fit ``width`` with even its widest single column beside them (a catalog's
    "Hewlett Packard Enterprise ProLiant DL385 Gen11 2U dual-socket rack server")."""
    names = dict(fixed).get("server")
    if width is None or names is None:
        return list(fixed)

    def wide(col: tuple[str, Sequence[str]]) -> int:
        return max(len(x) for x in [col[0], *col[1]])

    others = sum(wide(c) + 2 for c in fixed if c[0] != "server")
    widest = max((wide(c) + 2 for g in groups for c in g), default=0)
    room = max(width - others - widest, MIN_NAME)
    if wide(("server", names)) <= room:
        return list(fixed)
    folded = ["\n".join(fold(n, room, subsequent="")) for n in names]
    return [(h, folded if h == "server" else col) for h, col in fixed]


def _server_name(row: Any) -> str:
    """The model priced at a row's core count: the catalog's, else a basis price's."""
    return str(row.server_name or next((c.server_name for c in row.cells if c.server_name), ""))


def _cost_notes(block: Any, cur: str) -> list[str]:
    """One line per platform whose server cost is more than its hardware price: what one
    server costs, part by part (``cost of one esxi server: 4c hardware $1,300 + licence
    $1,000 + power $315.36 = $2,615.36``)."""
    notes = []
    for platform in dict.fromkeys(s.platform for s in block.series):
        costs: dict[int, Any] = {}
        for r in block.rows:
            for c in r.cells:
                if c.platform == platform and c.cost is not None:
                    costs.setdefault(r.cores, c.cost)
        if not any(x.total != x.hardware for x in costs.values()):
            continue
        notes.append(
            f"cost of one {platform} server: "
            + "; ".join(
                f"{n}c "
                + " + ".join(
                    f"{what} {money(v, cur, cents=abs(v - round(v)) >= 0.005)}"
                    for what, v in (
                        ("hardware", x.hardware),
                        ("licence", x.licence),
                        ("support", x.support),
                        ("power", x.power),
                    )
                    if v
                )
                + f" = {money(x.total, cur, cents=abs(x.total - round(x.total)) >= 0.005)}"
                for n, x in sorted(costs.items())
            )
        )
    return notes


def _cells_of(block: Any, srs: Any) -> list[Any]:
    return [
        c
        for r in block.rows
        for c in r.cells
        if (c.platform, c.ht, c.profile) == (srs.platform, srs.ht, srs.profile)
    ]


def _block_notes(block: Any, cur: str) -> list[str]:
    """Under a block: prices, what was not sized, each series' intervals (figures,
    overhead, HT gain), the fits of predicted figures, and the ceilings."""
    notes = [f"price of {basis_id}: {price}" for basis_id, price in block.price_sources]
    unsold = [r.cores for r in block.rows if not r.sold]
    if unsold:
        notes.append(
            "core counts with figures but not sold in the catalog (no price): "
            + ", ".join(str(n) for n in unsold)
        )
    notes += _cost_notes(block, cur)
    notes += list(
        dict.fromkeys(
            f"not sized: {x.platform} {x.profile.upper()} HT {x.ht}: {x.reason}"
            for x in block.refused
        )
    )
    for srs in block.series:
        name = f"{srs.platform} {srs.profile.upper()} HT {srs.ht}"
        shown = [c for c in _cells_of(block, srs) if c.ci_low is not None and c.ci_high is not None]
        if shown:
            notes.append(
                f"{name} intervals: "
                + "; ".join(
                    f"{c.cores}c {number(c.ci_low)}–{number(c.ci_high)}"
                    + (f" ({c.interval})" if c.interval else "")
                    for c in shown
                )
            )
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
