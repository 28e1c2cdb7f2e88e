"""Commands of the sizing engine: ``recommend`` and ``table``.

Each command reads its inputs with :func:`sizing.sources.load_bases` (the cost catalog,
the bundled reference dataset and, unless told to use reference data only, the bases of
the results store, chosen by ``--source`` and ``--basis``), calls the pure engine and renders
with :mod:`sizing.report.render.text`. Results go to stdout; which figures were used goes
to stderr. Heavy imports (pydantic, YAML, SQLite) happen inside the commands so that
``sizing --help`` starts fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.cli.app import emit_json, warn
from sizing.cli.options import (
    PLATFORM_METAVAR,
    SIZING_HT,
    ArticlePricesOpt,
    BasisOpt,
    CatalogOpt,
    DbOpt,
    EmulatedOpt,
    ExtrapolationOpt,
    JsonOpt,
    RedundancyChoice,
    SourceOpt,
    VirtualizedOpt,
    basis_ids,
    choice,
    metavar,
    platform_choice,
)
from sizing.errors import SizingError, UsageError
from sizing.model import FigureKind, HtChoice, Source

if TYPE_CHECKING:
    from sizing.engine import SizingTable
    from sizing.engine.basis import Want
    from sizing.model import Figure
    from sizing.sources import BasisInputs


def load_inputs(
    source: Source,
    catalog_path: Path | None,
    db: Path | None,
    *,
    basis: str | None,
    include_emulated: bool,
    include_virtualized: bool,
    article_prices: bool,
    serves: Want | None = None,
    every_reference: bool = False,
) -> BasisInputs:
    """Every basis, the chosen ones and the prices (:func:`sizing.sources.load_bases`);
    any warning goes to stderr (the bases passed over are part of each command's answer)."""
    from sizing.sources import Sources, load_bases

    inputs = load_bases(
        Sources(db=db, catalog=catalog_path),
        requested=basis_ids(basis),
        source=source.value,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
        article_prices=article_prices,
        serves=serves,
        every_reference=every_reference,
    )
    chosen = inputs.choice.bases
    if any("emulated" in b.flags for b in chosen):
        warn("using figures from software-emulated guests: they do not represent real hardware")
    if any(b.platform == "virtualized-host" for b in chosen):
        warn(
            "using a virtualized host (a container or VM measured as bare metal): its figures "
            "are not bare-metal figures"
        )
    return inputs


# -- recommend -------------------------------------------------------------------------


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
            " (e.g. 10ms), from latency-profile runs (sizing run --profile latency) of ONE"
            " latency workload: --basis names it (profile/role/scheme/sizeB, e.g."
            " latency/proxy/https/1024B, or a unique prefix); needed when several were"
            " measured.",
        ),
    ] = None,
    platform: Annotated[
        str, typer.Option("--platform", metavar=PLATFORM_METAVAR, help="Platform to size.")
    ] = "any",
    ht: Annotated[
        str, typer.Option("--ht", metavar=metavar(SIZING_HT), help="Hyper-threading mode.")
    ] = "any",
    redundancy: Annotated[
        str,
        typer.Option(
            "--redundancy",
            metavar=metavar(RedundancyChoice),
            help="n+1: the demand must still be carried with one server down.",
        ),
    ] = "none",
    source: SourceOpt = "both",
    basis: BasisOpt = None,
    catalog: CatalogOpt = None,
    article_prices: ArticlePricesOpt = False,
    allow_extrapolation: ExtrapolationOpt = False,
    max_servers: Annotated[
        int | None,
        typer.Option(
            "--max-servers",
            help="Most servers to scale out to (no limit unless given; said when it binds).",
        ),
    ] = None,
    confidence: Annotated[
        float | None,
        typer.Option(
            "--confidence",
            metavar="P",
            help="Size so the fleet carries the demand in this share of the plausible"
            " outcomes (e.g. 0.95): each server on the 1-P quantile of its capacity's"
            " bootstrap draws over the measured repetitions. Default: the low end of each"
            " figure's interval, with the confidence reported.",
        ),
    ] = None,
    cpu: Annotated[
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
    ] = None,
    allow_translation: Annotated[
        bool,
        typer.Option(
            "--allow-translation",
            help="Allow --cpu's translated figures (labelled 'translated', never mixed with"
            " measured ones).",
        ),
    ] = False,
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
    from sizing.engine import Demand, recommend
    from sizing.engine.basis import Want
    from sizing.engine.recommend import wanted_platforms
    from sizing.report.render.text import (
        basis_json,
        basis_line,
        passed_over_line,
        recommendation_text,
    )
    from sizing.sources.fitcache import cached_bootstrapper

    platform_c = platform_choice(platform)
    ht_c = choice(HtChoice, ht, "--ht", SIZING_HT)
    redundancy_c = choice(RedundancyChoice, redundancy, "--redundancy")
    source_c = choice(Source, source, "--source")
    demand = Demand(rps=rps, tps=tps, headroom=headroom / 100.0, redundancy=redundancy_c.value)
    demand.validate()  # before any file is read: a bad demand is a usage error
    if max_servers is not None and max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {max_servers}")
    if confidence is not None and not (0.5 <= confidence < 1.0):
        raise UsageError(f"--confidence must be at least 0.5 and below 1, not {confidence:g}")
    if p95 is not None:
        if tps is not None:
            raise UsageError(
                "--p95 sizes --rps from a measured latency workload, which has no TPS figures, "
                "and a recommendation never mixes bases: size --tps in a second command"
            )
        if source_c is Source.REFERENCE:
            raise UsageError(
                "--p95 sizes from measured latency points; the reference data has none "
                "(drop --source reference)"
            )
        if rps is None:
            raise UsageError("--p95 sizes a request rate: give --rps too")
    wanted = wanted_platforms(None if platform_c is None else [platform_c])
    inputs = load_inputs(
        source_c,
        catalog,
        db,
        basis=None if p95 is not None else basis,  # with --p95: the latency workload
        include_emulated=include_emulated,
        include_virtualized=include_virtualized,
        article_prices=article_prices,
        serves=Want(
            platforms=None if wanted is None else frozenset(wanted),
            ht=None if ht_c is HtChoice.ANY else ht_c,
            profiles=tuple(p for p in demand.profiles if not (p95 is not None and p == "rps")),
        ),
    )
    figures: tuple[Figure, ...] = inputs.choice.figures
    why = inputs.choice.why
    if passed_over_line(inputs.choice):  # part of the answer, not a note on stderr
        why += "; " + passed_over_line(inputs.choice)
    if cpu is not None:
        if rps is not None or p95 is not None:
            raise UsageError(
                "--cpu translates TLS handshake (--tps) figures only: plain RPS is not bound "
                "by one instruction mix and is never translated; size --rps on a basis "
                "measured on that CPU"
            )
        inputs, why = _translated(inputs, cpu, catalog, allow_translation)
        figures = inputs.choice.figures
    capacity_of = "their CPU"
    if p95 is not None:  # size on "RPS at p95 <= X" of one latency workload only
        figures, why, capacity_of = _latency_figures(p95, db, include_emulated, basis)
    result = recommend(
        figures,
        inputs.catalog,
        demand,
        platforms=None if platform_c is None else [platform_c],
        ht_modes=None if ht_c is HtChoice.ANY else [ht_c],
        max_servers=max_servers,
        bases=inputs.bases,
        prices=inputs.prices,
        article_prices=inputs.article_prices,
        allow_extrapolation=allow_extrapolation,
        why=why,
        confidence=confidence,
        capacity_of=capacity_of,
        bootstrapper=cached_bootstrapper(db),
    )
    if json_out:
        emit_json({"basis": basis_json(inputs.choice, inputs.prices), **result.to_dict()})
    else:
        if result.recommendation is None and p95 is None:  # else the explanation names it
            typer.echo(basis_line(inputs.choice))
        typer.echo(recommendation_text(result))
    if result.recommendation is None:
        raise SizingError(result.explanation[-1])


def _translated(
    inputs: BasisInputs, cpu: str, catalog: Path | None, allow: bool
) -> tuple[BasisInputs, str]:
    """``--cpu``: the chosen basis translated to ``cpu`` by the ratio of the crypto
    ceilings (:mod:`sizing.engine.translate`), priced by the catalog's entries for that CPU;
    refused in one line without ``--allow-translation``."""
    from dataclasses import replace

    from sizing.catalog import load_catalog_data
    from sizing.ceilings import ALGORITHMS, StatedCeiling
    from sizing.engine.basis import Choice
    from sizing.engine.translate import translate
    from sizing.sources import basis_prices

    data = load_catalog_data(catalog)
    stated = [StatedCeiling.from_dict(d) for d in data.get("ceilings") or ()]
    target = next((c for c in stated if c.matches(cpu)), None)
    where = str(catalog) if catalog else "the bundled catalog"
    if target is None:
        raise UsageError(
            f"--cpu {cpu}: {where} states no crypto ceiling for it: add a `ceilings:` entry "
            "(cpu_model, tls_key, sign_per_core, source; `sizing probe-ceiling` measures one "
            "on a host) and pass that catalog with --catalog"
        )
    measured = [b for b in inputs.choice.bases if b.origin == FigureKind.MEASURED]
    if not measured:
        raise UsageError(
            f"--cpu {cpu}: the figures chosen are reference data, which state no CPU and no "
            "ceiling; translate a measured basis (--source measured, or --basis ID)"
        )
    basis = measured[0]
    what = ALGORITHMS.get(target.tls_key, target.tls_key)
    if not allow:
        raise UsageError(
            f"--cpu {target.cpu_model}: the figures would be translated from {basis.id} "
            f"({basis.hardware.cpu_model or 'CPU not named'}) by the ratio of the two "
            f"{what} ceilings, an estimate rather than a measurement: add "
            "--allow-translation to use it"
        )
    got = translate(basis, target)
    if isinstance(got, str):
        raise UsageError(f"--cpu {target.cpu_model}: {got}")
    prices = basis_prices([got], {}, data)
    got = replace(got, price=prices.get(got.id))
    why = (
        f"{got.id}, translated from measured basis {basis.id} to {target.cpu_model} by the "
        f"{what} ceiling ratio (an estimate: {target.source})"
    )
    choice = Choice(
        bases=(got,),
        why=why,
        passed_over=tuple((b.id, "translated to --cpu") for b in inputs.choice.bases),
    )
    return (
        replace(
            inputs,
            bases=(*inputs.bases, got),
            choice=choice,
            prices={**inputs.prices, **({got.id: got.price} if got.price else {})},
        ),
        why,
    )


def _latency_figures(
    p95: str, db: Path | None, include_emulated: bool, workload: str | None = None
) -> tuple[tuple[Figure, ...], str, str]:
    """``--p95``: the measured RPS-at-p95 figures of one latency workload (and nothing
    else: a recommendation never mixes bases), the basis sentence, and what a server's
    capacity means there."""
    from sizing.knee import Slo, parse_limit_ms
    from sizing.report.render.text import slo_line
    from sizing.sources import latency_figures

    slo = Slo("p95", parse_limit_ms(p95, "--p95"))
    _, found, chosen = latency_figures((), slo, db, include_emulated, workload)
    typer.echo(slo_line(slo, found, chosen), err=True)
    why = (
        f"latency workload {chosen}: the measured request rate at which p95 latency stays "
        f"within {slo.limit_ms:g} ms, per core count"
    )
    return tuple(found), why, f"the rate at which p95 stays within {slo.limit_ms:g} ms"


# -- table -----------------------------------------------------------------------------


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
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="One wide table per block (default: split to fit 100 columns, the core "
            "count and price repeated in each part).",
        ),
    ] = False,
) -> None:
    """The cost-per-throughput table, in the shape of the NGINX sizing guide's table.

    One block per basis group (a host, its hardware, workload and software; the reference
    testbed is its own): per core count, the server price, RPS and SSL TPS per platform,
    cost per 1,000 RPS and the virtualization overhead within the block. Every figure is
    marked r (reference), m (measured), i (interpolated), x (extrapolated) or e (emulated);
    lower bounds read "≥", flags stand beside the figure, and each series' intervals are
    listed under its block. Fits 100 columns (a wide block is split, the core count and
    price repeated); --wide gives one table per block.
    """
    from sizing.report.render.text import basis_json, basis_line, sizing_table_text

    source_c = choice(Source, source, "--source")
    inputs = load_inputs(
        source_c,
        catalog,
        db,
        basis=basis,
        include_emulated=include_emulated,
        include_virtualized=include_virtualized,
        article_prices=article_prices,
        every_reference=True,  # the article has a traditional and a Kubernetes table
    )
    table = _table(inputs, allow_extrapolation)
    if json_out:
        emit_json({"basis": basis_json(inputs.choice, inputs.prices), **table.to_dict()})
    else:
        typer.echo(basis_line(inputs.choice))
        typer.echo(sizing_table_text(table, wide=wide))


def _table(inputs: BasisInputs, allow_extrapolation: bool) -> SizingTable:
    """The engine's table of the chosen bases, priced as recommend prices them."""
    from sizing.engine import build_table

    return build_table(
        inputs.choice.figures,
        inputs.catalog,
        bases=inputs.bases,
        prices=inputs.prices,
        article_prices=inputs.article_prices,
        allow_extrapolation=allow_extrapolation,
    )
