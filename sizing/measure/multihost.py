"""Verdicts for points measured with remote servers and several clients (pure functions).

* :func:`net_rates` and :func:`network_verdict`: a point whose server moves bytes near its
  link speed is limited by the NIC, not by its CPU (the sizing article's 100 KB file).
* :func:`multihost_extras`: the server's network rates and the clients' merged latency,
  per window and per point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.errors import ToolError
from sizing.load.latency import LatencyReport, merge_latency
from sizing.load.tools import DEFAULT_GENERATOR, tool
from sizing.loadproto import WindowOutput, WindowSpec
from sizing.records import MergedLatencyRecord, PointEvidence, ServerNet
from sizing.records.host import HostRecord

__all__ = [
    "NETWORK_BOUND_SHARE",
    "Extras",
    "NetRate",
    "WindowExtras",
    "busiest_interface",
    "link_bytes_per_s",
    "net_rates",
    "multihost_extras",
    "network_verdict",
]

NETWORK_BOUND_SHARE = 0.90  # bytes/s at or above 90% of the link speed: the NIC limits


@dataclass(frozen=True)
class NetRate:
    """Bytes per second one interface received and sent during a window."""

    interface: str
    rx_bytes_per_s: float
    tx_bytes_per_s: float

    @property
    def peak(self) -> float:
        """The busier direction (links are full duplex: each direction has the link speed)."""
        return max(self.rx_bytes_per_s, self.tx_bytes_per_s)


def net_rates(
    before: Mapping[str, Sequence[int]], after: Mapping[str, Sequence[int]], seconds: float
) -> dict[str, NetRate]:
    """Per-interface rates from two ``/proc/net/dev`` readings ``{iface: [rx, tx] bytes}``."""
    out: dict[str, NetRate] = {}
    if seconds <= 0:
        return out
    for name, a in after.items():
        b = before.get(name)
        if not b or len(a) < 2 or len(b) < 2:
            continue
        rx = max(0, int(a[0]) - int(b[0])) / seconds
        tx = max(0, int(a[1]) - int(b[1])) / seconds
        out[name] = NetRate(name, rx, tx)
    return out


def busiest_interface(rates: Mapping[str, NetRate]) -> NetRate | None:
    """The interface that carried the load: the one with the most bytes in either direction."""
    if not rates:
        return None
    return max(rates.values(), key=lambda r: (r.peak, r.interface))


def link_bytes_per_s(
    interface: str, speeds_mbps: Mapping[str, Any] | None, nic_gbps: float | None = None
) -> float | None:
    """The link speed in bytes/s: the inventory's ``sizing_nic_gbps`` wins over sysfs.

    ``speeds_mbps`` is the host facts' ``nic_speeds_mbps`` (``/sys/class/net/IF/speed``).
    None when neither knows (loopback, virtual NICs without a speed).
    """
    if nic_gbps:
        return nic_gbps * 1e9 / 8
    if interface == "lo" or not speeds_mbps:
        return None
    speed = speeds_mbps.get(interface)
    if not isinstance(speed, int | float) or speed <= 0:
        return None
    return float(speed) * 1e6 / 8


def network_verdict(
    rate: NetRate | None,
    link_bps: float | None,
    *,
    share: float = NETWORK_BOUND_SHARE,
) -> str | None:
    """A reason when the server's traffic reached ``share`` of its link; None otherwise.

    ``link_bps`` is in bytes per second (see :func:`link_bytes_per_s`). Unknown link
    speeds give no verdict: a point is never called network-bound on a guess.
    """
    if rate is None or not link_bps or link_bps <= 0:
        return None
    used = rate.peak / link_bps
    if used < share:
        return None
    direction = "sent" if rate.tx_bytes_per_s >= rate.rx_bytes_per_s else "received"
    return (
        f"network-bound: the server {direction} {rate.peak * 8 / 1e9:.2f} Gb/s on "
        f"{rate.interface}, {100 * used:.0f}% of its {link_bps * 8 / 1e9:g} Gb/s link "
        f"(the NIC limits this point, not the CPU)"
    )


# -- what the sweep stores for a multi-host point -----------------------------------------


@dataclass
class WindowExtras:
    """What one window gains from the server's network counters and the clients' reports."""

    server_net: ServerNet | None = None
    latency: MergedLatencyRecord = field(default_factory=MergedLatencyRecord)


@dataclass
class Extras:
    """What a point gains from the server's network counters and the clients' latency
    reports: per window (``windows``), for the point (``latency`` and the median window's
    NIC figures in ``point``), and its verdicts."""

    windows: dict[int, WindowExtras] = field(default_factory=dict)
    point: PointEvidence = field(default_factory=PointEvidence)
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def _window(output: Sequence[WindowOutput] | None, idx: int) -> WindowOutput | None:
    return next((w for w in output or () if w.index == idx), None)


def multihost_extras(
    clients: Sequence[str],
    server: str,
    outputs: Mapping[str, Sequence[WindowOutput]],
    windows: Sequence[WindowSpec],
    server_facts: HostRecord,
    nic_gbps: float | None,
    generator: str = DEFAULT_GENERATOR,
) -> Extras:
    """Server network rates, the network verdict and merged latency, from the window
    outputs of ``playbooks/files/loadgen.py`` (``outputs[host]``); each client's latency
    report is its generator's (:meth:`sizing.load.base.LoadTool.latency_report`)."""

    extras = Extras()
    gen = tool(generator)
    timed_reports: list[LatencyReport] = []
    peaks: list[tuple[float, NetRate, float | None]] = []
    speeds = server_facts.nic_speeds_mbps
    for win in windows:
        idx = win.index
        meta = WindowExtras()
        sw = _window(outputs.get(server), idx)
        if sw and sw.net_before and sw.net_after:
            rate = busiest_interface(net_rates(sw.net_before, sw.net_after, sw.span_s))
            if rate is not None:
                link = link_bytes_per_s(rate.interface, speeds, nic_gbps)
                meta.server_net = ServerNet(
                    interface=rate.interface,
                    rx_bytes_per_s=rate.rx_bytes_per_s,
                    tx_bytes_per_s=rate.tx_bytes_per_s,
                    link_bytes_per_s=link,
                    link_share=(rate.peak / link) if link else None,
                )
                if idx > 0:
                    peaks.append((rate.peak, rate, link))
        reports: list[LatencyReport] = []
        for c in clients:
            cw = _window(outputs.get(c), idx)
            if not cw or not cw.commands:
                continue
            try:  # a client whose tool failed counts nowhere (its window's failure says so)
                reports.append(gen.latency_report(cw.commands[0]))
            except ToolError:
                continue
        merged = merge_latency(reports)
        if merged is not None:
            meta.latency = merged.record()
        if idx > 0:
            timed_reports += reports
        extras.windows[idx] = meta
    merged_all = merge_latency(timed_reports)
    if merged_all is not None:
        extras.point = replace(extras.point, latency=merged_all.record())
    if peaks:
        peaks.sort(key=lambda t: t[0])
        _, rate, link = peaks[len(peaks) // 2]  # the median window: one burst decides nothing
        extras.point = replace(
            extras.point,
            server_net_tx_bytes_per_s=rate.tx_bytes_per_s,
            server_net_rx_bytes_per_s=rate.rx_bytes_per_s,
            server_net_interface=rate.interface,
            server_link_bytes_per_s=link,
        )
        reason = network_verdict(rate, link)
        if reason:
            extras.flags.append("network-bound")
            extras.reasons.append(reason)
    return extras
