"""What the sizing guide shows, prepared from the runs, the reference data and the engine.

Pure: no I/O, no CLI, no matplotlib. :func:`build_guide` takes the cost catalog, the
reference dataset, the bases chosen by ``--source`` and ``--basis`` (a
:class:`sizing.sources.BasisInputs`), the stored runs the guide covers and the request
(title, customer, target demand...) and returns a :class:`Guide`: every number already
formatted for print and labelled with its provenance (``measured``, ``reference``,
``extrapolated`` or ``emulated``), plus the engine's own outputs (table, fits,
recommendation) for the charts.

Nothing here invents a figure: each number comes from the store (a point, a sample or a
run's host facts), the reference dataset, the catalog, or the engine computing on those.

The modules: :mod:`.model` (the view model's dataclasses), :mod:`.format` (labels, marks,
number formatting: shared with the terminal), :mod:`.tables` (the article's tables),
:mod:`.summary` (headlines, recommendation), :mod:`.runs` (validity, CPU use),
:mod:`.latency`, :mod:`.methodology` and :mod:`.guide` (:func:`build_guide`).

The names below resolve on first use (PEP 562), so that the terminal's tables, which need
only :mod:`.format`, do not import the whole guide.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sizing.report.data.format import (
        FLAG_TEXT,
        MARKS,
        PROVENANCE_TEXT,
        latency_ms,
        money,
        number,
        percent,
    )
    from sizing.report.data.guide import build_guide
    from sizing.report.data.methodology import nginx_fixed_directives
    from sizing.report.data.model import Guide, GuideRequest, LatencySeries, TableBlock, TCell
    from sizing.sources import RunData, figures_of_runs

_LAZY = {
    **dict.fromkeys(
        ("FLAG_TEXT", "MARKS", "PROVENANCE_TEXT", "latency_ms", "money", "number", "percent"),
        "sizing.report.data.format",
    ),
    "build_guide": "sizing.report.data.guide",
    "nginx_fixed_directives": "sizing.report.data.methodology",
    **dict.fromkeys(
        ("Guide", "GuideRequest", "LatencySeries", "TableBlock", "TCell"),
        "sizing.report.data.model",
    ),
    "RunData": "sizing.sources",
    "figures_of_runs": "sizing.sources",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sizing.report.data' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "FLAG_TEXT",
    "MARKS",
    "PROVENANCE_TEXT",
    "Guide",
    "GuideRequest",
    "LatencySeries",
    "RunData",
    "TCell",
    "TableBlock",
    "build_guide",
    "figures_of_runs",
    "latency_ms",
    "money",
    "nginx_fixed_directives",
    "number",
    "percent",
]
