"""Commands of the sizing engine: ``recommend`` and ``table``.

Each command loads the cost catalog, the bundled reference dataset and (unless told to use
reference data only) the measured figures of the results store, chooses the figures by
``--source``, calls the pure engine and renders. Results go to stdout; which figures were
used goes to stderr. Heavy imports (pydantic, YAML, SQLite) happen inside the
commands so that ``sizing --help`` starts fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from sizing.cli._app import app, emit_json, guarded, warn
from sizing.errors import SizingError, UsageError

if TYPE_CHECKING:
    from sizing.engine import CostCatalog, Recommendation, Selection, SizingTable
    from sizing.model import Figure


class PlatformChoice(StrEnum):
    """``--platform``."""

    BAREMETAL = "baremetal"
    HYPERVISOR = "hypervisor"
    KUBERNETES = "kubernetes"
    ANY = "any"


class HtChoice(StrEnum):
    """``--ht``."""

    OFF = "off"
    ON = "on"
    ANY = "any"


class RedundancyChoice(StrEnum):
    """``--redundancy``."""

    NONE = "none"
    N_PLUS_1 = "n+1"


class SourceChoice(StrEnum):
    """``--source``."""

    MEASURED = "measured"
    REFERENCE = "reference"
    BOTH = "both"


E = TypeVar("E", bound=Enum)


def _choice(enum: type[E], value: str, option: str) -> E:
    """Parse a choice ourselves so a bad value is one clear line, not a usage block."""
    try:
        return enum(value.lower())
    except ValueError:
        allowed = ", ".join(str(m.value) for m in enum)
        raise UsageError(f"{option}: unknown value {value!r} (expected {allowed})") from None


def _metavar(enum: type[Enum]) -> str:
    return "|".join(str(m.value) for m in enum)


SourceOpt = Annotated[
    str,
    typer.Option(
        "--source",
        metavar=_metavar(SourceChoice),
        help="Figures to size from: measured, the bundled published reference data, or both "
        "(measured where a platform/HT/profile series was measured, reference elsewhere).",
    ),
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        help="Hardware cost catalog YAML (default: the bundled profiles/catalog.yml).",
        dir_okay=False,
    ),
]
DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="Results database (default: $SIZING_DB or results/sizing.sqlite)."),
]
EmulatedOpt = Annotated[
    bool,
    typer.Option(
        "--include-emulated",
        help="Also use figures measured in software-emulated guests (never by default).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def _grid(
    headers: list[str], rows: Sequence[Sequence[object]], left: set[int] | None = None
) -> str:
    """A plain-text table: right-aligned columns (``left`` ones left-aligned).

    Hand-rolled rather than tabulate, whose import costs more than the whole engine.
    """
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    left = left or set()

    def line(values: list[str]) -> str:
        parts = [
            v.ljust(w) if i in left else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


# -- loading ---------------------------------------------------------------------------


def _load(
    source: SourceChoice, catalog_path: Path | None, db: Path | None, include_emulated: bool
) -> tuple[CostCatalog, Selection]:
    """Catalog, reference figures and measured figures; say on stderr what is used."""
    from sizing.catalog import load_catalog, load_reference
    from sizing.engine import select

    catalog = load_catalog(catalog_path)
    reference = load_reference()
    measured: list[Figure] = []
    note = ""
    if source is not SourceChoice.REFERENCE:
        measured, note = _measured(db, include_emulated)
    selection = select(measured, reference.figures, source.value)
    _say_source(selection, reference.citation(), note)
    return catalog, selection


def _measured(db: Path | None, include_emulated: bool) -> tuple[list[Figure], str]:
    """Valid measured figures of the store, and a note when there are none.

    A missing database means nothing was measured; it is not created.
    """
    from sizing import paths

    path = db if db is not None else paths.default_db()
    if not path.is_file():
        return [], "nothing measured yet"
    from sizing.store import Store

    with Store(path) as store:
        figures = store.figures(include_emulated=include_emulated)
        if figures:
            return list(figures), ""
        if not include_emulated and store.figures(include_emulated=True):
            return [], "only emulated figures measured (use --include-emulated to use them)"
    return [], "nothing usable measured yet"


def _say_source(selection: Selection, citation: str, note: str) -> None:
    ref = f"reference data ({citation})"
    if selection.source == "reference":
        typer.echo(f"source: {ref}" + (f"; {note}" if note else ""), err=True)
    elif selection.source == "measured":
        typer.echo(f"source: measured ({_series_list(selection.measured_series)})", err=True)
    else:
        typer.echo(
            f"source: measured for {_series_list(selection.measured_series)}; {ref} for the rest",
            err=True,
        )
    origins = sorted({f.origin for f in selection.figures if f.source == "measured"})
    if origins:
        typer.echo("measured figures from: " + "; ".join(origins), err=True)
    if any(f.emulated for f in selection.figures):
        warn("using figures from software-emulated guests: they do not represent real hardware")


def _series_list(keys: tuple[tuple[str, str, str], ...]) -> str:
    return ", ".join(f"{p} {prof.upper()} HT {ht}" for p, ht, prof in keys)


# -- recommend -------------------------------------------------------------------------


@app.command("recommend")
@guarded
def recommend_cmd(
    rps: Annotated[float | None, typer.Option("--rps", help="Target requests per second.")] = None,
    tps: Annotated[
        float | None,
        typer.Option("--tps", help="Target TLS handshakes (new connections) per second."),
    ] = None,
    headroom: Annotated[
        float, typer.Option("--headroom", metavar="PCT", help="Share of capacity kept free, 0-90.")
    ] = 20.0,
    p95: Annotated[
        str | None,
        typer.Option(
            "--p95",
            metavar="LATENCY",
            help="Size --rps by the measured RPS at which p95 latency stays within this"
            " (e.g. 10ms), from latency-profile runs (sizing run --profile latency).",
        ),
    ] = None,
    platform: Annotated[
        str, typer.Option("--platform", metavar=_metavar(PlatformChoice), help="Platform to size.")
    ] = "any",
    ht: Annotated[
        str, typer.Option("--ht", metavar=_metavar(HtChoice), help="Hyper-threading mode.")
    ] = "any",
    redundancy: Annotated[
        str,
        typer.Option(
            "--redundancy",
            metavar=_metavar(RedundancyChoice),
            help="n+1: the demand must still be carried with one server down.",
        ),
    ] = "none",
    source: SourceOpt = "both",
    catalog: CatalogOpt = None,
    max_servers: Annotated[
        int, typer.Option("--max-servers", help="Most identical servers to scale out to.")
    ] = 64,
    db: DbOpt = None,
    include_emulated: EmulatedOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """The cheapest configuration that carries a demand with headroom.

    A configuration is a platform, cores per server, an HT mode and a number of identical
    servers. A mixed demand adds its CPU shares: rps/rps_capacity + tps/tps_capacity must
    stay within 1 - headroom. Ranked by the catalog's total cost.
    """
    from sizing.engine import Demand, recommend

    platform_c = _choice(PlatformChoice, platform, "--platform")
    ht_c = _choice(HtChoice, ht, "--ht")
    redundancy_c = _choice(RedundancyChoice, redundancy, "--redundancy")
    source_c = _choice(SourceChoice, source, "--source")
    demand = Demand(rps=rps, tps=tps, headroom=headroom / 100.0, redundancy=redundancy_c.value)
    demand.validate()  # before any file is read: a bad demand is a usage error
    if max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    if p95 is not None and source_c is SourceChoice.MEASURED and tps is None:
        source_c = SourceChoice.BOTH  # the rps figures all come from latency points anyway
    cat, selection = _load(source_c, catalog, db, include_emulated)
    figures = selection.figures
    if p95 is not None:  # rps figures become "RPS at p95 <= X" (sizing.engine.slo)
        figures = _latency_figures(figures, p95, rps, db, include_emulated)
    result = recommend(
        figures,
        cat,
        demand,
        platforms=None if platform_c is PlatformChoice.ANY else [platform_c.value],
        ht_modes=None if ht_c is HtChoice.ANY else [ht_c.value],
        max_servers=max_servers,
    )
    if json_out:
        emit_json(result.to_dict())
    else:
        _render_recommendation(result)
    if result.recommendation is None:
        raise SizingError(result.explanation[0])


def _latency_figures(
    figures: tuple[Figure, ...], p95: str, rps: float | None, db: Path | None,
    include_emulated: bool,
) -> tuple[Figure, ...]:
    """``--p95``: replace the rps figures by measured RPS-at-p95 figures."""
    from sizing import paths
    from sizing.engine.slo import slo_figures, slo_profile_name
    from sizing.knee import Slo, parse_limit_ms
    from sizing.store import Store

    slo = Slo("p95", parse_limit_ms(p95, "--p95"))
    if rps is None:
        raise UsageError("--p95 sizes a request rate: give --rps too")
    path = db if db is not None else paths.default_db()
    found: list[Figure] = []
    if path.is_file():
        with Store(path) as store:
            found = slo_figures(((p.run_id, p.result) for p in store.iter_valid()), slo,
                                include_emulated=include_emulated)
    if not found:
        raise UsageError(
            f"--p95: no valid latency measurement in {path} (run `sizing run --profile "
            f"latency --slo p95={slo.limit_ms:g}ms`); reference data has no latency figures"
        )
    typer.echo(
        f"sizing RPS as {slo_profile_name(slo)}: "
        + "; ".join(f"{f.platform} {f.cores}c HT {f.ht} {f.value:,.0f}/s ({f.origin})"
                    for f in found),
        err=True,
    )
    return tuple(f for f in figures if f.profile != "rps") + tuple(found)


def _money(v: float | None, currency: str = "USD") -> str:
    if v is None:
        return "-"
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{v:,.0f}" if v >= 100 else f"{sign}{v:,.2f}"


def _render_recommendation(result: Recommendation) -> None:
    best = result.recommendation
    typer.echo(f"Demand: {result.demand.describe()}")
    if best is None:
        return
    for line in result.explanation:
        typer.echo(line)
    for s in result.series:
        if any(f.source == "extrapolated" for f in best.figures if f.profile == s.profile) and (
            s.platform,
            s.ht,
        ) == (best.platform, best.ht):
            typer.echo(f"  {s.platform} {s.profile.upper()} HT {s.ht}: {s.fit.describe()}")
    if not result.alternatives:
        return
    shown = result.alternatives[:8]
    rows = [
        [
            i,
            c.platform,
            c.ht,
            c.cores_per_server,
            c.servers,
            _money(c.total_cost, result.currency),
            "-" if c.capacity_rps is None else f"{c.capacity_rps:,.0f}",
            "-" if c.capacity_tps is None else f"{c.capacity_tps:,.0f}",
            f"{c.utilization * 100:.1f}%",
            "yes" if c.extrapolated else "",
        ]
        for i, c in enumerate(shown, start=2)
    ]
    typer.echo("")
    typer.echo("Alternatives (cheapest first):")
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
    typer.echo(_grid(headers, rows, left={1, 2, 9}))
    more = len(result.alternatives) - len(shown)
    if more > 0:
        typer.echo(f"... and {more} more (see --json)")


# -- table -----------------------------------------------------------------------------


@app.command("table")
@guarded
def table_cmd(
    source: SourceOpt = "both",
    catalog: CatalogOpt = None,
    db: DbOpt = None,
    include_emulated: EmulatedOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """The cost-per-throughput table, in the shape of the NGINX sizing guide's table.

    Per core count of the catalog: hardware cost, RPS and SSL TPS on bare metal and in a
    hypervisor, cost per 1,000 RPS and the virtualization overhead. Every figure is marked
    r (reference), m (measured) or x (extrapolated by the fitted scaling model).
    """
    from sizing.engine import build_table

    source_c = _choice(SourceChoice, source, "--source")
    cat, selection = _load(source_c, catalog, db, include_emulated)
    table = build_table(selection.figures, cat)
    if json_out:
        emit_json(table.to_dict())
    else:
        _render_table(table)


_MARK = {"reference": "r", "measured": "m", "extrapolated": "x"}


def _render_table(table: SizingTable) -> None:
    cur = table.currency

    def fig(platform: str, ht: str, profile: str, cores: int) -> str:
        row = next(r for r in table.rows if r.cores == cores)
        c = row.cell(platform, ht, profile)
        return "-" if c is None else f"{c.value:,.0f} {_MARK.get(c.source, '?')}"

    def per_k(platform: str, ht: str, cores: int) -> str:
        row = next(r for r in table.rows if r.cores == cores)
        c = row.cell(platform, ht, "rps")
        return "-" if c is None else _money(c.cost_per_unit, cur)

    def overhead(ht: str, profile: str, cores: int) -> str:
        row = next(r for r in table.rows if r.cores == cores)
        c = row.cell("hypervisor", ht, profile)
        if c is None or c.overhead_pct is None:
            return "-"
        if c.overhead_ci is not None:
            lo, hi = c.overhead_ci
            return f"{c.overhead_pct:.1f}% [{lo:.1f}, {hi:.1f}]"
        return f"{c.overhead_pct:.1f}%"

    keys = {s.key for s in table.series}
    blocks = 0
    for ht in ("off", "on"):
        if not any(k[0] in ("baremetal", "hypervisor") and k[1] == ht for k in keys):
            continue
        rows = [
            [
                _money(r.hardware_cost, cur),
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
        if blocks:
            typer.echo("")
        typer.echo(f"Traditional architecture, HT {ht}")
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
        typer.echo(_grid(headers, rows))
        blocks += 1
    if any(k[0] == "kubernetes" for k in keys):
        rows = [
            [
                r.cores,
                fig("kubernetes", "off", "rps", r.cores),
                fig("kubernetes", "off", "tps", r.cores),
                fig("kubernetes", "on", "tps", r.cores),
                _money(r.hardware_cost, cur),
                per_k("kubernetes", "off", r.cores),
            ]
            for r in table.rows
        ]
        typer.echo("")
        typer.echo("Kubernetes (NGINX Ingress Controller)")
        headers = [
            "Cores",
            "RPS",
            "SSL TPS (RSA)",
            "SSL TPS RSA with HT",
            "Hardware cost",
            "$/1k RPS",
        ]
        typer.echo(_grid(headers, rows))
    typer.echo("")
    typer.echo(
        "r reference, m measured, x extrapolated; cost per unit on "
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
            typer.echo(f"{s.platform} {s.profile.upper()} HT {s.ht}: {s.fit.describe()}")
