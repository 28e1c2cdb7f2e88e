"""The sizing engine: figures and a cost catalog in, tables and recommendations out.

Pure: no I/O, no CLI. The results store and the bundled reference dataset supply
:class:`sizing.model.Figure` values; :mod:`sizing.catalog` loads cost catalogs into
:class:`CostCatalog`. See :mod:`sizing.engine.figures` (which figures are used),
:mod:`sizing.engine.scaling` (the USL fit and its fallback), :mod:`sizing.engine.table`
and :mod:`sizing.engine.recommend`.
"""

from sizing.engine.basis import Basis, Hardware, Price, Workload, group_key
from sizing.engine.cell import Cell
from sizing.engine.choice import Choice, choose
from sizing.engine.costs import (
    NEVER_PRICED,
    CostBreakdown,
    CostCatalog,
    CostScope,
    Licence,
    ServerOffer,
)
from sizing.engine.figures import build_series, latest, measured_figures
from sizing.engine.overhead import figure_overhead
from sizing.engine.recommend import (
    DEFAULT_MAX_SERVERS,
    Configuration,
    Demand,
    Recommendation,
    Rejected,
    recommend,
    servers_needed,
)
from sizing.engine.scaling import MIN_POINTS, R2_THRESHOLD, ScalingFit, fit, usl
from sizing.engine.series import Series
from sizing.engine.table import SizingTable, TableRow, build_table

__all__ = [
    "NEVER_PRICED",
    "Basis",
    "Choice",
    "Hardware",
    "Price",
    "Workload",
    "choose",
    "group_key",
    "DEFAULT_MAX_SERVERS",
    "MIN_POINTS",
    "R2_THRESHOLD",
    "Cell",
    "Configuration",
    "CostBreakdown",
    "CostCatalog",
    "CostScope",
    "Demand",
    "Licence",
    "Recommendation",
    "Rejected",
    "ScalingFit",
    "Series",
    "ServerOffer",
    "SizingTable",
    "TableRow",
    "build_series",
    "build_table",
    "figure_overhead",
    "fit",
    "latest",
    "measured_figures",
    "recommend",
    "servers_needed",
    "usl",
]
