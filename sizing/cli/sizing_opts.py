"""The Typer declarations of the sizing request's options (``recommend`` and ``guide``
take them all, ``table`` those of where the figures come from) and the function that turns
their values into that request (:func:`sizing_request`, giving a
:class:`sizing.sizing_request.SizingRequest`). Which command takes which, and the one
parsed object they arrive in: :mod:`sizing.cli.option_set`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing import paths
from sizing.cli.options import (
    PLATFORM_METAVAR,
    SIZING_HT,
    HeadroomOpt,
    RedundancyChoice,
    RpsOpt,
    TpsOpt,
    basis_ids,
    choice,
    completer,
    demand_figures,
    metavar,
    percent,
    platform_choice,
)
from sizing.errors import UsageError
from sizing.model import HtChoice, Source

if TYPE_CHECKING:
    from sizing.app.demand import TrafficDemand as Traffic
    from sizing.app.sizing import Inputs, Role, SizingRequest, WorkloadAsk

__all__ = [
    "AllowCpuTranslationOpt",
    "AllowOtherWorkloadOpt",
    "AllowTranslationOpt",
    "AssumeOpt",
    "AssumeSourceOpt",
    "ComparePlatformsOpt",
    "ConfidenceOpt",
    "GrowthOpt",
    "GuideRunOpt",
    "YearsOpt",
    "CpuOpt",
    "DemandFileOpt",
    "HeadroomOpt",
    "HtOpt",
    "MaxServersOpt",
    "P95Opt",
    "PeakOpt",
    "PlatformOpt",
    "RedundancyOpt",
    "RoleOpt",
    "RpsOpt",
    "TpsOpt",
    "inputs_of",
    "load_traffic",
    "role_of",
    "sizing_request",
    "workload_of",
]


GuideRunOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--run",
        metavar="ID|latest",
        help="Run(s) to cover, repeatable; 'latest' for the newest. Default: every run.",
    ),
]
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
        help="n+1: the demand must still be carried with one server down; 2n: every"
        " server has an identical twin (HA pairs) and either half carries it alone.",
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
YearsOpt = Annotated[
    int | None,
    typer.Option(
        "--years",
        metavar="N",
        help="Price over N years (default: the catalog's amortisation_months) and show the"
        " cost year by year: hardware when bought, licences, support and power each year.",
    ),
]
GrowthOpt = Annotated[
    str,
    typer.Option(
        "--growth",
        metavar="PCT",
        help="The demand grows by this a year (30 or 30%): the fleet is bought for year 1"
        " and servers are added in the year the demand needs them (needs --years or a"
        " catalog period of whole years).",
    ),
]
AssumeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--assume",
        metavar="guest-share=PLATFORM:SHARE",
        help="Price a platform nobody measured from a stated assumption: e.g."
        " guest-share=kvm:0.92 sizes KVM on bare metal's figures of the same basis × 0.92,"
        " per core count, labelled as an assumption with --assume-source on every output."
        " A measured guest of that platform always wins.",
    ),
]
AssumeSourceOpt = Annotated[
    str | None,
    typer.Option(
        "--assume-source",
        metavar="TEXT",
        help="Where the --assume figure comes from (required with it), e.g. 'vendor"
        " benchmark 2025': printed with every figure made from it.",
    ),
]
AllowCpuTranslationOpt = Annotated[
    bool,
    typer.Option(
        "--allow-cpu-translation",
        help="With --cpu and --allow-translation, carry RPS figures to MODEL too, by the"
        " stated rule RPS × min(1, the per-core crypto ceiling ratio): never credited above"
        " the measured CPU, labelled 'translated'.",
    ),
]
ComparePlatformsOpt = Annotated[
    bool | None,
    typer.Option(
        "--compare-platforms/--no-compare-platforms",
        help="Size the demand on bare metal and on the hypervisor's guests side by side, "
        "with the overhead that explains the difference (default: when both were measured "
        "or published and --platform does not narrow the answer).",
    ),
]
DemandFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--demand",
        metavar="demand.yml",
        help="Size for the demand file of `sizing demand`: its peak RPS and full TLS"
        " handshakes/s together (--peak chooses which peak; --headroom on top). Not with"
        " --rps/--tps.",
    ),
]
PeakOpt = Annotated[
    str,
    typer.Option(
        "--peak",
        metavar="max|p99.9|p99",
        help="With --demand: the busiest second (max), or the 99.9th/99th percentile of the"
        " per-second rates.",
    ),
]


RoleOpt = Annotated[
    str | None,
    typer.Option(
        "--role",
        metavar="static|lb|proxy|api-jwt",
        autocompletion=completer(("static", "lb", "load-balance", "proxy", "api-jwt")),
        help="The workload's role (what NGINX does with each request): size on figures"
        " of that role only (e.g. api-jwt: an API gateway validating a JWT per request;"
        " also web, load-balance, jwt ...). Default: the demand file's role, else the"
        " load-balancing and static-file figures, named in the answer. A role nobody"
        " measured is refused with the run that measures it.",
    ),
]
AllowOtherWorkloadOpt = Annotated[
    bool,
    typer.Option(
        "--allow-other-workload",
        help="When no figures of the workload's role exist, size on the closest role's,"
        " flagged on every output with the direction of the error (e.g. a JWT gateway on"
        " load-balancing figures: the fleet is too small).",
    ),
]


PEAK_CHOICES = ("max", "p99.9", "p99")  # sizing.demand's PEAKS, named without importing it


def load_traffic(path: Path | None, peak: str) -> Traffic | None:
    """The demand file ``--demand`` names (None without one); ``--peak`` checked."""
    if peak not in PEAK_CHOICES:
        raise UsageError(f"--peak: {peak!r} is not one of {', '.join(PEAK_CHOICES)}")
    if path is None:
        return None
    from sizing.app.demand import load_demand  # deferred: yaml and the log readers

    return load_demand(path)


def role_of(text: str | None, traffic: Traffic | None = None) -> tuple[Role | None, str]:
    """The workload's role and who stated it: ``--role``, else the demand file's workload
    role (read with ``getattr``: a demand file without a workload has none); both, and
    different, is one usage line."""
    from sizing.app.sizing import parse_role  # deferred: the engine's imports

    asked = None
    if text is not None:
        try:
            asked = parse_role(text)
        except ValueError as exc:
            raise UsageError(f"--role: {exc}") from None
    mix = getattr(traffic, "workload", None)
    stated = getattr(mix, "role", None)
    in_file = None
    if stated is not None:
        try:
            in_file = parse_role(str(stated))
        except ValueError:
            in_file = None  # the demand file's reader says what is wrong with it
    if asked is not None and in_file is not None and asked is not in_file:
        raise UsageError(
            f"--role {text} is not the demand file's workload ({in_file.value}): drop --role"
            " to size the file's workload, or size another workload without --demand"
        )
    if asked is not None:
        return asked, "--role"
    if in_file is not None:
        return in_file, "the demand file"
    return None, ""


def workload_of(role: str | None, allow_other: bool) -> WorkloadAsk:
    """The workload ``table`` is asked for (``--role``, ``--allow-other-workload``)."""
    from sizing.app.sizing import WorkloadAsk  # deferred: the engine's imports

    asked, stated = role_of(role)
    return WorkloadAsk(asked, stated, allow_other)


def inputs_of(
    source: str,
    basis: str | None,
    catalog: Path | None,
    db: str | None,
    article_prices: bool,
    include_virtualized: bool,
    include_emulated: bool,
    allow_extrapolation: bool,
    runs: tuple[str, ...] = (),
) -> Inputs:
    """Where the figures come from, as the options say."""
    from sizing.app.sizing import Inputs  # deferred: the engine's import chain

    return Inputs(
        source=choice(Source, source, "--source"),
        basis=basis_ids(basis),
        catalog=catalog,
        db=None if db is None else paths.database(db),
        article_prices=article_prices,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
        allow_extrapolation=allow_extrapolation,
        runs=runs,
    )


def sizing_request(
    *,
    rps: str | None,
    tps: str | None,
    headroom: str,
    p95: str | None,
    platform: str,
    ht: str,
    redundancy: str,
    max_servers: int | None,
    confidence: float | None,
    cpu: str | None,
    allow_translation: bool,
    inputs: Inputs,
    compare_platforms: bool | None = None,
    years: int | None = None,
    growth: str = "0",
    assume: Sequence[str] | None = None,
    assume_source: str | None = None,
    allow_cpu_translation: bool = False,
    traffic: Traffic | None = None,
    peak: str = "max",
    role: str | None = None,
    allow_other_workload: bool = False,
    demand_file: str = "",
) -> SizingRequest:
    """The request the options ask (no demand without --rps or --tps: the guide's tables
    only); a bad value is one clear usage line."""
    from sizing.app.sizing import Demand, SizingRequest  # deferred: the engine's imports

    demand = None
    rps_n, tps_n, headroom_pct = demand_figures(rps, tps, headroom)
    asked_role, stated_by = role_of(role, traffic)
    if traffic is not None:
        if rps_n is not None or tps_n is not None:
            raise UsageError("--demand gives the demand: no --rps or --tps beside it")
        from sizing.app.demand import sized_figures  # deferred

        rps_n, tps_n = sized_figures(traffic, peak)
        if not rps_n:
            raise UsageError(
                f"--demand: the demand file's {peak} second holds 0 requests/s: nothing to"
                " size (a log of a quiet span, or counters that never moved)"
            )
    if rps_n is not None or tps_n is not None:
        rule = choice(RedundancyChoice, redundancy, "--redundancy").value
        demand = Demand(rps=rps_n, tps=tps_n, headroom=headroom_pct / 100.0, redundancy=rule)
        demand.validate()
    return SizingRequest(
        demand=demand,
        inputs=inputs,
        platform=platform_choice(platform),
        ht=choice(HtChoice, ht, "--ht", SIZING_HT),
        p95=p95,
        max_servers=max_servers,
        confidence=confidence,
        cpu=cpu,
        allow_translation=allow_translation,
        compare_platforms=compare_platforms,
        years=years,
        growth=percent(growth, "--growth") / 100.0,
        allow_cpu_translation=allow_cpu_translation,
        assume=tuple(assume or ()),
        assume_source=assume_source,
        role=asked_role,
        role_stated_by=stated_by,
        allow_other_workload=allow_other_workload,
        customer=_customer(traffic),
        demand_file=demand_file if traffic is not None else "",
    )


def _customer(traffic: Traffic | None) -> str:
    """The key of the demand file's workload (its replay in the lab sizes it), or ""."""
    mix = getattr(traffic, "workload", None)
    return "" if mix is None else str(mix.key())
