"""The one option set of ``recommend``, ``table`` and ``guide``, declared once.

:class:`SizingArgs` is every option of the set with its default, and :data:`OPTIONS` its
Typer declaration (the flag, the help ``--help`` shows). A command declares only its own
options and a parameter ``args: SizingArgs``; :func:`takes` gives it the options of the
groups it uses (:data:`FIGURES`: where the figures come from; :data:`WORKLOAD`: the
workload's role, whose figures size; :data:`REQUEST`: the sizing question; :data:`RUNS`:
which runs the guide covers), shown by ``--help`` where
``args`` stands, and hands it their values as one parsed object (httpie's one
parsed-arguments namespace). An option a command does not take keeps its default.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing.cli.options import (
    ArticlePricesOpt,
    BasisOpt,
    CatalogOpt,
    DbOpt,
    EmulatedOpt,
    ExtrapolationOpt,
    HeadroomOpt,
    RpsOpt,
    SourceOpt,
    TpsOpt,
    VirtualizedOpt,
)
from sizing.cli.sizing_opts import (
    AllowCpuTranslationOpt,
    AllowOtherWorkloadOpt,
    AllowTranslationOpt,
    AssumeOpt,
    AssumeSourceOpt,
    ComparePlatformsOpt,
    ConfidenceOpt,
    CpuOpt,
    DemandFileOpt,
    GrowthOpt,
    GuideRunOpt,
    HtOpt,
    MaxServersOpt,
    P95Opt,
    PeakOpt,
    PlatformOpt,
    RedundancyOpt,
    RoleOpt,
    YearsOpt,
    inputs_of,
    sizing_request,
    workload_of,
)

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


@dataclass(frozen=True)
class SizingArgs:
    """The parsed options of ``recommend``, ``table`` and ``guide`` (see the module)."""

    run: list[str] | None = None
    rps: str | None = None
    tps: str | None = None
    headroom: str = "20"
    p95: str | None = None
    platform: str = "any"
    ht: str = "any"
    redundancy: str = "none"
    years: int | None = None
    growth: str = "0"
    source: str = "both"
    basis: str | None = None
    catalog: Path | None = None
    article_prices: bool = False
    allow_extrapolation: bool = False
    max_servers: int | None = None
    confidence: float | None = None
    cpu: str | None = None
    allow_translation: bool = False
    allow_cpu_translation: bool = False
    compare_platforms: bool | None = None
    assume: list[str] | None = None
    assume_source: str | None = None
    db: str | None = None
    include_virtualized: bool = False
    include_emulated: bool = False
    demand: Path | None = None
    peak: str = "max"
    role: str | None = None
    allow_other_workload: bool = False


# Each option's Typer declaration, by its field in SizingArgs (and in that order in --help).
OPTIONS: dict[str, Any] = {
    "run": GuideRunOpt,
    "rps": RpsOpt,
    "tps": TpsOpt,
    "headroom": HeadroomOpt,
    "p95": P95Opt,
    "platform": PlatformOpt,
    "ht": HtOpt,
    "redundancy": RedundancyOpt,
    "years": YearsOpt,
    "growth": GrowthOpt,
    "source": SourceOpt,
    "basis": BasisOpt,
    "catalog": CatalogOpt,
    "article_prices": ArticlePricesOpt,
    "allow_extrapolation": ExtrapolationOpt,
    "max_servers": MaxServersOpt,
    "confidence": ConfidenceOpt,
    "cpu": CpuOpt,
    "allow_translation": AllowTranslationOpt,
    "allow_cpu_translation": AllowCpuTranslationOpt,
    "compare_platforms": ComparePlatformsOpt,
    "assume": AssumeOpt,
    "assume_source": AssumeSourceOpt,
    "db": DbOpt,
    "include_virtualized": VirtualizedOpt,
    "include_emulated": EmulatedOpt,
    "demand": DemandFileOpt,
    "peak": PeakOpt,
    "role": RoleOpt,
    "allow_other_workload": AllowOtherWorkloadOpt,
}

FIGURES = (
    "source",
    "basis",
    "catalog",
    "article_prices",
    "allow_extrapolation",
    "db",
    "include_virtualized",
    "include_emulated",
)
RUNS = ("run",)
WORKLOAD = ("role", "allow_other_workload")  # whose figures: every sizing command takes it
REQUEST = tuple(
    n for n in OPTIONS if n not in FIGURES and n not in RUNS and n not in WORKLOAD
)  # the question: the demand, the answer's shape, translation, assumptions


def takes(*groups: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the options of ``groups`` (see the module)."""
    names = {n for g in groups for n in g}
    ordered = [n for n in OPTIONS if n in names]  # the set's order, whatever the groups'
    defaults = {f.name: f.default for f in fields(SizingArgs)}

    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        sig = inspect.signature(fn, eval_str=True)
        shared = [
            inspect.Parameter(
                n, inspect.Parameter.KEYWORD_ONLY, default=defaults[n], annotation=OPTIONS[n]
            )
            for n in ordered
        ]
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            if p.name == "args":
                params += shared
            else:
                params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(fn)
        def command(**values: Any) -> None:
            args = SizingArgs(**{n: values.pop(n) for n in ordered})
            fn(**values, args=args)

        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


def request_from(args: SizingArgs, traffic: Traffic | None = None) -> SizingRequest:
    """The sizing request of ``recommend``'s or ``guide``'s parsed options (the one
    :class:`SizingArgs`): the one place that reads them, so the
    commands that take the same options cannot read them differently. An option a command
    does not take has its default."""
    a = args
    return sizing_request(
        rps=a.rps,
        tps=a.tps,
        headroom=a.headroom,
        p95=a.p95,
        platform=a.platform,
        ht=a.ht,
        redundancy=a.redundancy,
        years=a.years,
        growth=a.growth,
        max_servers=a.max_servers,
        confidence=a.confidence,
        cpu=a.cpu,
        allow_translation=a.allow_translation,
        compare_platforms=a.compare_platforms,
        assume=a.assume,
        assume_source=a.assume_source,
        allow_cpu_translation=a.allow_cpu_translation,
        traffic=traffic,
        peak=a.peak,
        inputs=figures_of(args),
        role=a.role,
        allow_other_workload=a.allow_other_workload,
        demand_file="" if a.demand is None else str(a.demand),
    )


def workload_from(a: SizingArgs) -> WorkloadAsk:
    """The workload ``table`` is asked for, as the parsed options say."""
    return workload_of(a.role, a.allow_other_workload)


def figures_of(a: SizingArgs) -> Inputs:
    """Where the figures come from, as the parsed options say."""
    return inputs_of(
        a.source,
        a.basis,
        a.catalog,
        a.db,
        a.article_prices,
        a.include_virtualized,
        a.include_emulated,
        a.allow_extrapolation,
        tuple(a.run or ()),
    )
