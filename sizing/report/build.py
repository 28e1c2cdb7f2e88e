"""The guide's data from disk: :func:`sizing.sources.load_selection` reads the store's runs,
the catalog and the reference data and chooses the figures by ``--source``; the pure
:func:`sizing.report.data.build_guide` prepares what the guide shows."""

from __future__ import annotations

from sizing.report.data.guide import build_guide
from sizing.report.data.model import Guide, GuideRequest
from sizing.sources import Sources, figures_of_runs, load_selection, nginx_template


def prepare(request: GuideRequest, sources: Sources) -> Guide:
    """Read everything, choose the figures, and build the guide's data."""
    inputs = load_selection(request.source, sources, request.include_emulated, with_runs=True)
    emulated = [f for f in figures_of_runs(inputs.runs, include_emulated=True) if f.emulated]
    return build_guide(
        request,
        inputs.catalog,
        inputs.reference,
        inputs.selection,
        inputs.runs,
        emulated=emulated,
        nginx_template=nginx_template(),
    )
