"""Choosing the figures to size from, and the series they form.

**Sources.** ``reference`` uses the bundled published figures only; ``measured`` uses the
results store only; ``both`` uses, for each series (platform × HT mode × profile), the
measured figures when that series has any, else the reference figures. A series never
mixes measured and reference points: they come from different hardware.

**Several measurements of one configuration.** When several measured figures exist for
the same platform, core count, HT mode and profile, the last one in the input wins.
:func:`measured_figures` turns stored points into figures oldest first (the newest point's
figure per configuration), so the most recent run's figure is used.

**A series is one basis × platform × HT mode × profile** and never crosses
:attr:`Figure.basis`. A figure the series does not hold (a core count that was not
measured) comes from :meth:`Series.estimate`:

- between observed core counts: the USL fit when it is usable, else a straight line
  between the neighbours; ``source="interpolated"``, interval interpolated from theirs;
- beyond them, with a usable USL fit (≥ 3 core counts, good and not retrograde): the fit,
  ``source="extrapolated"``, relative half-width = the nearest observed figure's + the fit's
  relative error (max |observed − fit| / fit);
- beyond them with fewer than 3 core counts: the scaling *shape* of a basis with the same
  workload and ≥ 3 core counts, value(N) = value(n0) · X_ref(N) / X_ref(n0) from the nearest
  observed count n0, ``source="shape"``, origin "shape from <basis>", relative half-width =
  the figure's own + the shape basis' relative fit error + 10 percentage points (the
  borrowed curve comes from other hardware: the interval says so);
- otherwise refused with a reason (how to measure it, or ``--allow-extrapolation``);
- with ``allow_extrapolation``: the fitted model, or linear with the last efficiency when no
  USL is usable, ``source="extrapolated"``.

Lower-bound figures (``bound == "lower"``, e.g. client-bound) are shown at their own core
count as "≥ value" and are never fitted or used as an anchor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sizing.engine.basis import Basis
from sizing.engine.scaling import MIN_POINTS, ScalingFit, fit
from sizing.errors import UsageError
from sizing.model import Figure, Platform, PointResult, Status

PROFILES = ("rps", "tps")
PLATFORM_ORDER = ("baremetal", "virtualized-host", "hypervisor", "kvm", "esxi", "kubernetes")
HT_ORDER = ("off", "on")

SeriesKey = tuple[str, str, str]  # platform, ht, profile
BasisSeriesKey = tuple[str, str, str, str]  # basis id, platform, ht, profile
SHAPE_FLOOR = 0.10  # added to a borrowed shape's relative half-width


def measured_figures(
    points: Iterable[tuple[int, int, PointResult]], include_emulated: bool
) -> list[Figure]:
    """The engine's figures from stored points given as (point id, run id, result):
    valid (measured) points only, the newest point per (platform family, cores, HT,
    profile); emulated ones only when asked. Oldest first, as :func:`select` expects."""
    newest: dict[tuple[str, int, str, str], tuple[int, Figure]] = {}
    for point_id, run_id, r in points:
        if r.status is not Status.MEASURED or r.value is None:
            continue
        emulated = "emulated" in r.flags
        if emulated and not include_emulated:
            continue
        try:
            family = Platform(r.key.platform).family
        except ValueError:
            family = r.key.platform
        fig = Figure(
            platform=family,
            cores=r.key.cores,
            ht=r.key.ht,
            profile=r.key.profile,
            value=float(r.value),
            unit=r.unit,
            source="measured",
            origin=f"run {run_id}, {r.key.host}",
            emulated=emulated,
            ci_low=r.ci_low,
            ci_high=r.ci_high,
            flags=tuple(r.flags),
        )
        slot = (family, r.key.cores, r.key.ht, r.key.profile)
        if slot not in newest or newest[slot][0] <= point_id:
            newest[slot] = (point_id, fig)
    return [f for _, f in sorted(newest.values(), key=lambda t: t[0])]


def latest(figures: Iterable[Figure]) -> list[Figure]:
    """One figure per (basis, platform, cores, HT, profile): the last one given wins."""
    slots: dict[tuple[str, str, int, str, str], Figure] = {}
    for f in figures:
        slots[(f.basis, f.platform, f.cores, f.ht, f.profile)] = f
    return list(slots.values())


@dataclass(frozen=True)
class Selection:
    """The figures chosen to size from, and what they came from.

    ``source`` is what was used: ``measured``, ``reference`` or ``both``.
    """

    figures: tuple[Figure, ...]
    source: str
    measured_series: tuple[SeriesKey, ...]
    reference_series: tuple[SeriesKey, ...]


def select(measured: Sequence[Figure], reference: Sequence[Figure], source: str) -> Selection:
    """Choose figures by the ``source`` policy (see the module docstring)."""
    usable = [f for f in latest(measured) if f.profile in PROFILES]
    ref = [f for f in latest(reference) if f.profile in PROFILES]
    if source == "reference":
        chosen = ref
    elif source == "measured":
        if not usable:
            raise UsageError(
                "--source measured, but nothing usable is measured yet "
                "(run `sizing run`, or use --source reference)"
            )
        chosen = usable
    elif source == "both":
        have = {(f.platform, f.ht, f.profile) for f in usable}
        chosen = usable + [f for f in ref if (f.platform, f.ht, f.profile) not in have]
    else:
        raise UsageError(f"unknown source {source!r} (expected measured, reference or both)")
    m_keys = sorted({_key(f) for f in chosen if f.source == "measured"}, key=series_order)
    r_keys = sorted({_key(f) for f in chosen if f.source != "measured"}, key=series_order)
    used = "both" if m_keys and r_keys else ("measured" if m_keys else "reference")
    return Selection(tuple(chosen), used, tuple(m_keys), tuple(r_keys))


def _key(f: Figure) -> SeriesKey:
    return (f.platform, f.ht, f.profile)


def series_order(key: SeriesKey) -> tuple[int, int, int, str]:
    """Bare metal before hypervisor before Kubernetes, HT off before on, RPS before TPS."""
    platform, ht, profile = key
    p = PLATFORM_ORDER.index(platform) if platform in PLATFORM_ORDER else len(PLATFORM_ORDER)
    h = HT_ORDER.index(ht) if ht in HT_ORDER else len(HT_ORDER)
    q = PROFILES.index(profile) if profile in PROFILES else len(PROFILES)
    return (p, h, q, platform)


class Unsized(ValueError):
    """A figure the engine refuses to make up; the message says why and what to do."""


@dataclass(frozen=True)
class Shape:
    """The scaling shape borrowed from another basis (same workload, ≥ 3 core counts)."""

    basis: str
    fit: ScalingFit

    def x(self, cores: int) -> float | None:
        """X_ref(cores): the usable fit, else a line between its observed points."""
        if self.fit.usable:
            return self.fit.predict(cores)
        ns = [n for n, _ in self.fit.points]
        return self.fit.predict(cores) if ns and min(ns) <= cores <= max(ns) else None

    def ratio(self, n0: int, n: int) -> float | None:
        a, b = self.x(n0), self.x(n)
        return None if a is None or b is None or a <= 0.0 else b / a

    @property
    def error(self) -> float:
        return self.fit.error_at(0)


def _rel(f: Figure) -> tuple[float, float]:
    """A figure's interval relative to its value: (low, high) fractions below/above."""
    if f.ci_low is None or f.ci_high is None or f.value <= 0.0:
        return 0.0, 0.0
    return max(0.0, 1.0 - f.ci_low / f.value), max(0.0, f.ci_high / f.value - 1.0)


@dataclass(frozen=True)
class Series:
    """The observed figures of one basis × platform × HT × profile and their scaling fit.

    ``origin`` is ``measured`` or ``reference`` (``basis`` is kept as its old name);
    ``basis_id`` the :class:`~sizing.engine.basis.Basis` id (``""`` for figures without one).
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

    @property
    def basis(self) -> str:
        """The series' origin, ``measured`` or ``reference`` (the old name)."""
        return self.origin

    @property
    def key(self) -> SeriesKey:
        return (self.platform, self.ht, self.profile)

    @property
    def full_key(self) -> BasisSeriesKey:
        return (self.basis_id, self.platform, self.ht, self.profile)

    @property
    def name(self) -> str:
        return self.basis_id or f"the {self.origin} {self.platform} figures"

    @property
    def exact(self) -> tuple[Figure, ...]:
        """The observed figures a fit may use (lower bounds excluded)."""
        return tuple(f for f in self.observed if not f.lower_bound)

    def at(self, cores: int) -> Figure:
        """The figure at ``cores`` (see :meth:`estimate`); :class:`Unsized` if refused."""
        got = self.estimate(cores)
        if isinstance(got, str):
            raise Unsized(got)
        return got

    def estimate(self, cores: int) -> Figure | str:
        """The figure at ``cores``, observed or derived (module docstring), or the reason
        it is refused."""
        for f in self.observed:
            if f.cores == cores:
                return f
        exact = sorted(self.exact, key=lambda f: f.cores)
        if not exact:
            return f"only lower bounds measured on {self.name}"
        lo, hi = exact[0], exact[-1]
        if lo.cores <= cores <= hi.cores:
            a = max((f for f in exact if f.cores <= cores), key=lambda f: f.cores)
            b = min((f for f in exact if f.cores >= cores), key=lambda f: f.cores)
            t = (cores - a.cores) / (b.cores - a.cores)
            value = (
                self.fit.predict(cores) if self.fit.usable else a.value + (b.value - a.value) * t
            )
            ra, rb = _rel(a), _rel(b)
            rel = (ra[0] + (rb[0] - ra[0]) * t, ra[1] + (rb[1] - ra[1]) * t)
            how = "USL fit" if self.fit.usable else "line between the measured core counts"
            return self._derived(a, cores, value, "interpolated", f"{how} of {self.name}", rel, b)
        anchor = hi if cores > hi.cores else lo
        r = _rel(anchor)
        counts = sorted({f.cores for f in exact})
        if self.fit.usable:
            err = self.fit.error_at(cores)
            origin = f"USL fit of {self.name}"
            value = self.fit.predict(cores)
            return self._derived(
                anchor, cores, value, "extrapolated", origin, (r[0] + err, r[1] + err)
            )
        if len(counts) < MIN_POINTS and self.shape is not None:
            ratio = self.shape.ratio(anchor.cores, cores)
            if ratio is not None:
                extra = self.shape.error + SHAPE_FLOOR
                rel = (min(0.99, r[0] + extra), r[1] + extra)
                origin = f"shape from {self.shape.basis}"
                return self._derived(anchor, cores, anchor.value * ratio, "shape", origin, rel)
        if self.allow_extrapolation:
            origin = f"{self.fit.model} model of {self.name} ({self.fit.note})"
            value = self.fit.predict(cores)
            return self._derived(anchor, cores, value, "extrapolated", origin, r)
        if len(counts) >= MIN_POINTS:
            return (
                f"no figure at {cores} cores on {self.name}: {self.fit.note}; pass "
                "--allow-extrapolation to use it anyway"
            )
        if len(counts) == 1:
            what = f"only 1 core count measured on {self.name}; measure 2, 4, 8 cores"
        else:
            listed = ", ".join(str(n) for n in counts)
            what = (
                f"only {len(counts)} core counts ({listed}) measured on {self.name}; "
                f"measure {MIN_POINTS} or more"
            )
        return (
            f"{what} (add a client host and run `sizing run --cores 2,4,8`) "
            "or pass --allow-extrapolation"
        )

    def _derived(
        self,
        anchor: Figure,
        cores: int,
        value: float,
        source: str,
        origin: str,
        rel: tuple[float, float],
        other: Figure | None = None,
    ) -> Figure:
        flags = tuple(dict.fromkeys(anchor.flags + (other.flags if other else ())))
        has_ci = rel != (0.0, 0.0)
        return replace(
            anchor,
            cores=cores,
            value=value,
            source=source,
            origin=origin,
            ci_low=value * (1.0 - rel[0]) if has_ci else None,
            ci_high=value * (1.0 + rel[1]) if has_ci else None,
            bound="",
            flags=flags,
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
        }


def _series_points(figs: Iterable[Figure]) -> list[tuple[int, float]]:
    return [(f.cores, f.value) for f in figs if not f.lower_bound]


def _fit_of(points: Sequence[tuple[int, float]], upto: int | None) -> ScalingFit:
    if not points:
        return ScalingFit(model="linear", points=(), note="only lower bounds measured")
    return fit(points, upto=upto)


def find_shape(
    own: Basis, profile: str, ht: str, bases: Sequence[Basis], upto: int | None = None
) -> Shape | None:
    """The shape to borrow for ``own``'s ``profile`` series: from a basis with the same
    workload and ≥ 3 exact core counts; same platform and HT first, measured before
    reference, then the most core counts."""
    best: tuple[tuple[bool, bool, bool, int], Shape] | None = None
    for b in bases:
        if b.id == own.id or not b.workload.same_as(own.workload, profile):
            continue
        for want_ht in (ht, *(h for h in HT_ORDER if h != ht)):
            pts = _series_points(f for f in b.figures if f.profile == profile and f.ht == want_ht)
            if len({n for n, _ in pts}) < MIN_POINTS:
                continue
            rank = (b.platform == own.platform, want_ht == ht, b.origin == "measured", len(pts))
            if best is None or rank > best[0]:
                best = (rank, Shape(b.id, _fit_of(pts, upto)))
            break
    return None if best is None else best[1]


def build_series(
    figures: Sequence[Figure],
    *,
    bases: Sequence[Basis] = (),
    allow_extrapolation: bool = False,
    upto: int | None = None,
) -> dict[BasisSeriesKey, Series]:
    """Group figures into series (never across ``Figure.basis``) and fit each one.

    ``bases`` are every known basis: they give a series its workload and the shapes it may
    borrow. ``upto`` is the largest core count the caller will ask for (a fit retrograde
    below it is not used).
    """
    by_id = {b.id: b for b in bases}
    groups: dict[BasisSeriesKey, list[Figure]] = {}
    for f in latest(figures):
        if f.value > 0.0 and f.cores >= 1:
            groups.setdefault((f.basis, f.platform, f.ht, f.profile), []).append(f)
    out: dict[BasisSeriesKey, Series] = {}
    for key in sorted(groups, key=lambda k: (k[0], series_order(k[1:]))):
        figs = tuple(sorted(groups[key], key=lambda f: f.cores))
        origin = "measured" if any(f.source == "measured" for f in figs) else "reference"
        points = _series_points(figs)
        own = by_id.get(key[0])
        shape = None
        if own is not None and len(points) < MIN_POINTS:
            shape = find_shape(own, key[3], key[2], bases, upto)
        out[key] = Series(
            platform=key[1],
            ht=key[2],
            profile=key[3],
            origin=origin,
            observed=figs,
            fit=_fit_of(points, upto),
            basis_id=key[0],
            shape=shape,
            allow_extrapolation=allow_extrapolation,
        )
    return out
