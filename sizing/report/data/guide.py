"""The whole guide's data: :func:`build_guide` assembles the view model. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sizing.engine import CostCatalog, Recommendation
from sizing.engine.basis import Basis
from sizing.engine.choice import Choice
from sizing.engine.predict import Bootstrapper
from sizing.engine.table import SizingTable, build_table
from sizing.engine.versus import PlatformComparison
from sizing.model import Figure, FigureKind
from sizing.report.data.about import about_facts, measured_on
from sizing.report.data.certainty import certainty_section
from sizing.report.data.cover import cover, simulated
from sizing.report.data.curves import series_curves
from sizing.report.data.format import MARKS, PLATFORM_LABELS, inventory_name, provenance_text
from sizing.report.data.gateway import gateway_section
from sizing.report.data.latency import latency_section
from sizing.report.data.limits import limits_section
from sizing.report.data.measured_tables import (
    emulated_table,
    ht_gain_table,
    overhead_points,
    overhead_table,
    provenance_table,
)
from sizing.report.data.methodology import distinct, methodology
from sizing.report.data.model import Fact, Guide, GuideRequest
from sizing.report.data.proposal import assumptions_table, proposal
from sizing.report.data.runs import cpu_points, validity_table
from sizing.report.data.scope import scope
from sizing.report.data.summary import headlines, recommendation_view
from sizing.report.data.tables import sizing_tables
from sizing.report.data.versus import versus_view
from sizing.sources import RunData

if TYPE_CHECKING:
    from sizing.catalog import Reference
    from sizing.sources import BasisInputs


NAMED_HOSTS = 4  # the most hosts the guide's basis sentence names one by one


def _basis_text(choice: Choice, basis: str, citation: str) -> str:
    """What the guide is sized on, in the words a buyer reads, with the workload's flag
    first when it was sized on another workload's figures and the other workloads measured
    last (:func:`_sized_text`)."""
    text = _sized_text(choice, basis, citation)
    use = choice.workload
    if use is None:
        return text
    if use.other_workload:
        text = f"NOT YOUR WORKLOAD'S FIGURES (--allow-other-workload): {use.error}. " + text
    if use.others:
        text += f" {use.others_line()[0].upper()}{use.others_line()[1:]}."
    return text


def _sized_text(choice: Choice, basis: str, citation: str) -> str:
    """What the guide is sized on, in the words a buyer reads (the bases' ids and why they
    were chosen are in the methodology, :func:`basis_facts`); measured and published
    figures asked for together (``--basis``) are each said for what they are."""

    def described(bases: Sequence[Basis]) -> tuple[str, str, str]:
        platforms = ", ".join(
            dict.fromkeys(PLATFORM_LABELS.get(b.platform, b.platform) for b in bases)
        )
        hardware = "; ".join(dict.fromkeys(b.hardware.label() for b in bases))
        workload = "; ".join(dict.fromkeys(b.workload.label() for b in bases))
        return platforms, hardware, workload

    measured = [b for b in choice.bases if b.origin != FigureKind.REFERENCE]
    published = [b for b in choice.bases if b.origin == FigureKind.REFERENCE]
    if basis == FigureKind.REFERENCE or not measured:
        platforms, hardware, workload = described(published or choice.bases)
        return (
            f"Sized on the published reference data ({citation}), not on measurements of "
            f"your hardware: {platforms}; {hardware}; NGINX {workload}."
        )
    named = list(dict.fromkeys(h for b in measured for h in b.hosts))
    # the cover's Data row and the summary's lead say this: a lab of many long host names
    # filled the cover past its page; the methodology names each host
    hosts = ", ".join(named)
    if len(named) > NAMED_HOSTS:
        hosts = ", ".join(named[: NAMED_HOSTS - 1]) + f" and {len(named) - NAMED_HOSTS + 1} more"
    platforms, _, workload = described(measured)
    made = (
        "made up for an example (examples/simulated.py), not measured,"
        if simulated(choice)
        else "measured with sizing"
    )
    text = f"Sized on figures {made} on {hosts}: {platforms}; NGINX {workload}."
    if published:
        platforms, hardware, workload = described(published)
        text += (
            f" Beside them, the published reference data ({citation}), not measured on "
            f"your hardware: {platforms}; {hardware}; NGINX {workload}."
        )
    return text


def basis_facts(choice: Choice) -> tuple[Fact, ...]:
    """The bases by id, with what each is, and why they were chosen (for engineers)."""
    facts = [
        Fact(
            b.id,
            "; ".join(
                [b.platform, b.hardware.label(), b.workload.label()]
                + ([b.software] if b.software else [])
            ),
        )
        for b in choice.bases
    ]
    facts.append(Fact("Why these", choice.why))
    facts += [Fact(i, "passed over: " + why) for i, why in choice.passed_over]
    return tuple(facts)


def _table(
    request: GuideRequest,
    catalog: CostCatalog,
    inputs: BasisInputs,
    bootstrapper: Bootstrapper | None,
) -> SizingTable:
    """The sizing table of the chosen bases, as ``sizing table`` builds it."""
    return build_table(
        inputs.choice.figures,
        catalog,
        bases=inputs.bases,
        prices=inputs.prices,
        article_prices=inputs.article_prices,
        allow_extrapolation=request.inputs.allow_extrapolation,
        bootstrapper=bootstrapper,
    )


def _answers(catalog: CostCatalog, result: Recommendation | None) -> CostCatalog:
    """The answer's catalog: its period is ``--years`` when asked (the catalog's own
    ``amortisation_months`` put "over 60 months", and a cost per year of the total / 5,
    beside a 10-year plan's total)."""
    return catalog if result is None or result.catalog is None else result.catalog


def build_guide(
    request: GuideRequest,
    catalog: CostCatalog,
    reference: Reference,
    inputs: BasisInputs,
    runs: Sequence[RunData],
    *,
    emulated: Sequence[Figure] = (),
    nginx_template: str = "",
    result: Recommendation | None = None,
    versus: PlatformComparison | None = None,
    bootstrapper: Bootstrapper | None = None,
) -> Guide:
    """Prepare the whole guide (see the module docstring). ``inputs`` are the bases and
    the choice (:func:`sizing.sources.load_bases`): every table comes from the chosen bases
    only. ``result`` is the recommendation for the request's demand, made by the same use
    case as ``sizing recommend`` (:func:`sizing.app.sizing.recommend`), never here;
    ``bootstrapper`` reads the fit cache ``sizing table`` and ``recommend`` read."""
    catalog, choice = _answers(catalog, result), inputs.choice
    table = _table(request, catalog, inputs, bootstrapper)
    basis = table.source
    citation = reference.citation()
    inventories = tuple(distinct(inventory_name(r.record.inventory) for r in runs))
    rec_view = None if result is None else recommendation_view(result, catalog.currency)
    sure = certainty_section(table, result)
    # the body shows the hosts it is sized on; the others are in Appendix A (scope.py)
    virt, emu = request.inputs.include_virtualized, request.inputs.include_emulated
    body, left_out = scope(runs, choice, include_virtualized=virt, include_emulated=emu)
    hosts = measured_on(body)
    limits = limits_section(body, FigureKind.REFERENCE in table.sources_used)
    ov = overhead_points(table)
    shown = provenance_text(simulated=simulated(choice)).items()
    return Guide(
        request=request,
        title=request.title,
        customer=request.customer,
        date=request.date,
        paper=request.paper,
        inventories=inventories,
        run_ids=tuple(r.record.id for r in runs),
        basis=basis,
        basis_text=_basis_text(choice, basis, citation),
        reference_only=basis == FigureKind.REFERENCE,
        citation=citation,
        reference_url=reference.url,
        currency=catalog.currency,
        cost_basis=table.cost_basis,
        headlines=tuple(headlines(table)),
        recommendation=rec_view,
        tables=tuple(sizing_tables(table, catalog)),
        table=table,
        curves=series_curves(table),
        choice=choice,
        overhead=tuple(ov),
        overhead_table=overhead_table(ov),
        ht_gain_table=ht_gain_table(table),
        emulated_table=emulated_table(emulated, request.inputs.include_emulated),
        cpu_points=tuple(cpu_points(body)),
        methodology=methodology(body, reference, table, catalog, nginx_template),
        validity=validity_table(runs),
        provenance=provenance_table(table),
        runs=tuple(runs),
        legend=tuple(Fact(MARKS[k], f"{k}: {v}") for k, v in shown),
        latency=latency_section(body),
        gateway=gateway_section(body),
        certainty=sure.paragraphs,
        predicted=sure.predicted,
        certainty_closing=sure.closing,
        limits_text=limits.paragraphs,
        limits_table=limits.table,
        limit_points=limits.points,
        versus=None if versus is None else versus_view(versus),
        limits_all=limits.all_table,
        about=about_facts(request, catalog),
        measured_on=hosts,
        bases=basis_facts(choice),
        left_out=left_out,
        cover=cover(basis == FigureKind.REFERENCE, hosts, left_out, runs, choice),
        **_page_one(request, catalog, result, versus, figures_from(basis, citation, hosts, choice)),
    )


def figures_from(basis: str, citation: str, hosts: Sequence[str], choice: Choice) -> str:
    """Where the capacity figures come from, for the assumptions' source column."""
    if basis == FigureKind.REFERENCE:
        return f"published reference data: {citation}"
    if simulated(choice):
        return "made up for an example (examples/simulated.py), not measured: " + "; ".join(hosts)
    return "measured with sizing run on " + "; ".join(hosts)


def _page_one(
    request: GuideRequest,
    catalog: CostCatalog,
    result: Recommendation | None,
    versus: PlatformComparison | None,
    source: str,
) -> dict[str, Any]:
    """The executive summary's proposal and its assumptions (:class:`Guide` fields)."""
    return {
        "proposal": proposal(result, versus, catalog),
        "assumptions": assumptions_table(result, catalog, source),
    }
