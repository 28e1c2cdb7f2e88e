"""One bootstrap draw's law at a core count (:mod:`sizing.engine.predict`): X(N) of its
(λ, σ, κ), where its denominator has not fallen away, and the draw held to its own linear
bound (:func:`law_at`, :func:`held`: the definitions); and every draw of a bootstrap at
once (:func:`curve_at`: the same numbers, computed without a call per draw, each draw's
fall scanned once for all counts by :class:`Falls`). Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sizing.engine.scaling import usl

__all__ = ["Falls", "curve_at", "denominator_falls", "held", "law_at"]


def law_at(cores: int, p: tuple[float, float, float]) -> float | None:
    """X(cores) of a draw's law; None where a curve with σ or κ below zero has turned
    superlinear without bound (its draw is then its linear bound)."""
    lam, sigma, kappa = p
    denom = 1.0 + sigma * (cores - 1.0) + kappa * cores * (cores - 1.0)
    if sigma >= 0.0 and kappa >= 0.0:
        return usl(cores, lam, sigma, kappa)
    # below zero the denominator may fall, vanish or turn: past its fall the law has no
    # meaning left, and the linear bound is all that is known
    if denom <= 1e-3 or denominator_falls(sigma, kappa, cores):
        return None
    return lam * cores / denom


def denominator_falls(sigma: float, kappa: float, cores: int) -> bool:
    """Whether the law's denominator 1 + σ(m−1) + κm(m−1) is at most 1e-3 at a whole
    ``m`` from 1 to ``cores`` − 1. It is a parabola in m: its least over whole m is at an
    end of the range or, when it opens upwards (κ > 0), beside its vertex, so those few
    counts are checked instead of every one (recommend asks it of each draw at each count:
    scanning the range made it quadratic in cores)."""
    last = cores - 1
    if last < 1:
        return False
    at = {1, last}
    if kappa > 0.0:
        vertex = (1.0 - sigma / kappa) / 2.0  # where σ + κ(2m − 1) = 0
        if 1.0 < vertex < last:
            # the whole counts on either side, and one more each way for rounding
            mid = math.floor(vertex)
            at.update(m for m in range(mid - 1, mid + 3) if 1 <= m <= last)
    return any(1.0 + sigma * (m - 1.0) + kappa * m * (m - 1.0) <= 1e-3 for m in at)


def held(x: float | None, grow: float, line: float) -> float:
    """min(x·e^grow, line), at least 0 (``line`` when ``x`` is None), compared in logs: a
    far widening of a draw with a wide noise must not overflow on its way to the bound."""
    if x is None:
        return max(0.0, line)
    if x <= 0.0:
        return 0.0
    if line <= 0.0:
        return max(0.0, line)
    return line if grow >= math.log(line / x) else x * math.exp(grow)


class Falls:
    """Per draw, the first whole count at which its law's denominator 1 + σ(m−1) + κm(m−1)
    is at most 1e-3, scanned count by count as far as asked and remembered (recommend asks
    every count of a table of every draw): :meth:`by` is the definition's answer, with each
    count's denominator evaluated once per draw."""

    def __init__(self, params: Sequence[tuple[float, float, float]]) -> None:
        self._params = params
        self._upto = [0] * len(params)  # the counts scanned, 1 to this, fall or not
        self._at: list[int | None] = [None] * len(params)

    def by(self, i: int, cores: int) -> bool:
        """Whether draw ``i``'s denominator is at most 1e-3 at a whole m from 1 to
        ``cores`` (:func:`law_at` is then None)."""
        at = self._at[i]
        if at is not None:
            return at <= cores
        upto = self._upto[i]
        if upto >= cores:
            return False
        _, sigma, kappa = self._params[i]
        for m in range(upto + 1, cores + 1):
            if 1.0 + sigma * (m - 1.0) + kappa * m * (m - 1.0) <= 1e-3:
                self._at[i] = self._upto[i] = m
                return True
        self._upto[i] = cores
        return False


def curve_at(
    cores: int,
    distance: float,
    params: Sequence[tuple[float, float, float]],
    per_core: Sequence[float],
    spread: Sequence[float],
    falls: Falls,
) -> tuple[float, ...]:
    """Every draw's ``held(law_at(cores, p), w * distance, cores * best)``, as those compute
    it, in one loop (some 50,000 draws a command)."""
    out: list[float] = []
    for i, ((lam, sigma, kappa), best, w) in enumerate(zip(params, per_core, spread, strict=True)):
        line = cores * best
        if (sigma < 0.0 or kappa < 0.0) and falls.by(i, cores):
            out.append(max(0.0, line))  # no law left: its linear bound
            continue
        x = lam * cores / (1.0 + sigma * (cores - 1.0) + kappa * cores * (cores - 1.0))
        grow = w * distance
        if x <= 0.0:
            out.append(0.0)
        elif line <= 0.0:
            out.append(max(0.0, line))
        else:
            out.append(line if grow >= math.log(line / x) else x * math.exp(grow))
    return tuple(out)
