"""A series: the observed figures of one basis, platform, HT mode and profile, their
scaling fit, and every figure the engine gives at a core count (observed, interpolated,
scaled with a borrowed shape, extrapolated), each with what its interval covers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sizing.ceilings import Bound
from sizing.engine.htjoint import HtGain, scaled
from sizing.engine.predict import (
    DRAWS,
    HIGH_Q,
    LOW_Q,
    Bootstrap,
    Counts,
    bootstrap,
    data_key,
    quantile,
)
from sizing.engine.scaling import MIN_POINTS, ScalingFit, fit
from sizing.engine.shape import Shape
from sizing.engine.socket import beyond_socket, crosses
from sizing.model import Figure, FigureKind

SHAPE_FLOOR = 0.10  # added to a borrowed shape's relative half-width

SeriesKey = tuple[str, str, str]  # platform, ht, profile

_MEMO: dict[str, Bootstrap] = {}



class Unsized(ValueError):
    """A figure the engine refuses to make up; the message says why and what to do."""


def _rel(f: Figure) -> tuple[float, float]:
    """A figure's interval relative to its value: (low, high) fractions below/above."""
    if f.ci_low is None or f.ci_high is None or f.value <= 0.0:
        return 0.0, 0.0
    return max(0.0, 1.0 - f.ci_low / f.value), max(0.0, f.ci_high / f.value - 1.0)


def _q(draws: Sequence[float]) -> tuple[float, float]:
    return quantile(draws, LOW_Q), quantile(draws, HIGH_Q)


BOOT_WORDS = f"95% bootstrap prediction interval ({DRAWS} draws over the repetitions)"


@dataclass(frozen=True)
class Series:
    """The observed figures of one basis × platform × HT × profile and their scaling fit.

    ``origin`` is ``measured`` or ``reference`` (``basis`` is kept as its old name);
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

    @property
    def basis(self) -> str:
        """The series' origin, ``measured`` or ``reference`` (the old name)."""
        return self.origin

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
        """The figure at ``cores``, observed or predicted (module docstring), or the
        reason it is refused; beyond one socket of data measured within one socket, the
        socket rule (:mod:`sizing.engine.socket`) labels, widens or refuses it."""
        got = self._estimate(cores)
        if self.partner is not None and self.gain is not None:
            got = scaled(got, cores, self.gain, self.partner.estimate, self.cap(cores))
        top = max((f.cores for f in self.exact), default=0)
        if not crosses(self.socket_cores, top, cores):
            return got
        assert self.socket_cores is not None
        return beyond_socket(got, cores=cores, socket_cores=self.socket_cores,
                             measured_top=top, at_socket=self._estimate(self.socket_cores),
                             allow=self.allow_extrapolation, name=self.name)  # fmt: skip

    def _estimate(self, cores: int) -> Figure | str:
        for f in self.observed:
            if f.cores == cores:
                if "erratic" in f.flags and not f.lower_bound:
                    return (
                        f"the {cores}-core figure of {self.name} is erratic (a repetition below "
                        "half or above twice its median): re-measure it"
                    )
                return f
        exact = sorted(self.exact, key=lambda f: f.cores)
        if not exact:
            return f"only lower bounds or erratic points measured on {self.name}"
        lo, hi = exact[0], exact[-1]
        cap = self.cap(cores)
        if lo.cores <= cores <= hi.cores:
            return self._interpolate(exact, cores, cap)
        anchor = hi if cores > hi.cores else lo
        counts = sorted({f.cores for f in exact})
        far = cores > 2 * hi.cores or 2 * cores < lo.cores
        if self.fit.usable:
            if far and not self.allow_extrapolation:
                return (
                    f"no figure at {cores} cores on {self.name}: more than twice beyond the "
                    f"measured {counts[0]}-{counts[-1]} cores; measure closer, or pass "
                    "--allow-extrapolation to predict it with its widened interval"
                )
            return self._extrapolate(anchor, cores, cap)
        if len(counts) < MIN_POINTS and self.shape is not None:
            got = self._borrow(exact, anchor, cores, cap)
            if got is not None:
                return got
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

    def _interpolate(self, exact: Sequence[Figure], cores: int, cap: float) -> Figure:
        a, b = _neighbours(exact, cores)
        t = (cores - a.cores) / (b.cores - a.cores)
        line = a.value + (b.value - a.value) * t
        value = min(self.fit.predict(cores) if self.fit.usable else line, cap)
        draws = self.draws(cores)
        how = "USL fit" if self.fit.usable else "line between the measured core counts"
        low: float | None
        high: float | None
        if draws:
            low, high = _q(draws)
            words = BOOT_WORDS
        elif self.fit.usable:
            low, high = min(line, value), max(line, value)
            words = "no repetitions: between the straight line and the fit"
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
            other=b,
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
            low, high = min(anchor.value, value), value
            words = f"no repetitions: from no gain beyond {anchor.cores} cores to the fit"
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
        ratio = shape.ratio(anchor.cores, cores)
        if ratio is None:
            return None
        value = min(anchor.value * ratio, cap)
        misfit = shape.misfit(exact, anchor.cores)
        widen = SHAPE_FLOOR + (misfit or 0.0)
        r = _rel(anchor)
        low = value * max(0.0, 1.0 - r[0] - widen)
        high = value * (1.0 + r[1] + widen)
        fitted = (
            f"misfit {misfit * 100:.1f}% on the overlapping core counts"
            if misfit is not None
            else "no overlapping core count to check it on"
        )
        words = (
            f"borrowed shape: the anchor's interval widened by {widen * 100:.0f} points "
            f"({SHAPE_FLOOR * 100:.0f} for other hardware, {fitted})"
        )
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
        """The bootstrap draws of this series' capacity at ``cores`` (None: no
        repetitions to draw from): a measured count's median, the law's X(N), a line
        between two measured counts' medians, or the anchor's median times a borrowed
        shape; each capped by linear scaling from the best measured per-core figure."""
        boot = self.boot
        if boot is None or boot.empty:
            return None
        cap = self.cap(cores)
        got = boot.point_draws(cores)
        if got is not None:
            return got
        exact = sorted(self.exact, key=lambda f: f.cores)
        if not exact:
            return None
        if self.fit.usable and boot.params:
            curve = boot.curve_draws(cores)
            return None if curve is None else tuple(min(v, cap) for v in curve)
        lo, hi = exact[0], exact[-1]
        if lo.cores <= cores <= hi.cores:
            a, b = _neighbours(exact, cores)
            da, db = boot.point_draws(a.cores), boot.point_draws(b.cores)
            if da is None or db is None:
                return None
            t = (cores - a.cores) / (b.cores - a.cores)
            return tuple(min(cap, x + (y - x) * t) for x, y in zip(da, db, strict=True))
        if self.shape is not None:
            anchor = hi if cores > hi.cores else lo
            ratio = self.shape.ratio(anchor.cores, cores)
            da = boot.point_draws(anchor.cores)
            if ratio is not None and da is not None:
                return tuple(min(cap, x * ratio) for x in da)
        return None

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
            widen_lo = max((_rel(f)[0] for f in nearest), default=0.0)
            widen_hi = max((_rel(f)[1] for f in nearest), default=0.0)
            low = max(0.0, min(low, value, value * (1.0 - widen_lo)))
            high = min(cap, max(high, value, value * (1.0 + widen_hi)))
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
            "basis": self.origin,
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
        return ScalingFit(model="linear", points=(), note="only lower bounds measured")
    # the least-squares fit to every repetition, each count weighted once, is the fit to
    # the per-count means (sizing.engine.predict)
    return fit([(n, sum(vs) / len(vs)) for n, vs in counts])


def memo_bootstrap(counts: Counts) -> Bootstrap:
    """:func:`sizing.engine.predict.bootstrap`, remembered for the process."""
    key = data_key(counts)
    got = _MEMO.get(key)
    if got is None:
        got = _MEMO[key] = bootstrap(counts)
    return got
