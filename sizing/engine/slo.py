"""Sizing by latency: RPS capacity under a latency objective (``recommend --p95 10ms``).

A latency point (``sizing.measure.fixedrate``) stores its curve (latency statistics per offered
rate) and, when measured with ``--slo``, the SLO capacity found to ±2%. This module turns
valid latency points into ``rps`` figures meaning "requests/s at p95 <= X": the searched
capacity when the point was searched for exactly that objective, else the highest swept
rate meeting it (known to the sweep's step). The figure's origin names the objective, as
``rps@p95<=10ms``. Pure: points in, figures out.

**One latency workload.** Figures are never pooled across workloads: a 1-KB HTTPS proxy and
a 100-KB plain-HTTP file are different capacities. A latency workload is named
``profile/role/scheme/sizeB`` (:func:`latency_workload`, e.g. ``latency/proxy/https/1024B``)
and ``slo_figures`` keeps one. A figure whose objective was still met at the highest rate
measured (no knee reached, or the clients' ceiling) is a lower bound (``bound="lower"``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sizing.knee import Slo, capacity_from_curve
from sizing.model import PROFILE_UNITS, Figure, FigureKind, Platform, PointResult

__all__ = ["latency_workload", "latency_workloads", "slo_figures", "slo_profile_name"]


def latency_workload(result: PointResult) -> str:
    """``latency/proxy/https/1024B``: the workload a latency point measured."""
    w = result.metadata.workload
    return (
        f"{result.key.profile}/{w.role or 'web'}/{w.scheme or '?'}/"
        f"{w.file_size if w.file_size is not None else '?'}B"
    )


def _latency_point(r: PointResult) -> bool:
    return r.metadata.is_latency


def latency_workloads(points: Iterable[tuple[int, PointResult]]) -> dict[str, int]:
    """Latency workload id -> how many valid latency points measured it."""
    out: dict[str, int] = {}
    for _, r in points:
        if _latency_point(r):
            w = latency_workload(r)
            out[w] = out.get(w, 0) + 1
    return out


def slo_profile_name(slo: Slo) -> str:
    """``rps@p95<=10ms``: how figures sized under an objective are named."""
    return f"rps@{slo.label}"


VIRTUALIZED = "virtualized-host"


def _family(platform: str) -> str:
    try:
        return Platform(platform).family
    except ValueError:
        return platform


def capacity(result: PointResult, slo: Slo) -> float | None:
    """The point's requests/s under ``slo``, or None when it cannot say."""
    lat = result.metadata.latency
    if lat.slo_label == slo.label and lat.slo_capacity:
        return lat.slo_capacity
    return capacity_from_curve(lat.curve, slo) if lat.curve else None


def _lower_bound(r: PointResult, slo: Slo, value: float) -> bool:
    """The objective was still met at the highest rate measured, or the clients' CPUs
    saturated where it failed: capacity lies above."""
    if "client-bound" in r.flags:
        return True
    top = max(r.metadata.latency.curve, key=lambda p: p.rate, default=None)
    return top is not None and value >= top.rate and slo.met(top)


def slo_figures(
    points: Iterable[tuple[int, PointResult]],
    slo: Slo,
    *,
    include_emulated: bool = False,
    workload: str | None = None,
    include_virtualized: bool = False,
) -> list[Figure]:
    """``rps`` figures under ``slo`` from valid latency points given as (run id, result),
    oldest first, of one latency ``workload`` (None: every one, for callers that checked
    there is only one): the newest per platform family, cores and HT wins.

    A figure carries every flag of its point (``erratic`` and ``drift`` keep it from
    being sized on, as a throughput figure's do), and a point of a virtualized host (a
    container or VM that believes it is bare metal) is ``virtualized-host``, never bare
    metal, and is used only with ``include_virtualized``."""
    newest: dict[tuple[str, int, str], Figure] = {}
    for run_id, r in points:
        if not _latency_point(r):
            continue
        if workload is not None and latency_workload(r) != workload:
            continue
        emulated = "emulated" in r.flags
        if emulated and not include_emulated:
            continue
        virtualized = VIRTUALIZED in r.flags
        if virtualized and not include_virtualized:
            continue
        value = capacity(r, slo)
        if not value:
            continue
        family = VIRTUALIZED if virtualized else _family(r.key.platform)
        lower = _lower_bound(r, slo, value)
        newest[(family, r.key.cores, r.key.ht)] = Figure(
            platform=family,
            cores=r.key.cores,
            ht=r.key.ht,
            profile="rps",
            value=value,
            unit=PROFILE_UNITS["rps"],
            source=FigureKind.MEASURED,
            origin=f"run {run_id}, {r.key.host}, {r.key.profile}: {slo_profile_name(slo)}",
            emulated=emulated,
            basis=latency_workload(r),
            flags=tuple(dict.fromkeys(r.flags)),
            bound="lower" if lower else "",
        )
    return list(newest.values())
