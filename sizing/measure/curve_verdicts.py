"""What a latency curve's windows say about it: a generator that fell behind, clients that
saturated at the rate that bounds the figure, a hypervisor that stole the server's CPUs
(each a flag and a sentence; :mod:`sizing.measure.fixedrate` measures the curve)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sizing.knee import LatencyPoint
from sizing.measure.validity import CLIENT_BUSY_LIMIT, STEAL_LIMIT


def curve_flags(
    pts: Sequence[LatencyPoint],
    lagging: Collection[float],
    bound_rate: float | None,
    tool: str,
    problems: list[str],
) -> tuple[list[str], str]:
    """The flags a curve earns (a lagging generator, a busy client at the rate that bounds
    the figure, a stealing hypervisor), each said in ``problems``; and what was busy
    there (empty when nothing was)."""
    flags: list[str] = []
    if lagging:
        flags.append("generator-lag")
        problems.append(
            f"{tool} fell more than 2% below the offered rate at "
            + ", ".join(f"{r:,.0f}" for r in sorted(lagging))
            + " requests/s (the client fell behind; those rates never count as meeting an SLO)"
        )
    verdict = busy_at(pts, bound_rate, tool)
    if verdict:
        problems.append(verdict)
        if client_saturated(pts, bound_rate):
            flags.append("client-bound")
    steal = [p.server_steal for p in pts if p.server_steal is not None]
    if steal and max(steal) > STEAL_LIMIT:
        flags.append("unstable")
        problems.append(f"the hypervisor stole up to {max(steal):.1f}% of the server's CPUs")
    return flags, verdict


def client_saturated(pts: Sequence[LatencyPoint], rate: float | None) -> bool:
    """The clients' CPUs were saturated at ``rate``: latency may have grown on their side."""
    p = next((p for p in pts if p.rate == rate), None)
    return p is not None and (p.client_busy or 0.0) >= CLIENT_BUSY_LIMIT


def busy_at(pts: Sequence[LatencyPoint], rate: float | None, tool: str) -> str:
    """What was busy at the rate that bounds the figure, in one sentence ("" without one):
    the reader must see whether NGINX's CPU or the clients' ran out first."""
    p = next((p for p in pts if p.rate == rate), None)
    if p is None or rate is None:
        return ""
    server = "unknown" if p.server_busy is None else f"{p.server_busy:.0f}%"
    client = "unknown" if p.client_busy is None else f"{p.client_busy:.0f}%"
    said = (
        f"at {rate:,.0f} requests/s, the first rate past it, the server's CPUs were "
        f"{server} busy and the busiest client's {client}"
    )
    if client_saturated(pts, rate):
        return (
            said + f": the clients saturated ({tool} and any upstream on their CPUs), so "
            "latency may have grown on their side and NGINX's figure lies at or above "
            "this one (a lower bound); add client cores or put the upstream on its own "
            "host (the `upstreams` group)"
        )
    if p.server_busy is not None and p.server_busy < CLIENT_BUSY_LIMIT:
        return (
            said + ": latency rose before NGINX's CPUs saturated (the latency article "
            "ties its spike to 100% CPU), so something else queued: the network, the "
            "clients, the upstream or the hypervisor"
        )
    return said
