"""The one Levenberg–Marquardt solver of the Universal Scalability Law's three parameters
(λ, σ ≥ 0, κ ≥ 0): projected steps with an active set (σ or κ at 0 whose descent points
below 0 stays at 0), a step kept only when it lowers the weighted squared error, so the
result is never worse than the start. Both fits call it: the least squares in throughput
(:func:`sizing.engine.scaling.refine`) and in logs (:func:`sizing.engine.runsfit.refine_log`).
Pure."""

from __future__ import annotations

from collections.abc import Callable

Params = tuple[float, float, float]
# per observation: (weight, residual, the residual's gradient in λ, σ, κ)
Rows = list[tuple[float, float, tuple[float, float, float]]]


def solve3(a: list[list[float]], b: list[float], tiny: float = 1e-300) -> list[float] | None:
    """Solve a 3×3 system by Gaussian elimination with partial pivoting (None: a pivot
    below ``tiny``, singular)."""
    m = [row[:] + [v] for row, v in zip(a, b, strict=True)]
    for c in range(3):
        p = max(range(c, 3), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < tiny:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(3):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][3] / m[i][i] for i in range(3)]


def levenberg_marquardt(
    rows_of: Callable[[Params], Rows], start: Params, iters: int, tol: float, floor: float = 0.0
) -> Params:
    """(λ, σ, κ) minimising Σ wᵢ·rᵢ² from ``start``; stops after ``iters`` steps, when no
    damping lowers the error, or when a step lowers it by at most ``tol`` of the error
    (never less than ``floor``)."""

    def sse(v: Params) -> float:
        return sum(w * r * r for w, r, _ in rows_of(v))

    cur = start
    err = sse(cur)
    mu = 1e-3
    for _ in range(iters):
        rows = rows_of(cur)
        jtj = [[sum(w * g[i] * g[j] for w, _, g in rows) for j in range(3)] for i in range(3)]
        jtr = [sum(w * g[i] * r for w, r, g in rows) for i in range(3)]
        held = {i for i in (1, 2) if cur[i] <= 0.0 and jtr[i] > 0.0}
        improved = False
        while mu < 1e12:
            a = [
                [
                    (1.0 if i == j else 0.0)
                    if i in held or j in held
                    else jtj[i][j] + (mu * jtj[i][i] if i == j else 0.0)
                    for j in range(3)
                ]
                for i in range(3)
            ]
            step = solve3(a, [0.0 if i in held else -jtr[i] for i in range(3)])
            if step is None:
                mu *= 10.0
                continue
            cand = (
                max(1e-12, cur[0] + step[0]),
                max(0.0, cur[1] + step[1]),
                max(0.0, cur[2] + step[2]),
            )
            e = sse(cand)
            if e < err:
                done = err - e <= tol * max(err, floor)
                cur, err, mu, improved = cand, e, max(mu / 10.0, 1e-12), True
                if done:
                    return cur
                break
            mu *= 10.0
        if not improved:
            break
    return cur
