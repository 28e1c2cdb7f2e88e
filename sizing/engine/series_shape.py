"""What a series fits on and borrows: which observed figures are usable, their
repetitions per core count, the scaling fit of a series, and the shape a series with
fewer than three core counts borrows from another basis."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sizing.engine.runsfit import fit_runs
from sizing.engine.scaling import MIN_POINTS, ScalingFit, fit
from sizing.model import Figure


@dataclass(frozen=True)
class Shape:
    """The scaling shape borrowed from another basis (same workload, ≥ 3 core counts,
    never an emulated one for a basis that is not)."""

    basis: str
    fit: ScalingFit

    def x(self, cores: int) -> float | None:
        """X_ref(cores): the fit, else a line between its observed points (inside them)."""
        if self.fit.usable:
            return self.fit.predict(cores)
        ns = [n for n, _ in self.fit.points]
        return self.fit.predict(cores) if ns and min(ns) <= cores <= max(ns) else None

    def ratio(self, n0: int, n: int) -> float | None:
        a, b = self.x(n0), self.x(n)
        return None if a is None or b is None or a <= 0.0 else b / a

    @property
    def top(self) -> int:
        """The largest core count the shape's basis measured."""
        return max((n for n, _ in self.fit.points), default=0)

    def misfit(self, own: Sequence[Figure], n0: int) -> float | None:
        """How badly the shape fits the borrowing series' own measured counts: the largest
        |own ratio / shape ratio − 1| from ``n0`` to each other count (None: no other
        measured count to compare with)."""
        base = next((f for f in own if f.cores == n0), None)
        worst: float | None = None
        for f in own:
            if base is None or f.cores == n0 or base.value <= 0.0:
                continue
            r = self.ratio(n0, f.cores)
            if r is None or r <= 0.0:
                continue
            err = abs((f.value / base.value) / r - 1.0)
            worst = err if worst is None else max(worst, err)
        return worst


def rel_interval(f: Figure) -> tuple[float, float]:
    """A figure's interval relative to its value: (low, high) fractions below/above."""
    if f.ci_low is None or f.ci_high is None or f.value <= 0.0:
        return 0.0, 0.0
    return max(0.0, 1.0 - f.ci_low / f.value), max(0.0, f.ci_high / f.value - 1.0)


def usable_bound(f: Figure) -> bool:
    """A lower bound a floor may rest on: not erratic."""
    return f.lower_bound and "erratic" not in f.flags


def usable_point(f: Figure) -> bool:
    """Whether a figure may be fitted or anchor a prediction: not a lower bound, not
    erratic (its repetitions disagree by more than a factor of two)."""
    return not f.lower_bound and "erratic" not in f.flags


def series_points(figs: Iterable[Figure]) -> list[tuple[int, float]]:
    return [(f.cores, f.value) for f in figs if usable_point(f)]


def counts_of(figs: Iterable[Figure]) -> list[tuple[int, tuple[float, ...]]]:
    """A series' repetitions per core count for the fit and the bootstrap."""
    return [(f.cores, f.reps or (f.value,)) for f in figs if usable_point(f)]


def fit_of(figs: Sequence[Figure]) -> ScalingFit:
    counts = counts_of(figs)
    if not counts:
        return ScalingFit(
            model="linear", points=(), note="only lower bounds or erratic figures measured"
        )
    return _fit_counts(tuple((n, tuple(vs)) for n, vs in counts))


@lru_cache(maxsize=512)
def _fit_counts(counts: tuple[tuple[int, tuple[float, ...]], ...]) -> ScalingFit:
    """The fit of one series' repetitions, remembered for the process: `recommend`'s
    platform comparison and its table rebuild the same series (the fit is ~5 ms)."""
    if any(len(vs) >= 2 for _, vs in counts):
        # runs: the fit their noise model makes most likely (in logs, weighted by runs),
        # the model the draws of sizing.engine.predict assume
        return fit_runs(counts)
    return fit([(n, sum(vs) / len(vs)) for n, vs in counts])


SHAPE_FLOOR = 0.10  # added to a borrowed shape's relative half-width (other hardware)


def borrowed(
    shape: Shape, exact: Sequence[Figure], anchor: Figure, cores: int, cap: float
) -> tuple[float, tuple[float, float], str, str] | None:
    """The figure at ``cores`` scaled from ``anchor`` by a borrowed ``shape``: its value,
    its interval (the anchor's widened by :data:`SHAPE_FLOOR` plus the shape's misfit on
    the series' own counts), what the misfit was and the interval's words; None when the
    shape does not reach ``cores``."""
    ratio = shape.ratio(anchor.cores, cores)
    if ratio is None:
        return None
    value = min(anchor.value * ratio, cap)
    misfit = shape.misfit(exact, anchor.cores)
    widen = SHAPE_FLOOR + (misfit or 0.0)
    r = rel_interval(anchor)
    low = value * max(0.0, 1.0 - r[0] - widen)
    high = value * (1.0 + r[1] + widen)
    fitted = (
        f"misfit {misfit * 100:.1f}% on the overlapping core counts"
        if misfit is not None
        else "no overlapping core count to check it on"
    )
    words = (
        f"borrowed shape: the anchor's interval widened by {widen * 100:.0f} points "
        f"({SHAPE_FLOOR * 100:.0f} for other hardware, {fitted}); its coverage is not "
        f"known: measure {MIN_POINTS} or more core counts for a stated one"
    )
    return value, (low, high), fitted, words
