"""Prediction uncertainty of a scaling series: draws from its predictive distribution. Pure.

A series is a few core counts, each with its timed repetitions. What a prediction at N
cores claims to cover is the *true* capacity there (the median of what a run would
measure), and the draws are built so that a stated 95% holds (``benchmarks/calibration``
checks it against known curves):

- **Noise, with its own uncertainty.** Repetitions are lognormal around the count's true
  median (the log of a rate is what noise adds to). The within-count variance of the logs
  is pooled over the counts (Σ(m_i − 1) degrees of freedom), and each draw takes its
  variance from the posterior of that estimate (scaled inverse χ², Jeffreys prior), then
  each count's true log-median from N(mean log, v/m_i). Three runs a count do not pin
  their spread down: this is what makes the interval a Student-t one rather than a replay
  of the values seen (the percentile bootstrap it replaces held 83% for a stated 95%).
- **Bounded draws.** The variance a draw takes is at most its posterior's 99.9% quantile
  (:data:`VARIANCE_TAIL`): with one degree of freedom (two runs at one count) the
  inverse χ²₁ has a tail heavy enough to overflow ``exp`` (1 series in 200 did), and
  bounding 1 draw in 1,000 moves no 2.5% or 97.5% quantile by more than 0.1 point of
  probability. A draw's true median is held within the rates the store accepts
  (:data:`sizing.model.RATE_FLOOR` to :data:`~sizing.model.RATE_CEILING`): the truth
  lies there, and holding every draw in a range that holds the truth never moves a
  quantile away from it, so the coverage is kept exactly.
- **The model's misfit.** The law's least residual in logs (σ, κ ≥ 0; with three counts
  only where they cannot pass through them), where an F test at 95% says the noise does not
  explain it, is a variance of its own beyond the noise, added to every count's draw and
  to the widening with distance. Below the test it is noise, already counted.
- **Distance from the data.** The law is refitted to each draw (λ, σ, κ, σ and κ ≥ 0);
  beyond the measured counts a draw's prediction is widened by a lognormal factor whose
  log-sd is (the draw's noise sd + the misfit) per doubling of distance from the nearest
  measured count: the form of the law is least known where nothing was measured.
- **The linear bound of the truth.** A draw never exceeds N × its own best per-core
  median: linear scaling bounds the truth only from figures that are the truth's, so the
  bound moves with the draw and a measured median below the truth does not cap the
  interval below it.

The quantiles of X(N) over the draws are the prediction interval at N; a measured count's
draws are those of its true median. With fewer than three counts there is no law: the
draws are the counts' medians only. Seeded by the data: the same figures always give the
same draws.

A series without repetitions (the bundled reference data: one published number per core
count) has no draws: :class:`Bootstrap.empty` says so, and the caller states the interval
it uses instead.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.engine.lawdraw import Falls, curve_at
from sizing.engine.lm import solve3
from sizing.engine.scaling import MIN_POINTS, Law, fit, refine, search_lambda
from sizing.model import RATE_CEILING, RATE_FLOOR

DRAWS = 200
# below this many repetitions a point says nothing of its own spread beyond the pooled
# one: a confidence in a fleet is not claimed (the answer says what to measure)
MIN_CLAIM_RUNS = 3
LOW_Q, HIGH_Q = 0.025, 0.975
# the law's misfit counts only beyond what the noise could make at this normal quantile
# (an F(1, df) test at 95%): chosen on simulated series with seeds disjoint from the
# calibration study's (docs/engine.md, "The calibration study")
MISFIT_Z = 1.96
# the share of the noise variance's posterior above the bound of its draws (module docstring)
VARIANCE_TAIL = 0.001
_LOG_FLOOR, _LOG_CEILING = math.log(RATE_FLOOR), math.log(RATE_CEILING)

# (cores, repetition values); a figure without repetitions gives its one value
Counts = Sequence[tuple[int, Sequence[float]]]


def quantile(xs: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` (linear between order statistics)."""
    s = sorted(xs)
    if not s:
        raise ValueError("no values")
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def too_few_runs(reps: Sequence[Sequence[float]]) -> int:
    """The fewest repetitions among these points' when fewer than :data:`MIN_CLAIM_RUNS`:
    a confidence resting on them is not claimed (the answer says what to measure); else 0.
    A point without repetitions (reference data, a predicted figure) does not count."""
    fewest = min((len(r) for r in reps if r), default=0)
    return fewest if fewest < MIN_CLAIM_RUNS else 0


def _exact3(points: Sequence[tuple[int, float]]) -> tuple[float, float, float] | None:
    """The USL through three points exactly, when its σ, κ ≥ 0 (else None).

    λ·N/X(N) − σ(N−1) − κN(N−1) = 1 is linear in (λ, σ, κ): three points, three equations.
    """
    rows = [[n / x, -(n - 1.0), -(n * (n - 1.0))] for n, x in points]
    got = solve3(rows, [1.0, 1.0, 1.0], tiny=1e-15)
    if got is None:
        return None
    lam, sigma, kappa = got
    tol = 1e-12
    if lam <= 0.0 or sigma < -tol or kappa < -tol:
        return None
    return lam, max(0.0, sigma), max(0.0, kappa)


def fit_near(
    points: Sequence[tuple[int, float]], lam0: float, free: bool = False
) -> tuple[float, float, float]:
    """The constrained least-squares USL fit (λ, σ, κ) of ``points``, searching λ near
    ``lam0`` (a bootstrap draw lies near the full data's fit): exact through three points
    when that is feasible, else a coarser λ search than the full fit's, then refined;
    ``free``: σ and κ of any sign (:func:`free_fit`)."""
    if free:
        got = free_fit(points)
        if got is not None:
            return got
    if len(points) == 3:
        got = _exact3(points)
        if got is not None:
            return got
    law = Law(points)
    lo = max(0.8 * max(x / n for n, x in points), 0.6 * lam0)
    hi = max(lo * 1.05, 1.8 * lam0)
    lam = search_lambda(law, lo, hi, steps=24, iters=30)
    s, k = law.sigma_kappa(lam)
    return refine(points, lam, s, k)


def free_fit(points: Sequence[tuple[int, float]]) -> tuple[float, float, float] | None:
    """The USL with σ and κ of any sign, in closed form (None: degenerate, or λ ≤ 0).

    N/X(N) = a + b(N−1) + cN(N−1) with a = 1/λ, b = σ/λ, c = κ/λ is linear in (a, b, c):
    least squares weighted by (X/N)², i.e. in relative error; exact through three points.
    """
    rows = [(1.0, n - 1.0, n * (n - 1.0), n / x, (x / n) ** 2) for n, x in points]
    ata = [[sum(r[i] * r[j] * r[4] for r in rows) for j in range(3)] for i in range(3)]
    atb = [sum(r[i] * r[3] * r[4] for r in rows) for i in range(3)]
    scale = max(abs(v) for row in ata for v in row)
    got = solve3(ata, atb, tiny=1e-14 * scale)
    if got is None or got[0] <= 0.0:
        return None
    a, b, c = got
    return 1.0 / a, b / a, c / a


def _seed(counts: Counts) -> int:
    import hashlib  # lazily: only series with repetitions are keyed (reference data never)

    text = ";".join(f"{n}:" + ",".join(f"{v:.6g}" for v in vs) for n, vs in sorted(counts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


METHOD = "posterior-4"  # a cached draw made by another method is never read back


def data_key(counts: Counts) -> str:
    """A stable key of a series' repetitions and the method that draws from them (for
    caching its draws)."""
    return f"{METHOD}:{_seed(counts):016x}"


@dataclass(frozen=True)
class Bootstrap:
    """The draws of one series (see the module docstring).

    ``counts`` are the core counts in order; ``medians[b][i]`` is draw ``b``'s median at
    ``counts[i]``; ``params[b]`` its (λ, σ, κ) (empty with fewer than three counts).
    """

    counts: tuple[int, ...]
    medians: tuple[tuple[float, ...], ...] = ()
    params: tuple[tuple[float, float, float], ...] = ()
    spread: tuple[float, ...] = ()  # per draw: its log-widening per doubling of distance
    # the curve's draws already made, per core count: one bootstrap serves every series
    # built on its data in one command (recommend, its platform comparison and its table)
    _curves: dict[int, tuple[float, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _points: dict[int, tuple[float, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # the figures already made by each series built on it, by the series (equal series,
    # rebuilt by another call of the engine in the same command, share them)
    _made: dict[Any, dict[Any, Any]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @property
    def empty(self) -> bool:
        """No repetitions to resample: no draws."""
        return not self.medians

    def point_draws(self, cores: int) -> tuple[float, ...] | None:
        """The draws of the median at a measured core count."""
        if self.empty or cores not in self.counts:
            return None
        got = self._points.get(cores)
        if got is None:
            i = self.counts.index(cores)
            got = self._points[cores] = tuple(m[i] for m in self.medians)
        return got

    def distance(self, cores: int) -> float:
        """Doublings from ``cores`` to the nearest measured count (0 inside them)."""
        lo, hi = min(self.counts), max(self.counts)
        if cores > hi:
            return math.log2(cores / hi)
        if cores < lo:
            return math.log2(lo / cores)
        return 0.0

    def curve_draws(self, cores: int) -> tuple[float, ...] | None:
        """The draws of X(cores) under the law (None: no law was fitted), widened with
        distance from the measured counts and each held to its own linear bound."""
        if not self.params:
            return None
        got = self._curves.get(cores)
        if got is None:
            spread = self.spread or (0.0,) * len(self.params)
            got = curve_at(
                cores, self.distance(cores), self.params, self._per_core, spread, self._falls
            )
            self._curves[cores] = got
        return got

    def memo_of(self, series: Any) -> dict[Any, Any]:
        """The memo of what ``series`` (a :class:`sizing.engine.series.Series` on these
        draws) has made: shared by every equal series while this bootstrap lives (one
        command: recommend's answers, its platform comparison and its table build the same
        series again); a series that cannot be hashed keeps its own."""
        try:
            return self._made.setdefault(series, {})
        except TypeError:
            return {}

    @functools.cached_property
    def _falls(self) -> Falls:
        """Where each draw's law falls away (:class:`~sizing.engine.lawdraw.Falls`)."""
        return Falls(self.params)

    @functools.cached_property
    def _per_core(self) -> tuple[float, ...]:
        """Per draw, its best per-core median: N times it is the draw's linear bound."""
        return tuple(max(x / n for x, n in zip(m, self.counts, strict=True)) for m in self.medians)

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": list(self.counts),
            "medians": [list(m) for m in self.medians],
            "params": [list(p) for p in self.params],
            "spread": list(self.spread),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Bootstrap:
        return cls(
            counts=tuple(int(n) for n in data["counts"]),
            medians=tuple(tuple(float(v) for v in m) for m in data["medians"]),
            params=tuple((float(p[0]), float(p[1]), float(p[2])) for p in data["params"]),
            spread=tuple(float(w) for w in data["spread"]),
        )


def _pooled(data: Sequence[tuple[int, tuple[float, ...]]]) -> tuple[float, int]:
    """The pooled within-count variance of the logs and its degrees of freedom."""
    ss, df = 0.0, 0
    for _, vs in data:
        logs = [math.log(v) for v in vs]
        mean = sum(logs) / len(logs)
        ss += sum((y - mean) ** 2 for y in logs)
        df += len(logs) - 1
    # identical repetitions still leave the rate's last digit unknown
    return max(ss / df, 1e-8) if df else 0.0, df


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """A small linear system by Gaussian elimination with partial pivoting (None: singular)."""
    k = len(b)
    m = [row[:] + [v] for row, v in zip(a, b, strict=True)]
    scale = max((abs(v) for row in a for v in row), default=0.0)
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) <= 1e-14 * scale:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(k):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][k] / m[i][i] for i in range(k)]


def log_rss(points: Sequence[tuple[int, float]]) -> float:
    """The least squared log residual of the law with σ, κ ≥ 0 through ``points``.

    N/X(N) = a + b(N−1) + cN(N−1) (a = 1/λ, b = σ/λ, c = κ/λ) is linear: weighted by
    (X/N)² its least squares is the relative (≈ log) one. The constrained optimum is one of
    the fits with σ, κ or both held at 0 (or none): the least residual among the feasible.
    """
    best = math.inf
    for terms in ((0, 1, 2), (0, 1), (0, 2), (0,)):
        rows = [((1.0, n - 1.0, n * (n - 1.0)), n / x, (x / n) ** 2) for n, x in points]
        ata = [[sum(f[i] * f[j] * w for f, _, w in rows) for j in terms] for i in terms]
        atb = [sum(f[i] * y * w for f, y, w in rows) for i in terms]
        got = _solve(ata, atb)
        if got is None or got[0] <= 0.0 or any(v < 0.0 for v in got[1:]):
            continue
        coef = dict(zip(terms, got, strict=True))
        rss = 0.0
        for f, y, _ in rows:
            d = sum(coef.get(i, 0.0) * f[i] for i in range(3))
            rss += math.log(d / y) ** 2 if d > 0.0 else math.inf
        best = min(best, rss)
    return best


def _misfit(data: Sequence[tuple[int, tuple[float, ...]]], noise: float) -> float:
    """The law's log residual variance beyond the noise, or 0 where the noise explains it.

    Three counts leave the law no residual, except where σ, κ ≥ 0 cannot pass through them
    (a step faster than linear): that residual counts as one degree of freedom's worth. The
    residual per degree of freedom is compared with the noise of a count's mean by an
    F(1, df) test at 95% (:data:`MISFIT_Z`): below it, noise alone makes such residuals
    (counted anyway, they made a stated 95% hold 98.9% on the simulated series the
    level was chosen on, 97.2% with the test); above it the
    excess over the noise is a variance of its own.
    """
    if len(data) < MIN_POINTS:
        return 0.0
    means = [(n, math.exp(sum(math.log(v) for v in vs) / len(vs))) for n, vs in data]
    per = log_rss(means) / max(1, len(data) - MIN_POINTS)
    seen = noise * sum(1.0 / len(vs) for _, vs in data) / len(data)
    df = sum(len(vs) - 1 for _, vs in data)
    if not math.isfinite(per) or per <= f1_crit(df, MISFIT_Z) * seen:
        return 0.0
    return per - seen


def f1_crit(df: int, z: float) -> float:
    """F(1, df) quantile as t(df)² via the Cornish-Fisher expansion of t at normal z."""
    if df <= 0:
        return math.inf
    t = (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )
    return t * t


@functools.cache
def chi2_low(df: int, p: float) -> float:
    """The lower ``p`` quantile of χ²(df): bisection in logs on its distribution function,
    the regularised lower incomplete gamma P(df/2, x/2) by its series (which converges
    for every x)."""
    a = df / 2.0

    def cdf(x: float) -> float:
        h = x / 2.0
        term = total = 1.0 / a
        j = 0
        while term > total * 1e-16:
            j += 1
            term *= h / (a + j)
            total += term
        return math.exp(a * math.log(h) - h - math.lgamma(a)) * total

    lo, hi = math.log(1e-300), math.log(df + 10.0 * math.sqrt(df) + 10.0)
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if cdf(math.exp(mid)) < p else (lo, mid)
    return math.exp(hi)


# How a series' bootstrap is had: computed, or read from a cache (sizing.sources.fitcache).
Bootstrapper = Callable[[Counts], Bootstrap]


def remembering(make: Bootstrapper) -> Bootstrapper:
    """``make``, remembered by the data it is given, for as long as the returned function
    lives (one call of the engine, or one command: no state outlives its owner)."""
    made: dict[str, Bootstrap] = {}

    def boot(counts: Counts) -> Bootstrap:
        key = data_key(counts)
        if key not in made:
            made[key] = make(counts)
        return made[key]

    return boot


def bootstrap(counts: Counts, draws: int = DRAWS) -> Bootstrap:
    """Draw the series' predictive distribution ``draws`` times (module docstring).
    Empty when no count has two or more repetitions."""
    import random  # lazily (start-up time): only computing draws needs it

    data = sorted((int(n), tuple(float(v) for v in vs)) for n, vs in counts if vs)
    ns = tuple(n for n, _ in data)
    if not data or all(len(vs) < 2 for _, vs in data) or any(v <= 0 for _, vs in data for v in vs):
        return Bootstrap(ns)
    rng = random.Random(_seed(data))
    noise, df = _pooled(data)
    least = chi2_low(df, VARIANCE_TAIL)
    misfit = _misfit(data, noise)
    logs = [sum(math.log(v) for v in vs) / len(vs) for _, vs in data]
    law = len(data) >= MIN_POINTS
    lam0 = 0.0
    if law:
        full = fit([(n, math.exp(y)) for (n, _), y in zip(data, logs, strict=True)])
        lam0 = full.lam or max(math.exp(y) / n for (n, _), y in zip(data, logs, strict=True))
    medians: list[tuple[float, ...]] = []
    params: list[tuple[float, float, float]] = []
    spread: list[float] = []
    for _ in range(draws):
        # σ² | data: scaled inverse χ², bounded at its 99.9% quantile (module docstring)
        v = noise * df / max(rng.gammavariate(df / 2.0, 2.0), least)
        mu = tuple(
            math.exp(
                min(
                    _LOG_CEILING,
                    max(_LOG_FLOOR, y + rng.gauss(0.0, 1.0) * math.sqrt(v / len(vs) + misfit)),
                )
            )
            for (_, vs), y in zip(data, logs, strict=True)
        )
        medians.append(mu)
        if law:
            # σ and κ free in a draw: held at ≥ 0 the draws could not reach above a fit
            # that leans to contention (κ small but uncertain, not forced to 0)
            params.append(fit_near(list(zip(ns, mu, strict=True)), lam0, free=True))
            spread.append(rng.gauss(0.0, 1.0) * (math.sqrt(v) + math.sqrt(misfit)))
    return Bootstrap(ns, tuple(medians), tuple(params), tuple(spread))
