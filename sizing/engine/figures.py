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
:attr:`Figure.basis`. Its scaling law is fitted on its own figures only (what a catalog
sells never changes a figure). A figure the series does not hold comes from
:meth:`Series.estimate`, by these rules:

- **Linear scaling is an upper bound, never a fallback.** No prediction exceeds
  N × the best measured per-core figure; an interval is bounded only by linear scaling
  from a per-core figure the truth may have (each draw's own, :mod:`sizing.engine.predict`),
  never by a measured median below the truth; every bound is ≥ 0.
- **Between measured counts** (``interpolated``), by one rule on every platform: the USL
  fit (≥ 3 counts), else the straight line between the neighbours; interval: the 95%
  prediction interval of the series' draws (:mod:`sizing.engine.predict`), or without
  repetitions from the straight line to the fit. The upper neighbour may be a lower bound
  (client-bound): a count between the last exact figure and it is interpolated too, the
  straight line to the bound is the least it can be (a concave curve stays above it; the
  figure is raised to it if the fit is lower), so the bound is used the same way on every
  platform and the figures stay monotone in cores.
- **Beyond them, with ≥ 3 counts** (``extrapolated``): the fit, even where it is
  retrograde (the data bend: the answer follows them); interval: the draws', which
  widen with distance. Beyond twice the largest measured count (or below half the
  smallest) it is refused unless ``allow_extrapolation``.
- **Beyond them with fewer than 3 counts** (``shape``): the scaling shape of a basis with
  the same workload and ≥ 3 counts, never an emulated one for a real basis, from the
  nearest measured count n0: value(N) = value(n0) · X_ref(N) / X_ref(n0); interval: the
  anchor's, widened by 10 points (other hardware) plus the shape's misfit on the borrowing
  series' own other counts; its coverage is not known, and it says so (and what to
  measure).
- **Otherwise refused**, with what to measure.
- Without repetitions (the reference data) there is nothing to bootstrap: the interval runs
  from "no gain beyond the last measured count" (a lower bound on the way included) to the
  fit, and says so.
- An extrapolated or interpolated interval is never relatively narrower than the nearest
  measured figure's, on either side. An ``erratic`` figure (a repetition below half or
  above twice its median) is shown, never fitted, and refused for sizing with a request to
  re-measure.

Lower-bound figures (``bound == "lower"``, e.g. client-bound) are shown at their own core
count as "≥ value" and are never fitted or used as an anchor; they enter only as the least
the truth can be (above: between counts, and "no gain beyond" it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from sizing.engine.basis import Basis
from sizing.engine.overhead import ht_gain_of
from sizing.engine.predict import Bootstrapper, bootstrap, remembering
from sizing.engine.scaling import MIN_POINTS
from sizing.engine.series import (
    Series,
    SeriesKey,
    Shape,
    counts_of,
    fit_of,
    series_points,
)
from sizing.model import (
    BasisPlatform,
    Figure,
    FigureKind,
    Ht,
    Platform,
    PointResult,
    Status,
    client_floor,
)

PROFILES = ("rps", "tps")
PLATFORM_ORDER = tuple(BasisPlatform)  # the sizing table's columns, in order
HT_ORDER = tuple(Ht)

BasisSeriesKey = tuple[str, str, str, str]  # basis id, platform, ht, profile


def measured_figures(
    points: Iterable[tuple[int, int, PointResult]], include_emulated: bool
) -> list[Figure]:
    """The engine's figures from stored points given as (point id, run id, result):
    valid (measured) points, and client-bound ones as lower bounds (:func:`client_floor`),
    the newest point per (platform family, cores, HT, profile), an exact figure before a
    lower bound; emulated ones only when asked. Oldest first, as :func:`latest` expects."""
    newest: dict[tuple[str, int, str, str], tuple[tuple[bool, int], Figure]] = {}
    for point_id, run_id, r in points:
        floor = client_floor(r)
        if (r.status is not Status.MEASURED and not floor) or r.value is None:
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
            source=FigureKind.MEASURED,
            origin=f"run {run_id}, {r.key.host}",
            emulated=emulated,
            ci_low=r.ci_low,
            ci_high=r.ci_high,
            flags=tuple(r.flags),
            bound="lower" if floor else "",
        )
        slot = (family, r.key.cores, r.key.ht, r.key.profile)
        rank = (not floor, point_id)
        if slot not in newest or newest[slot][0] <= rank:
            newest[slot] = (rank, fig)
    return [f for _, f in sorted(newest.values(), key=lambda t: t[0][1])]


def latest(figures: Iterable[Figure]) -> list[Figure]:
    """One figure per (basis, platform, cores, HT, profile): the last one given wins."""
    slots: dict[tuple[str, str, int, str, str], Figure] = {}
    for f in figures:
        slots[(f.basis, f.platform, f.cores, f.ht, f.profile)] = f
    return list(slots.values())


def _key(f: Figure) -> SeriesKey:
    return (f.platform, f.ht, f.profile)


def series_order(key: SeriesKey) -> tuple[int, int, int, str]:
    """Bare metal before hypervisor before Kubernetes, HT off before on, RPS before TPS."""
    platform, ht, profile = key
    p = PLATFORM_ORDER.index(platform) if platform in PLATFORM_ORDER else len(PLATFORM_ORDER)
    h = HT_ORDER.index(ht) if ht in HT_ORDER else len(HT_ORDER)
    q = PROFILES.index(profile) if profile in PROFILES else len(PROFILES)
    return (p, h, q, platform)


def find_shape(own: Basis, profile: str, ht: str, bases: Sequence[Basis]) -> Shape | None:
    """The shape to borrow for ``own``'s ``profile`` series: from a basis with the same
    workload and ≥ 3 usable core counts, never an emulated one unless ``own`` is emulated
    too; same platform and HT first, measured before reference, then the most core
    counts."""
    best: tuple[tuple[bool, bool, bool, int], Shape] | None = None
    for b in bases:
        if b.id == own.id or not b.workload.same_as(own.workload, profile):
            continue
        if "emulated" in b.flags and "emulated" not in own.flags:
            continue
        for want_ht in (ht, *(h for h in HT_ORDER if h != ht)):
            figs = [f for f in b.figures if f.profile == profile and f.ht == want_ht]
            pts = series_points(figs)
            if len({n for n, _ in pts}) < MIN_POINTS:
                continue
            measured = b.origin == FigureKind.MEASURED
            rank = (b.platform == own.platform, want_ht == ht, measured, len(pts))
            if best is None or rank > best[0]:
                best = (rank, Shape(b.id, fit_of(figs)))
            break
    return None if best is None else best[1]


def socket_of(b: Basis) -> int | None:
    """The cores of one socket of a basis' host when it has more than one socket (a
    prediction beyond them crosses the socket boundary); None when one or unknown."""
    hw = b.hardware
    if hw.sockets is None or hw.sockets < 2 or not hw.cores_per_socket:
        return None
    return hw.cores_per_socket


def build_series(
    figures: Sequence[Figure],
    *,
    bases: Sequence[Basis] = (),
    allow_extrapolation: bool = False,
    bootstrapper: Bootstrapper | None = None,
) -> dict[BasisSeriesKey, Series]:
    """Group figures into series (never across ``Figure.basis``) and fit each one on its
    own figures (never on what a catalog sells: the catalog never changes a figure).

    ``bases`` are every known basis: they give a series its workload and the shapes it may
    borrow. ``bootstrapper`` computes (or reads from a cache: the command's fit cache) a
    series' bootstrap; by default each one is computed, once per call.
    """
    boot_of = bootstrapper or remembering(bootstrap)
    by_id = {b.id: b for b in bases}
    groups: dict[BasisSeriesKey, list[Figure]] = {}
    for f in latest(figures):
        if f.value > 0.0 and f.cores >= 1:
            groups.setdefault((f.basis, f.platform, f.ht, f.profile), []).append(f)
    out: dict[BasisSeriesKey, Series] = {}
    for key in sorted(groups, key=lambda k: (k[0], series_order(k[1:]))):
        figs = tuple(sorted(groups[key], key=lambda f: f.cores))
        origin = next(
            (
                k
                for k in (FigureKind.MEASURED, FigureKind.ASSUMED)
                if any(f.source == k for f in figs)
            ),
            FigureKind.REFERENCE,
        )  # a series made from a stated assumption says so (never "reference")
        points = series_points(figs)
        own = by_id.get(key[0])
        shape = None
        if own is not None and len(points) < MIN_POINTS:
            shape = find_shape(own, key[3], key[2], bases)
        counts = counts_of(figs)
        boot = boot_of(counts) if any(len(f.reps) >= 2 for f in figs) else None
        out[key] = Series(
            platform=key[1],
            ht=key[2],
            profile=key[3],
            origin=origin,
            observed=figs,
            fit=fit_of(figs),
            basis_id=key[0],
            shape=shape,
            allow_extrapolation=allow_extrapolation,
            boot=boot,
            bounds=() if own is None else own.bounds_of(key[3], key[2]),
            socket_cores=None if own is None else socket_of(own),
        )
    return join_ht(out)


def join_ht(out: dict[BasisSeriesKey, Series]) -> dict[BasisSeriesKey, Series]:
    """One model for HT (:mod:`sizing.engine.htjoint`): of the two HT modes of one basis,
    platform and profile, the one with fewer measured core counts (HT on on a tie)
    predicts as the other times the gain measured at their common counts."""
    for (basis, platform, ht, profile), s in list(out.items()):
        if ht != "on":
            continue
        off = out.get((basis, platform, "off", profile))
        if off is None:
            continue
        on_n, off_n = len({f.cores for f in s.exact}), len({f.cores for f in off.exact})
        mine, other = (s, off) if on_n <= off_n else (off, s)
        gain = ht_gain_of(mine.exact, other.exact, other.ht)
        if gain is not None:
            key = (basis, platform, mine.ht, profile)
            out[key] = replace(mine, partner=other, gain=gain)
    return out
