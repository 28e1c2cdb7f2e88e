"""The guide's data from disk: :func:`sizing.sources.load_bases` reads the store's runs,
the catalog and the reference data, builds every basis and chooses the ones to size from
(``--basis``, ``--source``, ``--include-*``); the pure :func:`sizing.report.data.build_guide`
prepares what the guide shows."""

from __future__ import annotations

from sizing.report.data.guide import build_guide
from sizing.report.data.model import Guide, GuideRequest
from sizing.sources import Sources, figures_of_runs, load_bases, nginx_template


def prepare(request: GuideRequest, sources: Sources) -> Guide:
    """Read everything, choose the bases, and build the guide's data."""
    inputs = load_bases(
        sources,
        requested=request.bases or None,
        source=request.source,
        include_virtualized=request.include_virtualized,
        include_emulated=request.include_emulated,
        article_prices=request.article_prices,
        with_runs=True,
    )
    emulated = [f for f in figures_of_runs(inputs.runs, include_emulated=True) if f.emulated]
    return build_guide(
        request,
        inputs.catalog,
        inputs.reference,
        inputs,
        inputs.runs,
        emulated=emulated,
        nginx_template=nginx_template(),
    )
