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
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.app.status import Answered, exit_status
from sizing.cli.app import columns, emit_json, error, warn
from sizing.cli.options import (
    ArticlePricesOpt,
    BasisOpt,
    CatalogOpt,
    DbOpt,
    EmulatedOpt,
    ExtrapolationOpt,
    JsonOpt,
    SourceOpt,
    VirtualizedOpt,
)
from sizing.cli.sizing_opts import (
    AllowTranslationOpt,
    ComparePlatformsOpt,
    ConfidenceOpt,
    CpuOpt,
    GrowthOpt,
    HeadroomOpt,
    HtOpt,
    MaxServersOpt,
    P95Opt,
    PlatformOpt,
    RedundancyOpt,
    RpsOpt,
    TpsOpt,
    YearsOpt,
    inputs_of,
    sizing_request,
)

if TYPE_CHECKING:
    from sizing.app.sizing import Recommended

# -- recommend -------------------------------------------------------------------------


def recommend_cmd(
    rps: RpsOpt = None,
    tps: TpsOpt = None,
    headroom: HeadroomOpt = "20",
    p95: P95Opt = None,
    platform: PlatformOpt = "any",
    ht: HtOpt = "any",
    redundancy: RedundancyOpt = "none",
    years: YearsOpt = None,
    growth: GrowthOpt = "0",
    source: SourceOpt = "both",
    basis: BasisOpt = None,
    catalog: CatalogOpt = None,
    article_prices: ArticlePricesOpt = False,
    allow_extrapolation: ExtrapolationOpt = False,
    max_servers: MaxServersOpt = None,
    confidence: ConfidenceOpt = None,
    cpu: CpuOpt = None,
    allow_translation: AllowTranslationOpt = False,
    compare_platforms: ComparePlatformsOpt = None,
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

    got = app_sizing.recommend(
        sizing_request(
            rps=rps,
            tps=tps,
            headroom=headroom,
            p95=p95,
            platform=platform,
            ht=ht,
            redundancy=redundancy,
            years=years,
            growth=growth,
            max_servers=max_servers,
            confidence=confidence,
            cpu=cpu,
            allow_translation=allow_translation,
            compare_platforms=compare_platforms,
            inputs=inputs_of(
                source,
                basis,
                catalog,
                db,
                article_prices,
                include_virtualized,
                include_emulated,
                allow_extrapolation,
            ),
        )
    )
    _show_recommendation(got, json_out)
    result = got.result
    code = exit_status(Answered(result.recommendation is not None))
    if code:
        raise typer.Exit(int(code))


def _show_recommendation(got: Recommended, json_out: bool) -> None:
    """What ``recommend`` prints: the warnings and notes, then the answer (``--json``: the
    one document); an answer that found no fleet ends with its last explanation line."""
    from sizing.report.render.terms_text import assumptions_json
    from sizing.report.render.text import (
        basis_json,
        basis_line,
        recommendation_text,
        versus_text,
    )

    _say(got.warnings, got.notes)
    result = got.result
    versus = None if got.versus is None else got.versus.to_dict()
    if json_out:
        emit_json(
            {
                "basis": basis_json(got.inputs.choice, got.inputs.prices),
                **result.to_dict(),
                "explanation": list(got.explanation),
                "hint": got.hint,
                "platforms": versus,
                "assumptions": assumptions_json(result),
            }
        )
    else:
        if result.recommendation is None and not got.p95:  # else the explanation names it
            typer.echo(basis_line(got.inputs.choice, columns()))
        typer.echo(recommendation_text(result, columns()))
        if got.versus is not None:
            typer.echo("\n" + versus_text(got.versus, columns()))
    if result.recommendation is None:
        error(got.explanation[-1] + hint_sentence(got.hint))


def hint_sentence(hint: str) -> str:
    """The hint that follows a refusal, as a sentence of its own (empty without one)."""
    return f" {hint[0].upper()}{hint[1:]}." if hint else ""


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

    inputs = inputs_of(
        source,
        basis,
        catalog,
        db,
        article_prices,
        include_virtualized,
        include_emulated,
        allow_extrapolation,
    )
    table, got, warnings = app_sizing.table(inputs)
    _say(warnings)
    if json_out:
        emit_json({"basis": basis_json(got.choice, got.prices), **table.to_dict()})
    else:
        typer.echo(basis_line(got.choice, columns()))
        typer.echo(sizing_table_text(table, wide=wide, width=columns()))
