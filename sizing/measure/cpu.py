"""CPU shares from ``/proc/stat`` snapshots taken around a window (pure)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from sizing.loadproto import Counters, WindowOutput
from sizing.records import CpuShare, CpuWindow, KernelOutside, SampleMeta, UpstreamWindow

__all__ = [
    "client_cpus",
    "cpu_split",
    "cpu_busy",
    "kernel_outside",
    "nginx_cpu_pct",
    "server_work",
    "upstream_window",
    "window_cpu",
]


def cpu_busy(before: Counters, after: Counters, cpus: Sequence[int]) -> CpuWindow:
    """Per-CPU shares (%) of user, system, softirq, steal and busy over a window."""
    per: dict[str, CpuShare] = {}
    for cpu in cpus:
        b, a = before.get(str(cpu)), after.get(str(cpu))
        if not b or not a:
            continue
        d = [x - y for x, y in zip(a, b, strict=False)]
        total = sum(d) or 1
        # /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice
        idle = d[3] + (d[4] if len(d) > 4 else 0)
        steal = d[7] if len(d) > 7 else 0
        per[str(cpu)] = CpuShare(
            user=100.0 * (d[0] + d[1]) / total,
            system=100.0 * d[2] / total,
            softirq=100.0 * (d[6] if len(d) > 6 else 0) / total,
            irq=100.0 * (d[5] if len(d) > 5 else 0) / total,
            steal=100.0 * steal / total,
            busy=100.0 * (total - idle) / total,
        )
    mean_busy = statistics.fmean(v.busy for v in per.values()) if per else None
    mean_steal = statistics.fmean(v.steal for v in per.values()) if per else None
    return CpuWindow(per, mean_busy, mean_steal)


def window_cpu(window: WindowOutput | None, cpus: Sequence[int]) -> CpuWindow | None:
    """:func:`cpu_busy` of a window output that sampled the CPUs, else None."""
    if window and window.cpu_before and window.cpu_after:
        return cpu_busy(window.cpu_before, window.cpu_after, cpus)
    return None


def client_cpus(window: WindowOutput, planned: Sequence[int]) -> Sequence[int]:
    """The CPUs a client's load ran on: the planned ones, else every CPU it sampled."""
    return planned or tuple(int(k) for k in (window.cpu_after or {}))


def nginx_cpu_pct(window: WindowOutput | None, workers: Sequence[int]) -> float | None:
    """nginx's own CPU time over a server window, as % of its workers' CPUs."""
    if window and window.nginx_cpu_s is not None and window.end > window.start:
        return 100.0 * window.nginx_cpu_s / (window.span_s * max(1, len(workers)))
    return None


def upstream_window(
    window: WindowOutput | None, cpus: Sequence[int], shares_client: bool
) -> UpstreamWindow | None:
    """One upstream host's window: how busy the CPUs its nginx may use were.

    ``capacity`` is the CPUs the upstream may use: its pinned CPUs (all the host's when
    unpinned), fewer under a cgroup quota. ``own`` is its nginx's CPU time as % of that
    capacity; ``busy`` is what the upstream-bound guard reads: ``own`` when the upstream
    shares the load generator's CPUs (their /proc/stat counts the load generator too, or a
    cgroup quota (the CPUs look idle while the upstream is throttled), else the larger of
    ``own`` and the /proc/stat busy share of its CPUs (the kernel's network work included).
    """
    if not window:
        return None
    probe = window.upstream
    listed = list(cpus) or [int(k) for k in (window.cpu_after or {})]
    capacity = float(len(listed) or 1)
    quota = probe.quota_cpus if probe else None
    if quota:
        capacity = min(capacity, quota)
    span = window.span_s
    own = (
        100.0 * probe.cpu_s / (span * capacity)
        if probe is not None and probe.cpu_s is not None and span > 0
        else None
    )
    stat = window_cpu(window, listed)
    stat_busy = stat.busy if stat else None
    if shares_client or quota:
        busy = own
    else:
        busy = max((b for b in (own, stat_busy) if b is not None), default=None)
    return UpstreamWindow(
        busy=busy,
        own=own,
        cpu_busy=stat_busy,
        capacity=capacity,
        quota_cpus=quota,
        throttled=probe.throttled if probe else None,
    )


def quota_limits(windows: Sequence[WindowOutput]) -> tuple[float | None, int | None]:
    """The hosts' cgroup CPU limits over one window (each host's output of it): the least
    quota, in CPUs, and the periods the limits throttled the nginx under test or a load
    generator, summed (None, None: no host found a limit)."""
    limits = [w.limit for w in windows if w.limit is not None]
    quotas = [x.quota_cpus for x in limits if x.quota_cpus is not None]
    counts = [x.throttled for x in limits if x.throttled is not None]
    return (min(quotas) if quotas else None), (sum(counts) if counts else None)


def kernel_outside(window: WindowOutput | None, pinned: Sequence[int]) -> KernelOutside | None:
    """Kernel network work on the server host's CPUs outside nginx's pinned ones.

    ``softirq_pct`` and ``system_pct`` are summed over the other CPUs (100 = one whole CPU);
    ``net_rx_outside`` is the share of network receive softirqs run outside the pinned CPUs
    (from /proc/softirqs). On a host that also runs the client or the upstream, the other
    CPUs' share includes their own network work.
    """
    if not window or not window.cpu_before or not window.cpu_after:
        return None
    others = [int(k) for k in window.cpu_after if int(k) not in set(pinned)]
    shares = cpu_busy(window.cpu_before, window.cpu_after, others).per_cpu
    sirq = window.net_softirqs or {}

    def outside(kind: str) -> tuple[float | None, int]:
        counts = sirq.get(kind) or {}
        total = sum(counts.values())
        out = sum(n for c, n in counts.items() if int(c) not in set(pinned))
        return (out / total if total else None), total

    rx, rx_total = outside("NET_RX")
    tx, tx_total = outside("NET_TX")
    return KernelOutside(
        cpus=tuple(others),
        softirq_pct=sum(v.softirq for v in shares.values()),
        system_pct=sum(v.system for v in shares.values()),
        net_rx_outside=rx,
        net_rx_total=rx_total,
        net_tx_outside=tx,
        net_tx_total=tx_total,
    )


def server_work(server_cpu: CpuWindow | None, nginx_pct: float | None) -> float | None:
    """nginx's own CPU time plus the irq/softirq time on its pinned CPUs (% of them): what
    the server did, without other processes that ran on the same CPUs."""
    if not server_cpu or nginx_pct is None or not server_cpu.per_cpu:
        return None
    per = server_cpu.per_cpu.values()
    kernel = sum(v.softirq + v.irq for v in per) / max(1, len(per))
    return float(min(100.0, nginx_pct + kernel))


def cpu_split(timed: Sequence[SampleMeta]) -> dict[str, float] | None:
    """Median over timed repetitions (their samples' records) of the server's pinned
    CPUs' mean user, system and softirq shares (%): what the server's CPU did."""
    split: dict[str, list[float]] = {"user": [], "system": [], "softirq": []}
    for m in timed:
        per: Mapping[str, CpuShare] = m.server_cpu.per_cpu if m.server_cpu else {}
        if not per:
            continue
        for k, vals in split.items():
            got = [float(getattr(c, k)) for c in per.values()]
            vals.append(sum(got) / len(got))
    out = {k: statistics.median(v) for k, v in split.items() if v}
    return out or None
