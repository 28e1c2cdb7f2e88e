"""The one option set of ``recommend``, ``table`` and ``guide``, declared once.

:class:`SizingArgs` is every option of the set, each declared once on its field: its
default, its flag and the help ``--help`` shows, and the group it belongs to
(:mod:`sizing.cli.declared`). Everything else is derived from the fields: :data:`OPTIONS`
(each option's Typer declaration), the groups (:data:`FIGURES`: where the figures come
from; :data:`WORKLOAD`: the workload's role, whose figures size; :data:`REQUEST`: the sizing
question, every field of no other group; :data:`RUNS`: which runs the guide covers) and the
request the values ask (:func:`request_from`: by the request's field of the same name). A
command declares only its own options and a parameter ``args: SizingArgs``; :func:`takes`
gives it the options of the groups it uses, shown by ``--help`` where ``args`` stands, and
hands it their values as one parsed object (httpie's one parsed-arguments namespace). An
option a command does not take keeps its default. Adding an option: its field here (and,
when the request has no field of its name, its reading in :func:`sizing_request`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing.cli.declared import group_of, option, parameters, shared
from sizing.cli.declared import takes as takes_of
from sizing.cli.options import (
    PLATFORM_METAVAR,
    RATE_METAVAR,
    SIZING_HT,
    DbOpt,
    EmulatedOpt,
    RedundancyChoice,
    VirtualizedOpt,
    completer,
    metavar,
)
from sizing.cli.sizing_opts import inputs_of, sizing_request, workload_of
from sizing.model import Source

if TYPE_CHECKING:
    from sizing.app.demand import TrafficDemand as Traffic
    from sizing.app.sizing import Inputs, SizingRequest, WorkloadAsk

__all__ = [
    "FIGURES",
    "OPTIONS",
    "REQUEST",
    "RUNS",
    "WORKLOAD",
    "SizingArgs",
    "figures_of",
    "request_from",
    "takes",
    "workload_from",
]

_FIGURES, _RUNS, _WORKLOAD = "figures", "runs", "workload"  # the groups; "": the request


@dataclass(frozen=True)
class SizingArgs:
    """The parsed options of ``recommend``, ``table`` and ``guide`` (see the module), in
    the order ``--help`` lists them."""

    run: list[str] | None = option(
        None,
        "--run",
        metavar="ID|latest",
        help="Run(s) to cover, repeatable; 'latest' for the newest. Default: every run.",
        group=_RUNS,
    )
    rps: str | None = option(
        None,
        "--rps",
        metavar=RATE_METAVAR,
        help="Target requests per second: 200000, 200,000, 200k or 1.5M.",
    )
    tps: str | None = option(
        None,
        "--tps",
        metavar=RATE_METAVAR,
        help="Target TLS handshakes (new connections) per second: 2000, 2,000 or 2k.",
    )
    headroom: str = option(
        "20", "--headroom", metavar="PCT", help="Share of capacity kept free, 0-90: 20 or 20%."
    )
    p95: str | None = option(
        None,
        "--p95",
        metavar="LATENCY",
        help="Size --rps by the measured RPS at which p95 latency stays within this"
        " (e.g. 10ms), from latency-profile runs (sizing run --profile latency) of ONE"
        " latency workload: --basis names it (profile/role/scheme/sizeB, e.g."
        " latency/proxy/https/1024B, or a unique prefix); needed when several were"
        " measured.",
    )
    platform: str = option(
        "any",
        "--platform",
        metavar=PLATFORM_METAVAR,
        autocompletion=completer(PLATFORM_METAVAR.split("|")),
        help="Platform to size (esxi: the article's hypervisor).",
    )
    ht: str = option(
        "any",
        "--ht",
        metavar=metavar(SIZING_HT),
        autocompletion=completer(SIZING_HT),
        help="Hyper-threading mode.",
    )
    redundancy: str = option(
        "none",
        "--redundancy",
        metavar=metavar(RedundancyChoice),
        autocompletion=completer(RedundancyChoice),
        help="n+1: the demand must still be carried with one server down; 2n: every"
        " server has an identical twin (HA pairs) and either half carries it alone.",
    )
    years: int | None = option(
        None,
        "--years",
        metavar="N",
        help="Price over N years (default: the catalog's amortisation_months) and show the"
        " cost year by year: hardware when bought, licences, support and power each year.",
    )
    growth: str = option(
        "0",
        "--growth",
        metavar="PCT",
        help="The demand grows by this a year (30 or 30%): the fleet is bought for year 1"
        " and servers are added in the year the demand needs them (needs --years or a"
        " catalog period of whole years).",
    )
    source: str = option(
        "both",
        "--source",
        metavar=metavar(Source),
        autocompletion=completer(Source),
        help="Bases to choose from: measured only, the bundled reference data only, or both "
        "(the default: a qualifying measured basis, else the reference). --basis names one.",
        group=_FIGURES,
    )
    basis: str | None = option(
        None,
        "--basis",
        metavar="ID[,ID]",
        help="Size from these bases (ids from `sizing results --bases`, or a unique prefix); "
        "default: the measured basis with the most core counts that qualifies, else the "
        "reference.",
        group=_FIGURES,
    )
    catalog: Path | None = option(
        None,
        "--catalog",
        help="Hardware cost catalog YAML (default: the bundled profiles/catalog.yml, the "
        "article's prices). Giving one prices measured bases with it (as --article-prices).",
        dir_okay=False,
        group=_FIGURES,
    )
    article_prices: bool = option(
        False,
        "--article-prices",
        help="Price measured bases with the catalog (by default the article's 2021 list) "
        "when the inventory declares no sizing_price_usd and no catalog entry matches "
        "their CPU.",
        group=_FIGURES,
    )
    allow_extrapolation: bool = option(
        False,
        "--allow-extrapolation",
        help="Let the fitted scaling model size core counts beyond those measured, ranked "
        "with measured ones (labelled extrapolated).",
        group=_FIGURES,
    )
    max_servers: int | None = option(
        None,
        "--max-servers",
        help="Most servers to scale out to (no limit unless given; said when it binds).",
    )
    confidence: float | None = option(
        None,
        "--confidence",
        metavar="P",
        help="Size so the fleet carries the demand in this share of the plausible"
        " outcomes (e.g. 0.95): each server on the 1-P quantile of its capacity's"
        " bootstrap draws over the measured repetitions. Default: the low end of each"
        " figure's interval, with the confidence reported.",
    )
    cpu: str | None = option(
        None,
        "--cpu",
        metavar="MODEL",
        help="Size --tps on another CPU: the chosen basis' handshake figures translated by"
        " the ratio of the two CPUs' crypto ceilings (the basis' measured one, MODEL's"
        " stated in the catalog's `ceilings:`, e.g. from `sizing probe-ceiling`). An"
        " estimate with a wider interval: needs --allow-translation. RPS is never"
        " translated.",
    )
    allow_translation: bool = option(
        False,
        "--allow-translation",
        help="Allow --cpu's translated figures (labelled 'translated', never mixed with"
        " measured ones).",
    )
    allow_cpu_translation: bool = option(
        False,
        "--allow-cpu-translation",
        help="With --cpu and --allow-translation, carry RPS figures to MODEL too, by the"
        " stated rule RPS × min(1, the per-core crypto ceiling ratio): never credited above"
        " the measured CPU, labelled 'translated'.",
    )
    compare_platforms: bool | None = option(
        None,
        "--compare-platforms/--no-compare-platforms",
        help="Size the demand on bare metal and on the hypervisor's guests side by side, "
        "with the overhead that explains the difference (default: when both were measured "
        "or published and --platform does not narrow the answer).",
    )
    assume: list[str] | None = option(
        None,
        "--assume",
        metavar="guest-share=PLATFORM:SHARE",
        help="Price a platform nobody measured from a stated assumption: e.g."
        " guest-share=kvm:0.92 sizes KVM on bare metal's figures of the same basis × 0.92,"
        " per core count, labelled as an assumption with --assume-source on every output."
        " A measured guest of that platform always wins.",
    )
    assume_source: str | None = option(
        None,
        "--assume-source",
        metavar="TEXT",
        help="Where the --assume figure comes from (required with it), e.g. 'vendor"
        " benchmark 2025': printed with every figure made from it.",
    )
    db: str | None = shared(None, DbOpt, group=_FIGURES)
    include_virtualized: bool = shared(False, VirtualizedOpt, group=_FIGURES)
    include_emulated: bool = shared(False, EmulatedOpt, group=_FIGURES)
    demand: Path | None = option(
        None,
        "--demand",
        metavar="demand.yml",
        help="Size for the demand file of `sizing demand`: its peak RPS and full TLS"
        " handshakes/s together (--peak chooses which peak; --headroom on top). Not with"
        " --rps/--tps.",
    )
    peak: str = option(
        "max",
        "--peak",
        metavar="max|p99.9|p99",
        help="With --demand: the busiest second (max), or the 99.9th/99th percentile of the"
        " per-second rates.",
    )
    role: str | None = option(
        None,
        "--role",
        metavar="static|lb|proxy|api-jwt",
        autocompletion=completer(("static", "lb", "load-balance", "proxy", "api-jwt")),
        help="The workload's role (what NGINX does with each request): size on figures"
        " of that role only (e.g. api-jwt: an API gateway validating a JWT per request;"
        " also web, load-balance, jwt ...). Default: the demand file's role, else the"
        " load-balancing and static-file figures, named in the answer. A role nobody"
        " measured is refused with the run that measures it.",
        group=_WORKLOAD,
    )
    allow_other_workload: bool = option(
        False,
        "--allow-other-workload",
        help="When no figures of the workload's role exist, size on the closest role's,"
        " flagged on every output with the direction of the error (e.g. a JWT gateway on"
        " load-balancing figures: the fleet is too small).",
        group=_WORKLOAD,
    )


# Each option's Typer declaration (its Annotated type), by its field, in --help's order.
OPTIONS: dict[str, Any] = {p.name: p.annotation for p in parameters(SizingArgs)}
FIGURES = group_of(SizingArgs, _FIGURES)
RUNS = group_of(SizingArgs, _RUNS)
WORKLOAD = group_of(SizingArgs, _WORKLOAD)  # whose figures: every sizing command
REQUEST = group_of(SizingArgs, "")  # the demand, the answer's shape, assumptions


def takes(*groups: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the options of ``groups`` (see the module)."""
    return takes_of(SizingArgs, {n for g in groups for n in g})


def request_from(args: SizingArgs, traffic: Traffic | None = None) -> SizingRequest:
    """The sizing request of ``recommend``'s or ``guide``'s parsed options (the one
    :class:`SizingArgs`): the one place that reads them, so the commands that take the
    same options cannot read them differently. Every option of the question and the
    workload goes to :func:`sizing_request` by its name (the demand file, read already
    into ``traffic``, by its path). An option a command does not take has its default."""
    asked = {n: getattr(args, n) for n in REQUEST + WORKLOAD if n != "demand"}
    demand_file = "" if args.demand is None else str(args.demand)
    return sizing_request(
        **asked, traffic=traffic, inputs=figures_of(args), demand_file=demand_file
    )


def workload_from(a: SizingArgs) -> WorkloadAsk:
    """The workload ``table`` is asked for, as the parsed options say."""
    return workload_of(a.role, a.allow_other_workload)


def figures_of(a: SizingArgs) -> Inputs:
    """Where the figures come from, as the parsed options say (each by its name)."""
    return inputs_of(**{n: getattr(a, n) for n in FIGURES}, runs=tuple(a.run or ()))
