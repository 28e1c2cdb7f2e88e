"""The engine's result types a renderer formats, named in one place of the data layer:
``sizing.report.render`` never imports the engine (``tests/unit/test_render_formats.py``
and the import-linter contract in pyproject.toml), and names these in its annotations
only, under ``TYPE_CHECKING``."""

from __future__ import annotations

from sizing.engine.answer import Recommendation
from sizing.engine.basis import Basis, Price
from sizing.engine.cell import Cell
from sizing.engine.choice import Choice
from sizing.engine.compare import EnvDiff, FigureDiff
from sizing.engine.table import SizingTable
from sizing.engine.versus import PlatformComparison
from sizing.engine.yearly import CashFlow

__all__ = [
    "Basis",
    "CashFlow",
    "Cell",
    "Choice",
    "EnvDiff",
    "FigureDiff",
    "PlatformComparison",
    "Price",
    "Recommendation",
    "SizingTable",
]
