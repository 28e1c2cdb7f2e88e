"""What the throughput chart draws of each series, computed before rendering: the fitted
curve (:meth:`sizing.engine.scaling.ScalingFit.curve`) as far as the table predicts, and
the figures the engine derives at the core counts nobody measured. The chart only draws
these (renderers fit nothing)."""

from __future__ import annotations

from dataclasses import dataclass

from sizing.engine.series import Series
from sizing.engine.table import SizingTable
from sizing.model import SizingMetric

__all__ = ["SeriesCurve", "series_curves"]

SeriesId = tuple[str, str, str, str]  # basis id, platform, HT, profile


def series_id(s: Series) -> SeriesId:
    """The series a curve belongs to."""
    return (s.basis_id, s.platform, s.ht, s.profile)


@dataclass(frozen=True)
class SeriesCurve:
    """One series' curve (empty: no figure to fit) and its derived figures."""

    series: SeriesId
    curve: tuple[tuple[float, float], ...]
    derived: tuple[tuple[int, float], ...]  # (cores, value) at counts not measured


def series_curves(table: SizingTable) -> tuple[SeriesCurve, ...]:
    """Every sized series' curve: it runs only as far as the table predicts, not past a
    lower bound nor to a core count the table leaves empty; a series with no exact figure
    has none."""
    cores = [r.cores for r in table.rows]
    out = []
    for s in table.series:
        if s.profile not in tuple(SizingMetric) or not s.observed:
            continue
        full = [f for f in s.observed if not f.lower_bound]
        hi = max(f.cores for f in full or s.observed)
        observed = [f.cores for f in s.observed]
        derived = [(c, s.estimate(c)) for c in cores if c not in observed]
        extra = tuple((c, f.value) for c, f in derived if not isinstance(f, str))
        top = max([hi] + [c for c, _ in extra])
        curve = tuple(s.fit.curve(top)) if s.exact else ()
        out.append(SeriesCurve(series_id(s), curve, extra))
    return tuple(out)
