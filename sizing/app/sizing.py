"""``sizing recommend`` and ``sizing table``: the buyer's question, from one basis.

:func:`recommend` and :func:`table` take a typed request and return the engine's answer
with the inputs it was sized on; what the user must be told besides the answer (a basis of
emulated figures, a latency workload chosen) comes back in ``notes``, never printed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sizing.app.assumed import assumed_platforms, measure_next, with_assumptions
from sizing.app.versus import compare_platforms
from sizing.app.what_exists import refuse_confidence, what_exists
from sizing.catalog import load_catalog_data
from sizing.ceilings import ALGORITHMS, StatedCeiling
from sizing.engine import Basis, CostCatalog, Demand, Price, SizingTable, build_table
from sizing.engine import recommend as engine_recommend
from sizing.engine.choice import Choice, Want
from sizing.engine.mixcheck import mix_check
from sizing.engine.predict import Bootstrapper
from sizing.engine.recommend import Recommendation, wanted_platforms
from sizing.engine.roles import WorkloadAsk
from sizing.engine.translate import translate
from sizing.engine.versus import PlatformComparison
from sizing.engine.workload_use import WorkloadUse, role_of_text
from sizing.errors import UsageError
from sizing.knee import Slo
from sizing.model import (
    VIRTUALIZED_HOST_WORDS,
    BasisPlatform,
    Figure,
    FigureKind,
    HtChoice,
    SizingMetric,
    Source,
)
from sizing.option_text import parse_limit_ms
from sizing.report.explain import explain, passed_over_line, slo_line
from sizing.sizing_request import Inputs, SizingRequest
from sizing.sources import BasisInputs, basis_prices, latency_figures, load_bases
from sizing.sources.fitcache import cached_bootstrapper
from sizing.workload import ROLE_WORDS, Role, parse_role

__all__ = [
    "Demand",
    "EngineRequest",
    "Inputs",
    "Recommended",
    "Role",
    "SizingRequest",
    "WorkloadAsk",
    "check",
    "load",
    "parse_role",
    "recommend",
    "table",
    "workload_ask",
]


@dataclass(frozen=True)
class EngineRequest:
    """How the engine is asked to size a request's figures (every answer of one request,
    the platforms compared included, is asked the same way)."""

    ht_modes: tuple[str, ...] | None
    max_servers: int | None
    bases: tuple[Basis, ...]
    prices: Mapping[str, Price] | None
    article_prices: bool
    allow_extrapolation: bool
    confidence: float | None
    bootstrapper: Bootstrapper | None
    years: int | None
    growth: float

    def recommend(
        self,
        figures: Sequence[Figure],
        catalog: CostCatalog,
        demand: Demand,
        platforms: Sequence[str] | None,
    ) -> Recommendation:
        """The engine's answer for ``platforms`` (None: every one the figures hold)."""
        return engine_recommend(
            figures,
            catalog,
            demand,
            platforms=platforms,
            ht_modes=self.ht_modes,
            max_servers=self.max_servers,
            bases=self.bases,
            prices=self.prices,
            article_prices=self.article_prices,
            allow_extrapolation=self.allow_extrapolation,
            confidence=self.confidence,
            bootstrapper=self.bootstrapper,
            years=self.years,
            growth=self.growth,
        )


@dataclass(frozen=True)
class Recommended:
    """The engine's answer, the inputs it was sized on and what to say beside it."""

    result: Recommendation
    inputs: BasisInputs
    warnings: tuple[str, ...] = ()  # for stderr: what the basis chosen is not
    notes: tuple[str, ...] = ()  # for stderr: the latency workload chosen
    p95: bool = False  # sized on a latency workload (the explanation names the basis)
    hint: str = ""  # no answer: what exists instead, and the command that asks for it
    versus: PlatformComparison | None = None  # bare metal against the hypervisor's guests

    @property
    def explanation(self) -> tuple[str, ...]:
        """The choice in words and numbers (:func:`sizing.report.explain.explain`)."""
        return explain(self.result)

    @property
    def answers_anything(self) -> bool:
        """Whether any part of the demand is answered: a recommendation, or one platform of
        the comparison priced. When none is, the refusal's one line says all there is
        (what exists instead and the command that asks for it), with no block before it."""
        if self.result.recommendation is not None:
            return True
        return self.versus is not None and any(s.servers is not None for s in self.versus.sides)


def workload_ask(req: SizingRequest) -> WorkloadAsk:
    """The workload a request asks for (its role, who stated it, whether another role's
    figures may size it, flagged)."""
    return WorkloadAsk(
        req.role, req.role_stated_by, req.allow_other_workload, req.customer, req.demand_file
    )


def load(
    req: Inputs,
    *,
    serves: Want | None = None,
    every_reference: bool = False,
    with_runs: bool = False,
    workload: WorkloadAsk | None = None,
) -> tuple[BasisInputs, list[str]]:
    """Every basis, the chosen ones and the prices (:func:`sizing.sources.load_bases`),
    and the warnings the choice calls for (said on stderr). ``with_runs`` (the guide):
    the runs ``req.runs`` selects are read and returned, and the bases come from them.
    ``workload``: the role asked (:mod:`sizing.engine.roles`)."""
    inputs = load_bases(
        req,
        serves=serves,
        every_reference=every_reference,
        with_runs=with_runs,
        workload=workload,
    )
    notes = []
    use = inputs.choice.workload
    if use is not None and use.other_workload:
        notes.append(use.sentence().split("; also measured")[0])
    chosen = inputs.choice.bases
    if any("emulated" in b.flags for b in chosen):
        notes.append(
            "using figures from software-emulated guests: they do not represent real hardware"
        )
    if any(b.platform == BasisPlatform.VIRTUALIZED_HOST for b in chosen):
        notes.append(f"using a {VIRTUALIZED_HOST_WORDS}: its figures are not bare-metal figures")
    return inputs, notes


def check(req: SizingRequest) -> Demand:
    """A bad request is a usage error, before any file is read; the demand it sizes."""
    if req.demand is None:
        raise UsageError("no demand: give --rps, --tps or both")
    demand = req.demand
    demand.validate()
    if req.max_servers is not None and req.max_servers < 1:
        raise UsageError(f"--max-servers must be at least 1, not {req.max_servers}")
    if req.confidence is not None and not (0.5 <= req.confidence < 1.0):
        raise UsageError(f"--confidence must be at least 0.5 and below 1, not {req.confidence:g}")
    if req.p95 is None:
        return demand
    if demand.tps is not None:
        raise UsageError(
            "--p95 sizes --rps from a measured latency workload, which has no TPS figures, "
            "and a recommendation never mixes bases: size --tps in a second command"
        )
    if req.inputs.source is Source.REFERENCE:
        raise UsageError(
            "--p95 sizes from measured latency points; the reference data has none "
            "(drop --source reference)"
        )
    if demand.rps is None:
        raise UsageError("--p95 sizes a request rate: give --rps too")
    return demand


def _on_replay(demand: Demand, inputs: BasisInputs) -> tuple[Demand, list[str]]:
    """The demand as a customer's replayed workload sizes it: by its requests alone. The
    replay served the customer's TLS connections in their share, resumptions and full
    handshakes alike: its figure is in the customer's requests per second, TLS included;
    counting the handshakes again on a TPS figure would size them twice."""
    replays = [b for b in inputs.choice.bases if b.workload.customer]
    if demand.tps is None or not replays:
        return demand, []
    checks = mix_check(replays, inputs.bases, demand.rps or 0.0, demand.tps)
    return replace(demand, tps=None), [
        "sized on your requests per second alone: your replayed workload's figure carries"
        " your TLS connections, full handshakes and resumptions in your mix"
    ] + [c.sentence() for c in checks]


def recommend(req: SizingRequest, *, with_runs: bool = False) -> Recommended:
    """The cheapest configuration that carries the demand (see ``sizing recommend``); the
    guide's recommendation is this one (``with_runs``: the guide's runs are read too)."""
    demand = check(req)
    asked_assume = assumed_platforms(req.assume, req.assume_source)
    wanted = wanted_platforms(None if req.platform is None else [req.platform])
    if wanted is not None and wanted & {a.platform for a in asked_assume}:
        wanted = {*wanted, "baremetal"}  # an assumed guest is made from bare metal's figures
    profiles = tuple(p for p in demand.profiles if not (req.p95 and p == SizingMetric.RPS))
    inputs, warnings = load(
        # with --p95, --basis names the latency workload, not a throughput basis
        replace(req.inputs, basis=()) if req.p95 is not None else req.inputs,
        serves=Want(
            platforms=None if wanted is None else frozenset(wanted),
            ht=None if req.ht is HtChoice.ANY else req.ht,
            profiles=profiles,
        ),
        with_runs=with_runs,
        # with --p95 the latency workload sizes, its role checked there (_latency_role)
        workload=None if req.p95 is not None else workload_ask(req),
    )
    if req.confidence is not None and req.p95 is None:
        refuse_confidence(inputs.choice)
    figures: tuple[Figure, ...] = inputs.choice.figures
    why = inputs.choice.why
    if passed_over_line(inputs.choice):  # part of the answer, not a note on stderr
        why += "; " + passed_over_line(inputs.choice)
    if req.cpu is not None:
        if req.p95 is not None or (demand.rps is not None and not req.allow_cpu_translation):
            raise UsageError(
                "--cpu translates TLS handshake (--tps) figures: plain RPS is not bound by one "
                "instruction mix; size --rps on a basis measured on that CPU, or add "
                "--allow-cpu-translation for the stated rule RPS × min(1, ceiling ratio)"
            )
        inputs, why = _translated(
            inputs, req.cpu, req.inputs.catalog, req.allow_translation, req.allow_cpu_translation
        )
        figures = inputs.choice.figures
    inputs, assumptions = with_assumptions(inputs, asked_assume)
    figures = inputs.choice.figures
    capacity_of = "their CPU"
    demand, notes = _on_replay(demand, inputs)
    if req.p95 is not None:  # size on "RPS at p95 <= X" of one latency workload only
        workload = req.inputs.basis[0] if req.inputs.basis else None
        figures, why, capacity_of, note = _latency_figures(req, workload)
        notes.append(note)
    how = EngineRequest(
        ht_modes=None if req.ht is HtChoice.ANY else (req.ht,),
        max_servers=req.max_servers,
        bases=tuple(inputs.bases),
        prices=inputs.prices,
        article_prices=inputs.article_prices,
        allow_extrapolation=req.inputs.allow_extrapolation,
        confidence=req.confidence,
        bootstrapper=cached_bootstrapper(req.inputs.db),
        years=req.years,
        growth=req.growth,
    )
    asked = None if req.platform is None else [req.platform]

    def sized(platforms: Sequence[str] | None, figs: Any = None, words: str = "") -> Recommendation:
        """The engine's answer with its words; ``figs``, ``words``: the Kubernetes option's."""
        got = how.recommend(figures if figs is None else figs, inputs.catalog, demand, platforms)
        got = replace(got, why=words or why, capacity_of=capacity_of, assumptions=assumptions)
        return replace(got, measure=measure_next(got, inputs)) if figs is None else got

    result = sized(asked)
    hint = "" if result.recommendation is not None else what_exists(req, demand, inputs)
    versus = None
    if req.compare_platforms or (req.compare_platforms is None and req.platform is None):
        include = (req.inputs.include_virtualized, req.inputs.include_emulated)
        versus = compare_platforms(figures, inputs, demand, sized, how, include)
    p95 = req.p95 is not None
    return Recommended(result, inputs, tuple(warnings), tuple(notes), p95, hint, versus)


def _translated(
    inputs: BasisInputs, cpu: str, catalog: Path | None, allow: bool, rps: bool = False
) -> tuple[BasisInputs, str]:
    """``--cpu``: the chosen basis translated to ``cpu`` by the ratio of the crypto
    ceilings (:mod:`sizing.engine.translate`), priced by the catalog's entries for that CPU;
    refused in one line without ``--allow-translation``."""
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
    got = translate(basis, target, rps=rps)
    if isinstance(got, str):
        raise UsageError(f"--cpu {target.cpu_model}: {got}")
    prices = basis_prices([got], {}, data)
    got = replace(got, price=prices.get(got.id))
    why = (
        f"{got.id}, translated from {basis.kind} basis {basis.id} to {target.cpu_model} by the "
        f"{what} ceiling ratio (an estimate: {target.source})"
    )
    if inputs.choice.workload is not None:
        why += f"; {inputs.choice.workload.sentence()}"
    choice = Choice(
        bases=(got,),
        why=why,
        passed_over=tuple((b.id, "translated to --cpu") for b in inputs.choice.bases),
        workload=inputs.choice.workload,
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
    req: SizingRequest, workload: str | None
) -> tuple[tuple[Figure, ...], str, str, str]:
    """``--p95``: the measured RPS-at-p95 figures of one latency workload (and nothing
    else: a recommendation never mixes bases), the basis sentence, what a server's capacity
    means there, and the line that says which workload was chosen."""
    assert req.p95 is not None
    slo = Slo("p95", parse_limit_ms(req.p95, "--p95"))
    _, found, chosen = latency_figures(
        (),
        slo,
        req.inputs.db,
        req.inputs.include_emulated,
        workload,
        include_virtualized=req.inputs.include_virtualized,
    )
    why = (
        f"latency workload {chosen}: the measured request rate at which p95 latency stays "
        f"within {slo.limit_ms:g} ms, per core count"
    )
    capacity = f"the rate at which p95 stays within {slo.limit_ms:g} ms"
    why += f"; {_latency_role(req, chosen).sentence()}"
    return tuple(found), why, capacity, slo_line(slo, found, chosen)


def _latency_role(req: SizingRequest, chosen: str) -> WorkloadUse:
    """The role of the latency workload ``chosen`` (``latency/proxy/https/1024B``) against
    the role asked: another one is refused in one line, or flagged when allowed."""
    parts = chosen.split("/")
    role = role_of_text(parts[1]) if len(parts) > 1 else None
    sized = () if role is None else (role,)
    if req.role is None:
        return WorkloadUse(sized=sized, stated_by="the latency workload")
    use = WorkloadUse(sized=sized, needed=req.role, stated_by=req.role_stated_by)
    if role is not req.role and not req.allow_other_workload:
        raise UsageError(
            f"--p95: latency workload {chosen} is not {ROLE_WORDS[req.role]}, which "
            f"{req.role_stated_by or 'the request'} asks for: measure one of that role, or"
            " add --allow-other-workload to size on it anyway, flagged"
        )
    return use


def table(
    inputs: Inputs, workload: WorkloadAsk | None = None
) -> tuple[SizingTable, BasisInputs, list[str]]:
    """The cost-per-throughput table of the chosen bases (every reference group: the
    article has a traditional and a Kubernetes table), priced as recommend prices them;
    ``workload``: the role asked (``--role``)."""
    got, notes = load(inputs, every_reference=True, workload=workload)
    built = build_table(
        got.choice.figures,
        got.catalog,
        bases=got.bases,
        prices=got.prices,
        article_prices=got.article_prices,
        allow_extrapolation=inputs.allow_extrapolation,
        bootstrapper=cached_bootstrapper(inputs.db),
    )
    return built, got, notes
