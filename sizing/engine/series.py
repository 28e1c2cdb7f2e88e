"""A series: the observed figures of one basis, platform, HT mode and profile, their
scaling fit, and every figure the engine gives at a core count (observed, interpolated,
scaled with a borrowed shape, extrapolated), each with what its interval covers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.ceilings import Bound
from sizing.engine.beyond_socket import beyond_socket
from sizing.engine.htjoint import scaled
from sizing.engine.overhead import HtGain
from sizing.engine.predict import (
    DRAWS,
    HIGH_Q,
    LOW_Q,
    Bootstrap,
    quantile,
)
from sizing.engine.reach import envelope, floor_figure, lower_counts, raised_to
from sizing.engine.scaling import MIN_POINTS, ScalingFit
from sizing.engine.series_shape import (
    Shape,
    borrowed,
    counts_of,
    fit_of,
    rel_interval,
    series_points,
    usable_bound,
    usable_point,
)
from sizing.engine.seriesdraws import enveloped_draws, raw_draws
from sizing.model import OBSERVED, Figure, FigureKind

__all__ = ["Series", "Shape", "Unsized", "counts_of", "fit_of", "series_points", "usable_point"]

SeriesKey = tuple[str, str, str]  # platform, ht, profile


class Unsized(ValueError):
    """A figure the engine refuses to make up; the message says why and what to do."""


def _q(draws: Sequence[float]) -> tuple[float, float]:
    return quantile(draws, LOW_Q), quantile(draws, HIGH_Q)


BOOT_WORDS = (
    f"95% prediction interval ({DRAWS} draws: the runs' noise and its uncertainty, "
    "the law's misfit, the distance from the measured counts)"
)


@dataclass(frozen=True)
class Series:
    """The observed figures of one basis × platform × HT × profile and their scaling fit.

    ``origin`` is ``measured`` or ``reference`` (:meth:`to_dict` also writes it as ``basis``,
    the key's old name, which JSON readers of ``table --json`` may still read);
    ``basis_id`` the :class:`~sizing.engine.basis.Basis` id (``""`` for figures without one);
    ``boot`` the bootstrap over its repetitions (:mod:`sizing.engine.predict`).
    """

    platform: str
    ht: str
    profile: str
    origin: str
    observed: tuple[Figure, ...]
    fit: ScalingFit
    basis_id: str = ""
    shape: Shape | None = None
    allow_extrapolation: bool = False
    boot: Bootstrap | None = None
    bounds: tuple[Bound, ...] = ()  # physical ceilings (sizing.ceilings): crypto, NIC
    socket_cores: int | None = None  # cores of one socket of a multi-socket host (else None)
    # one model for HT (sizing.engine.htjoint): the other HT mode's series and this one's
    # measured gain over it; predictions are its predictions times the gain
    partner: Series | None = None
    gain: HtGain | None = None
    # figures and draws already made, per core count (one series, one command)
    _memo: dict[tuple[str, int], Any] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.boot is not None:  # equal series of one command share what they made
            object.__setattr__(self, "_memo", self.boot.memo_of(self))

    @property
    def key(self) -> SeriesKey:
        return (self.platform, self.ht, self.profile)

    @property
    def name(self) -> str:
        return self.basis_id or f"the {self.origin} {self.platform} figures"

    @property
    def exact(self) -> tuple[Figure, ...]:
        """The observed figures a fit may use (lower bounds and erratic points excluded)."""
        return tuple(f for f in self.observed if usable_point(f))

    @property
    def linear_cap_per_core(self) -> float:
        """The best measured per-core figure: linear scaling from it is the optimistic
        bound no prediction exceeds."""
        return max((f.value / f.cores for f in self.exact), default=0.0)

    def cap(self, cores: int) -> float:
        """What no prediction at ``cores`` exceeds: linear scaling from the best measured
        per-core figure, and every physical ceiling of the series (crypto, NIC)."""
        limits = [b.at(cores) for b in self.bounds]
        return min([cores * self.linear_cap_per_core, *(x for x in limits if x is not None)])

    def limit(self, cores: int) -> float:
        """What the truth at ``cores`` cannot exceed: the physical ceilings (crypto, NIC)
        only. Linear scaling from the measured medians bounds the estimate, not the truth
        (a median may be below it): the draws carry their own linear bound."""
        return min((x for b in self.bounds if (x := b.at(cores)) is not None), default=math.inf)

    def binding(self, cores: int, value: float) -> Bound | None:
        """The physical ceiling a prediction of ``value`` was held down by (None: none was,
        or linear scaling bound first)."""
        linear = cores * self.linear_cap_per_core
        for b in self.bounds:
            limit = b.at(cores)
            if limit is not None and limit < linear and value >= limit * (1 - 1e-9):
                return b
        return None

    def at(self, cores: int) -> Figure:
        """The figure at ``cores`` (see :meth:`estimate`); :class:`Unsized` if refused."""
        got = self.estimate(cores)
        if isinstance(got, str):
            raise Unsized(got)
        return got

    def estimate(self, cores: int) -> Figure | str:
        """The figure at ``cores``, observed or predicted (module docstring), or why it is
        refused; then the HT and socket rules (:mod:`~sizing.engine.htjoint`, `socket`);
        never less, at either end, than a smaller count carries (:mod:`.reach`)."""
        got = self._raw(cores)
        if isinstance(got, str) or got.source in OBSERVED:
            return got  # an observed figure is never raised: no smaller count is asked
        smaller = [g for m in lower_counts(cores) if isinstance(g := self._raw(m), Figure)]
        return envelope(got, smaller)

    def _raw(self, cores: int) -> Figure | str:
        key = ("figure", cores)
        if key not in self._memo:
            self._memo[key] = self._ruled(cores)
        got: Figure | str = self._memo[key]
        return got

    def _ruled(self, cores: int) -> Figure | str:
        got = self._estimate(cores)
        if self.partner is not None and self.gain is not None:
            got = scaled(got, cores, self.gain, self.partner.estimate, self.cap(cores))
        return beyond_socket(
            got,
            cores=cores,
            socket_cores=self.socket_cores,
            at=self._estimate,
            measured_top=max((f.cores for f in self.exact), default=0),
            allow=self.allow_extrapolation,
            name=self.name,
        )

    def _estimate(self, cores: int) -> Figure | str:
        for f in self.observed:
            if f.cores != cores:
                continue
            if f.lower_bound and f.source == FigureKind.MEASURED and self._exact_below(cores):
                # a measured bound is the least the truth can be, not the figure: the
                # series' own rule for this count, raised to it where it says less
                return raised_to(self._past(cores), f)
            if "erratic" in f.flags and not f.lower_bound:
                return (
                    f"the {cores}-core figure of {self.name} is erratic (a repetition below "
                    "half or above twice its median): re-measure it"
                )
            return f
        return self._past(cores)

    def _exact_below(self, cores: int) -> bool:
        return any(e.cores < cores for e in self.exact)

    def _past(self, cores: int) -> Figure | str:
        """The figure at ``cores`` from the other counts (no figure observed at it)."""
        exact = sorted(self.exact, key=lambda f: f.cores)
        if not exact:  # a lower bound is a floor too, never a reason to refuse (ENGINE)
            if any(f.cores < cores and usable_bound(f) for f in self.observed):
                return floor_figure(self.observed, exact, cores, self.name)
            return f"only lower bounds or erratic points measured on {self.name}"
        lo, hi = exact[0], exact[-1]
        cap = self.cap(cores)
        if lo.cores <= cores <= hi.cores or self._upper_bound_above(cores) is not None:
            a, b = self._neighbours(exact, cores)
            return self._interpolate(a, b, cores, cap)
        if cores > hi.cores and not self.allow_extrapolation:
            return floor_figure(self.observed, exact, cores, self.name)
        anchor = hi if cores > hi.cores else lo
        counts = sorted({f.cores for f in exact})
        far = 2 * cores < lo.cores
        if self.fit.usable:
            if far and not self.allow_extrapolation:
                return (
                    f"no figure at {cores} cores on {self.name}: below half the smallest "
                    f"measured count ({counts[0]}-{counts[-1]} cores); measure closer, or pass "
                    "--allow-extrapolation to predict it with its widened interval"
                )
            return self._extrapolate(anchor, cores, cap)
        if len(counts) < MIN_POINTS and self.shape is not None:
            got = self._borrow(exact, anchor, cores, cap)
            if got is not None and (isinstance(got, Figure) or cores < hi.cores):
                return got
        if cores > hi.cores:  # asked to extrapolate, nothing to do it with: the floor
            return floor_figure(self.observed, exact, cores, self.name)
        listed = ", ".join(str(n) for n in counts)
        if len(counts) == 1:
            what = f"only 1 core count ({listed}) measured on {self.name}"
        else:
            what = f"only {len(counts)} core counts ({listed}) measured on {self.name}"
        return (
            f"{what}: no scaling law to predict other core counts with (it needs {MIN_POINTS}) "
            "and no non-emulated basis of the same workload to borrow a shape from; measure "
            f"{MIN_POINTS} or more core counts (e.g. `sizing run --cores 1,2,4,8`)"
        )

    def _upper_bound_above(self, cores: int) -> Figure | None:
        """The nearest lower-bound figure (e.g. client-bound) above ``cores`` with no
        exact figure between: the upper neighbour an interpolation takes as a floor."""
        above = [f for f in self.observed if f.cores > cores and "erratic" not in f.flags]
        if not above or not min(above, key=lambda f: f.cores).lower_bound:
            return None
        return min(above, key=lambda f: f.cores)

    def _neighbours(self, exact: Sequence[Figure], cores: int) -> tuple[Figure, Figure]:
        """The interpolation's neighbours: the exact figure at or below ``cores`` and the
        nearest figure above it, exact or a lower bound (lower bounds below ``cores`` are
        never an anchor)."""
        a = max((f for f in exact if f.cores <= cores), key=lambda f: f.cores)
        if a.cores == cores:
            return a, a
        b = self._upper_bound_above(cores)
        return (a, b) if b is not None else _neighbours(exact, cores)

    def _interpolate(self, a: Figure, b: Figure, cores: int, cap: float) -> Figure:
        t = 0.0 if b.cores == a.cores else (cores - a.cores) / (b.cores - a.cores)
        line = min(a.value + (b.value - a.value) * t, cap)
        value = min(self.fit.predict(cores) if self.fit.usable else line, cap)
        if b.lower_bound:
            # the line to a lower bound is a lower bound of the line to the truth, which a
            # concave curve stays above: a fit below it is contradicted by the bound
            value = max(value, line)
        draws = self.draws(cores)
        how = "USL fit" if self.fit.usable else "line between the measured core counts"
        to = (
            f"the straight line to the {b.cores}-core lower bound"
            if b.lower_bound
            else ("the straight line")
        )
        low: float | None
        high: float | None
        if draws:
            low, high = _q(draws)
            words = BOOT_WORDS
        elif self.fit.usable:
            low, high = min(line, value), max(line, value)
            words = f"no repetitions: between {to} and the fit"
        else:
            low = high = None
            words = "no repetitions: no interval"
        return self._derived(
            a,
            cores,
            value,
            FigureKind.INTERPOLATED,
            f"{how} of {self.name}",
            (low, high),
            words,
            cap,
            nearest=(a, b),
            other=None if b.lower_bound else b,
        )

    def _extrapolate(self, anchor: Figure, cores: int, cap: float) -> Figure:
        value = min(self.fit.predict(cores), cap)
        draws = self.draws(cores)
        if draws:
            low, high = _q(draws)
            words = BOOT_WORDS
        elif cores > anchor.cores:
            # no repetitions (reference data): from "no gain beyond the last measured
            # count" to the fit
            # a lower bound measured on the way (client-bound) is the least "no gain" keeps
            last = max(
                (
                    f
                    for f in self.observed
                    if f.lower_bound
                    and "erratic" not in f.flags
                    and anchor.cores < f.cores <= cores
                ),
                key=lambda f: f.cores,
                default=anchor,
            )
            floor = max(anchor.value, last.value)
            low, high = min(floor, value), value
            words = f"no repetitions: from no gain beyond {last.cores} cores to the fit"
        else:
            low, high = min(value, anchor.value * cores / anchor.cores), value
            words = f"no repetitions: from linear down from {anchor.cores} cores to the fit"
        origin = f"USL fit of {self.name}"
        if self.fit.misfit:
            origin += f" ({self.fit.note})"
        return self._derived(
            anchor,
            cores,
            value,
            FigureKind.EXTRAPOLATED,
            origin,
            (low, high),
            words,
            cap,
            nearest=(anchor,),
            extra_flags=("misfit",) if self.fit.misfit else (),
        )

    def _borrow(
        self, exact: Sequence[Figure], anchor: Figure, cores: int, cap: float
    ) -> Figure | str | None:
        shape = self.shape
        assert shape is not None
        if cores > 2 * shape.top and not self.allow_extrapolation:
            return (
                f"no figure at {cores} cores on {self.name}: the shape it would borrow "
                f"({shape.basis}) was measured only up to {shape.top} cores; pass "
                "--allow-extrapolation to use it beyond twice that"
            )
        got = borrowed(shape, exact, anchor, cores, cap)
        if got is None:
            return None
        value, (low, high), fitted, words = got
        return self._derived(
            anchor,
            cores,
            value,
            FigureKind.SHAPE,
            f"shape from {shape.basis} ({fitted})",
            (low, high),
            words,
            cap,
            nearest=(anchor,),
        )

    def draws(self, cores: int) -> tuple[float, ...] | None:
        """The draws at ``cores`` (:func:`~sizing.engine.seriesdraws.raw_draws`), each
        never below the same draw at a smaller count (:mod:`.reach`)."""
        return enveloped_draws(self, cores)

    def _draws_at(self, cores: int) -> tuple[float, ...] | None:
        key = ("draws", cores)
        if key not in self._memo:
            self._memo[key] = raw_draws(self, cores)
        got: tuple[float, ...] | None = self._memo[key]
        return got

    def _derived(
        self,
        anchor: Figure,
        cores: int,
        value: float,
        source: str,
        origin: str,
        bounds: tuple[float | None, float | None],
        words: str,
        cap: float,
        *,
        nearest: Sequence[Figure] = (),
        other: Figure | None = None,
        extra_flags: tuple[str, ...] = (),
    ) -> Figure:
        """A predicted figure: never above the linear cap, never below zero, and its
        interval never narrower (relatively) than the nearest measured figure's."""
        flags = tuple(
            dict.fromkeys(
                g
                for g in anchor.flags + (other.flags if other else ()) + extra_flags
                if g not in ("drift", "erratic")
            )
        )
        value = max(0.0, min(value, cap))
        if anchor.source == FigureKind.TRANSLATED:  # a prediction on translated figures says so
            origin = f"{origin}, on figures {anchor.origin}"
        bound = self.binding(cores, value)
        if bound is not None:
            flags = (*flags, "ceiling-bound")
            origin = f"{origin}; bound by {bound.words(cores)}"
        low, high = bounds
        if low is not None and high is not None:
            widen_lo = max((rel_interval(f)[0] for f in nearest), default=0.0)
            widen_hi = max((rel_interval(f)[1] for f in nearest), default=0.0)
            low = max(0.0, min(low, value, value * (1.0 - widen_lo)))
            high = min(self.limit(cores), max(high, value, value * (1.0 + widen_hi)))
        bootstrapped = words == BOOT_WORDS
        return replace(
            anchor,
            cores=cores,
            value=value,
            source=source,
            origin=origin,
            ci_low=low,
            ci_high=high,
            bound="",
            flags=flags,
            reps=(),
            coverage=0.95 if bootstrapped else None,
            interval=words,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis_id": self.basis_id,
            "platform": self.platform,
            "ht": self.ht,
            "profile": self.profile,
            "basis": self.origin,  # the old name of "origin", kept in the JSON for its readers
            "origin": self.origin,
            "observed_cores": [f.cores for f in self.observed],
            "lower_bound_cores": [f.cores for f in self.observed if f.lower_bound],
            "fit": self.fit.to_dict(),
            "shape_from": None if self.shape is None else self.shape.basis,
            "linear_cap_per_core": round(self.linear_cap_per_core, 3),
            "bounds": [b.to_dict() for b in self.bounds],
            "bootstrap_draws": 0 if self.boot is None else len(self.boot.medians),
        }


def _neighbours(exact: Sequence[Figure], cores: int) -> tuple[Figure, Figure]:
    """The measured figures at or just below and at or just above ``cores`` (inside)."""
    a = max((f for f in exact if f.cores <= cores), key=lambda f: f.cores)
    b = min((f for f in exact if f.cores >= cores), key=lambda f: f.cores)
    return a, b
