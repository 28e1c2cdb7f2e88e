"""The scaling shape a series with too few core counts borrows from another basis of the
same workload (:meth:`sizing.engine.series.Series.estimate`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sizing.engine.scaling import ScalingFit
from sizing.model import Figure

__all__ = ["Shape"]


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
