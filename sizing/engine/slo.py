"""Sizing by latency: RPS capacity under a latency objective (``recommend --p95 10ms``).

A latency point (``sizing.measure.fixedrate``) stores its curve (latency statistics per offered
rate) and, when measured with ``--slo``, the SLO capacity found to ±2%. This module turns
valid latency points into ``rps`` figures meaning "requests/s at p95 <= X": the searched
capacity when the point was searched for exactly that objective, else the highest swept
rate meeting it (known to the sweep's step). The figure's origin names the objective, as
``rps@p95<=10ms``. Pure: points in, figures out.
"""

from __future__ import annotations

from collections.abc import Iterable

from sizing.knee import LatencyPoint, Slo, capacity_from_curve
from sizing.model import PROFILE_UNITS, Figure, Platform, PointResult

__all__ = ["slo_figures", "slo_profile_name"]


def slo_profile_name(slo: Slo) -> str:
    """``rps@p95<=10ms``: how figures sized under an objective are named."""
    return f"rps@{slo.label}"


def _family(platform: str) -> str:
    try:
        return Platform(platform).family
    except ValueError:
        return platform


def capacity(result: PointResult, slo: Slo) -> float | None:
    """The point's requests/s under ``slo``, or None when it cannot say."""
    meta = result.metadata
    search = meta.get("slo_search") or {}
    if meta.get("slo_label") == slo.label and search.get("capacity"):
        return float(search["capacity"])
    curve = [LatencyPoint(**p) for p in meta.get("curve") or []]
    return capacity_from_curve(curve, slo) if curve else None


def slo_figures(
    points: Iterable[tuple[int, PointResult]], slo: Slo, *, include_emulated: bool = False
) -> list[Figure]:
    """``rps`` figures under ``slo`` from valid latency points given as (run id, result),
    oldest first: the newest per platform family, cores and HT wins."""
    newest: dict[tuple[str, int, str], Figure] = {}
    for run_id, r in points:
        if r.metadata.get("mode") != "fixed-rate" or not r.metadata.get("curve"):
            continue
        emulated = "emulated" in r.flags
        if emulated and not include_emulated:
            continue
        value = capacity(r, slo)
        if not value:
            continue
        family = _family(r.key.platform)
        newest[(family, r.key.cores, r.key.ht)] = Figure(
            platform=family,
            cores=r.key.cores,
            ht=r.key.ht,
            profile="rps",
            value=value,
            unit=PROFILE_UNITS["rps"],
            source="measured",
            origin=f"run {run_id}, {r.key.host}, {r.key.profile}: {slo_profile_name(slo)}",
            emulated=emulated,
        )
    return list(newest.values())
