"""The guide's "How sure are these figures" section (pure): what each interval covers, how
every predicted figure was made and how far it reaches, and how likely the recommendation
is to carry the demand, in sentences a customer can say back."""

from __future__ import annotations

from dataclasses import dataclass

from sizing.engine.cell import Cell
from sizing.engine.recommend import Recommendation
from sizing.engine.table import SizingTable
from sizing.model import PREDICTED, FigureKind
from sizing.report.data.format import number
from sizing.report.data.model import TableBlock, TCell
from sizing.report.explain import explain


@dataclass(frozen=True)
class Certainty:
    """Paragraphs, and the table of predicted figures (None: nothing predicted)."""

    paragraphs: tuple[str, ...]
    predicted: TableBlock | None
    closing: tuple[str, ...] = ()  # after the table: how likely the recommendation holds


def _cells(table: SizingTable) -> list[Cell]:
    return [c for block in table.blocks for r in block.rows for c in r.cells]


def certainty_section(table: SizingTable, result: Recommendation | None) -> Certainty:
    """The section for this guide's table and recommendation."""
    cells = _cells(table)
    measured = [c for c in cells if c.source == FigureKind.MEASURED]
    paras: list[str] = []
    if measured:
        kinds = sorted({c.interval for c in measured if c.interval})
        paras.append(
            "Each measured figure is the median of its timed runs. Its interval is the interval "
            "of the median that assumes nothing about how the runs vary: with n runs up to 5 it "
            "is their range, which holds the true median 1 − 2/2ⁿ of the time (75% for 3 runs, "
            "87.5% for 4, 94% for 5); 95% needs 6 runs or more. In this guide: "
            + ("; ".join(kinds) if kinds else "single runs, without an interval")
            + "."
        )
    noted = ("drift", "erratic", "disagree")
    flagged = sorted({f for c in measured for f in c.flags if f in noted})
    if flagged:
        words = {
            "drift": "drift (the runs rose or fell in order by more than chance explains "
            "across the run's points, at a 5% false-discovery rate: the host may have changed "
            "during the test; Appendix A gives each trend's size)",
            "erratic": "erratic (a run far from the others: the point is not sized on)",
            "disagree": "disagree (runs or hosts of the same hardware measured figures whose "
            "intervals do not meet: the lowest is sized on)",
        }
        paras.append("Flagged figures: " + "; ".join(words[f] for f in flagged) + ".")
    if any(c.source == FigureKind.REFERENCE for c in cells):
        paras.append(
            "The published reference figures are single numbers: no repetitions, so no interval. "
            'A figure predicted from them runs from "no gain beyond the last published core '
            'count" up to the fitted curve.'
        )
    predicted = [c for c in cells if c.source in PREDICTED]
    block = None
    if predicted:
        paras.append(
            "A figure at a core count that was not measured is predicted: by the Universal "
            "Scalability Law fitted to every run, with a 95% prediction interval from refitting it "
            "to resampled runs (a bootstrap), which widens with distance from what was measured; "
            "or, with fewer than three core counts measured, by the scaling shape of a basis with "
            "the same workload, its interval widened by how badly that shape fits. No prediction "
            "exceeds linear scaling from the best measured figure per core, and none is made "
            "beyond twice the largest core count measured unless asked for."
        )
        block = TableBlock(
            title="Predicted figures and their intervals",
            headers=("Basis", "Series", "Cores", "Figure", "Interval", "How it was made"),
            rows=tuple(_row(c) for c in predicted),
        )
    said: list[str] = []
    if result is not None:
        said = [x for x in explain(result) if x.startswith(("Carries ", "How likely"))]
    return Certainty(tuple(paras), block, tuple(said))


def _row(c: Cell) -> tuple[TCell, ...]:
    interval = (
        f"{number(c.ci_low)} to {number(c.ci_high)}"
        if c.ci_low is not None and c.ci_high is not None
        else "none"
    )
    how = c.origin + (f"; {c.interval}" if c.interval else "")
    return (
        TCell(c.basis_id or c.basis, numeric=False),
        TCell(f"{c.profile.upper()} {c.platform} HT {c.ht}", numeric=False),
        TCell(str(c.cores)),
        TCell(number(c.value), c.source),
        TCell(interval),
        TCell(how, numeric=False),
    )
