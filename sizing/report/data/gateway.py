"""The API gateway's CPU curve: server CPU against offered calls per second.

The API-gateway article plots the gateway's CPU use while the calls per second rise on one
core. The ``api-jwt-cpu`` and ``proxy-cpu`` profiles offer fixed rates (open loop) to a
gateway role and sample the server's pinned CPUs at each rate; this module turns their
stored curves into the guide's series and one table per point (pure, no I/O).
"""

from __future__ import annotations

from collections.abc import Sequence

from sizing.model import PointResult, Status
from sizing.records import PointMeta
from sizing.report.data.format import MISSING, PLATFORM_LABELS, latency_ms, number, percent
from sizing.report.data.model import GatewaySection, GatewaySeries, TableBlock, TCell
from sizing.sources import RunData

__all__ = ["GatewaySection", "GatewaySeries", "gateway_section", "is_cpu_curve"]

ROLE_TEXT = {"api-jwt": "API gateway with HS256 JWT (njs)", "proxy": "reverse proxy"}


def is_cpu_curve(meta: PointMeta) -> bool:
    """A point of a gateway CPU-curve profile (``cpu_curve`` in its record)."""
    return bool(meta.workload.cpu_curve)


def _series(run_id: int, r: PointResult) -> GatewaySeries | None:
    meta = r.metadata
    curve = meta.latency.curve
    if not is_cpu_curve(meta) or not curve:
        return None
    role = meta.workload.role or ""
    cores = r.key.cores
    label = (
        f"{ROLE_TEXT.get(role, role)}, {PLATFORM_LABELS.get(r.key.platform, r.key.platform)}, "
        f"{cores} core{'s' if cores != 1 else ''}"
    )
    if "emulated" in r.flags:
        label += ", emulated"
    return GatewaySeries(
        label=label,
        profile=r.key.profile,
        role=role,
        cores=cores,
        run_id=run_id,
        host=r.key.host,
        rates=tuple(p.rate for p in curve),
        achieved=tuple(p.achieved for p in curve),
        server_busy=tuple(p.server_busy for p in curve),
        p95_ms=tuple(p.p95_ms for p in curve),
    )


def _table(s: GatewaySeries, meta: PointMeta) -> TableBlock:
    rows = []
    for rate, got, busy, p95 in zip(s.rates, s.achieved, s.server_busy, s.p95_ms, strict=True):
        rows.append(
            (
                TCell(number(rate)),
                TCell(MISSING if got is None else number(got)),
                TCell(MISSING if busy is None else percent(busy)),
                TCell(MISSING if p95 is None else latency_ms(p95)),
            )
        )
    by = f" ({meta.env.tool})" if meta.env.tool else ""  # the generator that offered them
    return TableBlock(
        title=f"{s.label}: server CPU per offered calls/s (run {s.run_id}, {s.host})",
        headers=("Offered (calls/s)", "Achieved (calls/s)", "Server CPU busy", "p95 latency (ms)"),
        rows=tuple(rows),
        notes=(
            f"Profile {s.profile}: {meta.env.url or ''}, offered open loop{by} for "
            f"{meta.workload.duration_s or MISSING} s per rate; CPU busy is the mean over the "
            "server's pinned CPUs.",
        ),
    )


def gateway_section(runs: Sequence[RunData]) -> GatewaySection | None:
    """The newest CPU curve per (platform, cores, HT, profile) of ``runs``; None if none."""
    newest: dict[tuple[str, int, str, str], tuple[GatewaySeries, PointMeta]] = {}
    for run in runs:
        for p in run.points:
            if p.result.status not in (Status.MEASURED, Status.INVALID):
                continue
            s = _series(run.record.id, p.result)
            if s is not None:
                k = p.result.key
                newest[(k.platform, k.cores, k.ht, k.profile)] = (s, p.result.metadata)
    if not newest:
        return None
    order = sorted(newest, key=lambda k: (k[3], k[1], k[0], k[2]))
    return GatewaySection(
        series=tuple(newest[k][0] for k in order),
        tables=tuple(_table(*newest[k]) for k in order),
    )
