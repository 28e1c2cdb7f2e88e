"""CPU shares from ``/proc/stat`` snapshots taken around a window (pure)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["client_cpus", "cpu_busy", "nginx_cpu_pct", "window_cpu"]


def cpu_busy(
    before: Mapping[str, list[int]], after: Mapping[str, list[int]], cpus: Sequence[int]
) -> dict[str, Any]:
    """Per-CPU shares (%) of user, system, softirq, steal and busy over a window."""
    per: dict[str, dict[str, float]] = {}
    for cpu in cpus:
        b, a = before.get(str(cpu)), after.get(str(cpu))
        if not b or not a:
            continue
        d = [x - y for x, y in zip(a, b, strict=False)]
        total = sum(d) or 1
        # /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice
        idle = d[3] + (d[4] if len(d) > 4 else 0)
        steal = d[7] if len(d) > 7 else 0
        per[str(cpu)] = {
            "user": 100.0 * (d[0] + d[1]) / total,
            "system": 100.0 * d[2] / total,
            "softirq": 100.0 * (d[6] if len(d) > 6 else 0) / total,
            "steal": 100.0 * steal / total,
            "busy": 100.0 * (total - idle) / total,
        }
    mean_busy = statistics.fmean(v["busy"] for v in per.values()) if per else None
    mean_steal = statistics.fmean(v["steal"] for v in per.values()) if per else None
    return {"per_cpu": per, "busy": mean_busy, "steal": mean_steal}


def window_cpu(window: Mapping[str, Any] | None, cpus: Sequence[int]) -> dict[str, Any] | None:
    """:func:`cpu_busy` of a window output that sampled the CPUs, else None."""
    if window and window.get("cpu_before") and window.get("cpu_after"):
        return cpu_busy(window["cpu_before"], window["cpu_after"], cpus)
    return None


def client_cpus(window: Mapping[str, Any], planned: Sequence[int]) -> Sequence[int]:
    """The CPUs a client's load ran on: the planned ones, else every CPU it sampled."""
    return planned or tuple(int(k) for k in window["cpu_after"])


def nginx_cpu_pct(window: Mapping[str, Any] | None, workers: Sequence[int]) -> float | None:
    """nginx's own CPU time over a server window, as % of its workers' CPUs."""
    if window and window.get("nginx_cpu_s") is not None and window["end"] > window["start"]:
        return 100.0 * float(window["nginx_cpu_s"]) / (
            (float(window["end"]) - float(window["start"])) * max(1, len(workers))
        )
    return None
