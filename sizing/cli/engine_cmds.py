"""Commands of the sizing engine: ``recommend`` and ``table``.

Each command parses its options into a request, makes one call (:mod:`sizing.app.sizing`:
the bases chosen by ``--source`` and ``--basis``, the pure engine) and renders with
:mod:`sizing.report.render.text`. Results go to stdout; which figures were used goes to
stderr. The use cases are imported inside the commands: the engine, the sources, pydantic,
YAML and SQLite cost ``sizing --help`` and every other command's start-up otherwise
(``benchmarks/recommend_speed`` measures it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.app.status import Answered, exit_status
from sizing.cli.app import columns, emit_json, error, warn
from sizing.cli.options import (
    PLATFORM_METAVAR,
    SIZING_HT,
    ArticlePricesOpt,
    BasisOpt,
    CatalogOpt,
    DbOpt,
    EmulatedOpt,
    ExtrapolationOpt,
    HeadroomOpt,
    JsonOpt,
    RedundancyChoice,
    RpsOpt,
    SourceOpt,
    TpsOpt,
    VirtualizedOpt,
    basis_ids,
    choice,
    completer,
    demand_figures,
    metavar,
    platform_choice,
)
from sizing.model import HtChoice, Source

if TYPE_CHECKING:
    from sizing.app.sizing import Inputs


# -- recommend -------------------------------------------------------------------------


P95Opt = Annotated[
    str | None,
    typer.Option(
        "--p95",
        metavar="LATENCY",
        help="Size --rps by the measured RPS at which p95 latency stays within this"
        " (e.g. 10ms), from latency-profile runs (sizing run --profile latency) of ONE"
        " latency workload: --basis names it (profile/role/scheme/sizeB, e.g."
        " latency/proxy/https/1024B, or a unique prefix); needed when several were"
        " measured.",
    ),
]
PlatformOpt = Annotated[
    str,
    typer.Option(
        "--platform",
        metavar=PLATFORM_METAVAR,
        autocompletion=completer(PLATFORM_METAVAR.split("|")),
        help="Platform to size (esxi: the article's hypervisor).",
    ),
]
HtOpt = Annotated[
    str,
    typer.Option(
        "--ht",
        metavar=metavar(SIZING_HT),
        autocompletion=completer(SIZING_HT),
        help="Hyper-threading mode.",
    ),
]
RedundancyOpt = Annotated[
    str,
    typer.Option(
        "--redundancy",
        metavar=metavar(RedundancyChoice),
        autocompletion=completer(RedundancyChoice),
        help="n+1: the demand must still be carried with one server down.",
    ),
]
MaxServersOpt = Annotated[
    int | None,
    typer.Option(
        "--max-servers",
        help="Most servers to scale out to (no limit unless given; said when it binds).",
    ),
]
ConfidenceOpt = Annotated[
    float | None,
    typer.Option(
        "--confidence",
        metavar="P",
        help="Size so the fleet carries the demand in this share of the plausible"
        " outcomes (e.g. 0.95): each server on the 1-P quantile of its capacity's"
        " bootstrap draws over the measured repetitions. Default: the low end of each"
        " figure's interval, with the confidence reported.",
    ),
]
CpuOpt = Annotated[
    str | None,
    typer.Option(
        "--cpu",
        metavar="MODEL",
        help="Size --tps on another CPU: the chosen basis' handshake figures translated by"
        " the ratio of the two CPUs' crypto ceilings (the basis' measured one, MODEL's"
        " stated in the catalog's `ceilings:`, e.g. from `sizing probe-ceiling`). An"
        " estimate with a wider interval: needs --allow-translation. RPS is never"
        " translated.",
    ),
]
AllowTranslationOpt = Annotated[
    bool,
    typer.Option(
        "--allow-translation",
        help="Allow --cpu's translated figures (labelled 'translated', never mixed with"
        " measured ones).",
    ),
]


def recommend_cmd(
    rps: RpsOpt = None,
    tps: TpsOpt = None,
    headroom: HeadroomOpt = "20",
    p95: P95Opt = None,
    platform: PlatformOpt = "any",
    ht: HtOpt = "any",
    redundancy: RedundancyOpt = "none",
    source: SourceOpt = "both",
    basis: BasisOpt = None,
    catalog: CatalogOpt = None,
    article_prices: ArticlePricesOpt = False,
    allow_extrapolation: ExtrapolationOpt = False,
    max_servers: MaxServersOpt = None,
    confidence: ConfidenceOpt = None,
    cpu: CpuOpt = None,
    allow_translation: AllowTranslationOpt = False,
    db: DbOpt = None,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """The cheapest configuration that carries a demand with headroom.

    A configuration is a platform, cores per server, an HT mode and a number of identical
    servers. A mixed demand adds its CPU shares: rps/rps_capacity + tps/tps_capacity must
    stay within 1 - headroom. Sized from one basis (`sizing results --bases`), on the low
    end of each figure's interval (its coverage is printed: "range of 3 runs, 75%") or,
    with --confidence, on the draws of a bootstrap over the repetitions; measured core
    counts rank before predicted ones. The cheapest fleet is searched exactly, mixing core
    counts of one basis where that is cheaper, and the answer says how likely it is to
    carry the demand.
    """
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app import sizing as app_sizing
    from sizing.engine import Demand
    from sizing.report.explain import explain
    from sizing.report.render.text import basis_json, basis_line, recommendation_text

    inputs = _inputs(source, basis, catalog, db, article_prices, include_virtualized,
                     include_emulated, allow_extrapolation)  # fmt: skip
    rps_n, tps_n, headroom_pct = demand_figures(rps, tps, headroom)
    demand = Demand(rps=rps_n, tps=tps_n, headroom=headroom_pct / 100.0,
                    redundancy=choice(RedundancyChoice, redundancy, "--redundancy").value)
    got = app_sizing.recommend(app_sizing.RecommendRequest(
        demand=demand, inputs=inputs, platform=platform_choice(platform),
        ht=choice(HtChoice, ht, "--ht", SIZING_HT), p95=p95, max_servers=max_servers,
        confidence=confidence, cpu=cpu, allow_translation=allow_translation,
    ))  # fmt: skip
    _say(got.warnings, got.notes)
    result = got.result
    if json_out:
        emit_json({"basis": basis_json(got.inputs.choice, got.inputs.prices), **result.to_dict(),
                   "explanation": list(explain(result))})  # fmt: skip
    else:
        if result.recommendation is None and not got.p95:  # else the explanation names it
            typer.echo(basis_line(got.inputs.choice, columns()))
        typer.echo(recommendation_text(result, columns()))
    if result.recommendation is None:
        error(explain(result)[-1])
    code = exit_status(Answered(result.recommendation is not None))
    if code:
        raise typer.Exit(int(code))


def _inputs(source: str, basis: str | None, catalog: Path | None, db: Path | None,
            article_prices: bool, include_virtualized: bool, include_emulated: bool,
            allow_extrapolation: bool) -> Inputs:  # fmt: skip
    """Where the figures come from, as the options say."""
    from sizing.app.sizing import Inputs  # deferred, as in recommend_cmd

    return Inputs(
        source=choice(Source, source, "--source"),
        basis=basis_ids(basis),
        catalog=catalog,
        db=db,
        article_prices=article_prices,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
        allow_extrapolation=allow_extrapolation,
    )


def _say(warnings: Sequence[str], notes: Sequence[str] = ()) -> None:
    for w in warnings:
        warn(w)
    for n in notes:
        typer.echo(n, err=True)


# -- table -----------------------------------------------------------------------------


WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="One wide table per block (default: split to fit the terminal, at most 100 "
        "columns, the core count and price repeated in each part).",
    ),
]


def table_cmd(
    source: SourceOpt = "both",
    basis: BasisOpt = None,
    catalog: CatalogOpt = None,
    article_prices: ArticlePricesOpt = False,
    allow_extrapolation: ExtrapolationOpt = False,
    db: DbOpt = None,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
    json_out: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The cost-per-throughput table, in the shape of the NGINX sizing guide's table.

    One block per basis group (a host, its hardware, workload and software; the reference
    testbed is its own): per core count, the server price, RPS and SSL TPS per platform,
    cost per 1,000 RPS and the virtualization overhead within the block. Every figure is
    marked r (reference), m (measured), i (interpolated), x (extrapolated) or e (emulated);
    lower bounds read "≥", flags stand beside the figure, and each series' intervals are
    listed under its block. Fits the terminal, at most 100 columns (a wide block is split,
    the core count and price repeated); --wide gives one table per block.
    """
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app import sizing as app_sizing
    from sizing.report.render.table_text import sizing_table_text
    from sizing.report.render.text import basis_json, basis_line

    inputs = _inputs(source, basis, catalog, db, article_prices, include_virtualized,
                     include_emulated, allow_extrapolation)  # fmt: skip
    table, got, warnings = app_sizing.table(inputs)
    _say(warnings)
    if json_out:
        emit_json({"basis": basis_json(got.choice, got.prices), **table.to_dict()})
    else:
        typer.echo(basis_line(got.choice, columns()))
        typer.echo(sizing_table_text(table, wide=wide, width=columns()))
