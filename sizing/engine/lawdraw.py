"""One bootstrap draw's law at a core count (:mod:`sizing.engine.predict`): X(N) of its
(λ, σ, κ), where its denominator has not fallen away, and the draw held to its own linear
bound. Pure."""

from __future__ import annotations

import math

from sizing.engine.scaling import usl

__all__ = ["denominator_falls", "held", "law_at"]


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
