"""Choosing the figures to size from, and the series they form.

**Sources.** ``reference`` uses the bundled published figures only; ``measured`` uses the
results store only; ``both`` uses, for each series (platform × HT mode × profile), the
measured figures when that series has any, else the reference figures. A series never
mixes measured and reference points: they come from different hardware.

**Several measurements of one configuration.** When several measured figures exist for
the same platform, core count, HT mode and profile, the last one in the input wins.
:func:`measured_figures` turns stored points into figures oldest first (the newest point's
figure per configuration), so the most recent run's figure is used.

A figure the series does not hold (a core count that was not measured) is predicted by the
series' fitted scaling model and labelled ``extrapolated``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sizing.engine.scaling import ScalingFit, fit
from sizing.errors import UsageError
from sizing.model import Figure, Platform, PointResult, Status

PROFILES = ("rps", "tps")
PLATFORM_ORDER = ("baremetal", "hypervisor", "kubernetes")
HT_ORDER = ("off", "on")
UNITS = {"rps": "requests/s", "tps": "handshakes/s"}

SeriesKey = tuple[str, str, str]  # platform, ht, profile


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
        )
        slot = (family, r.key.cores, r.key.ht, r.key.profile)
        if slot not in newest or newest[slot][0] <= point_id:
            newest[slot] = (point_id, fig)
    return [f for _, f in sorted(newest.values(), key=lambda t: t[0])]


def latest(figures: Iterable[Figure]) -> list[Figure]:
    """One figure per (platform, cores, HT, profile): the last one given wins."""
    slots: dict[tuple[str, int, str, str], Figure] = {}
    for f in figures:
        slots[(f.platform, f.cores, f.ht, f.profile)] = f
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


@dataclass(frozen=True)
class Series:
    """The observed figures of one platform × HT × profile and their scaling fit."""

    platform: str
    ht: str
    profile: str
    basis: str  # "measured" or "reference"
    observed: tuple[Figure, ...]
    fit: ScalingFit

    @property
    def key(self) -> SeriesKey:
        return (self.platform, self.ht, self.profile)

    def at(self, cores: int) -> Figure:
        """The figure at ``cores``: observed if there is one, else extrapolated."""
        for f in self.observed:
            if f.cores == cores:
                return f
        first = self.observed[0]
        return replace(
            first,
            cores=cores,
            value=self.fit.predict(cores),
            source="extrapolated",
            origin=f"{self.fit.model} model of the {self.basis} figures",
            ci_low=None,
            ci_high=None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "ht": self.ht,
            "profile": self.profile,
            "basis": self.basis,
            "observed_cores": [f.cores for f in self.observed],
            "fit": self.fit.to_dict(),
        }


def build_series(figures: Sequence[Figure]) -> dict[SeriesKey, Series]:
    """Group figures into series and fit each one's scaling model."""
    groups: dict[SeriesKey, list[Figure]] = {}
    for f in latest(figures):
        if f.value > 0.0 and f.cores >= 1:
            groups.setdefault(_key(f), []).append(f)
    out: dict[SeriesKey, Series] = {}
    for key in sorted(groups, key=series_order):
        figs = tuple(sorted(groups[key], key=lambda f: f.cores))
        basis = "measured" if any(f.source == "measured" for f in figs) else "reference"
        out[key] = Series(
            platform=key[0],
            ht=key[1],
            profile=key[2],
            basis=basis,
            observed=figs,
            fit=fit([(f.cores, f.value) for f in figs]),
        )
    return out
