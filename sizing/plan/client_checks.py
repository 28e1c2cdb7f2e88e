"""The pre-flight checks of what the clients' load generators are asked: the argv each
builds for its windows, and the rates a fixed-rate sweep asks them to offer
(:mod:`sizing.plan.preflight` runs them with the others)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sizing.errors import SizingError
from sizing.inventory import Host
from sizing.load.tools import open_loop_tool
from sizing.plan.loadspec import client_ceiling, client_request, client_summary, url_for
from sizing.plan.points import PlannedPoint

__all__ = ["check_client_argv", "check_offered_rates"]


def check_client_argv(
    point: PlannedPoint,
    client: Host,
    connections: int,
    duration_s: float,
    rates: Sequence[int] = (),
) -> list[str]:
    """Build the client's real argv (the profile's generator's: a closed-loop window's, or a
    fixed-rate profile's open-loop window at its highest rate); a request the tool would
    refuse is one line."""
    url = url_for(point, point.server.address)
    try:
        if point.profile.mode == "fixed-rate":
            top = max(rates, default=1)
            req = client_request(point, client, url, top, duration_s, window=False)
            open_loop_tool(point.profile.generator).command(req)
        else:
            client_summary(point, client, url, connections, duration_s)
    except SizingError as exc:
        return [f"{client.name}: {exc}"]
    return []


def check_offered_rates(point: PlannedPoint, rates: Sequence[int]) -> list[str]:
    """A fixed-rate sweep whose highest rate the clients cannot offer is refused: the
    generator, not the server, would set the curve (and the knee) there."""
    if point.profile.mode != "fixed-rate" or not rates:
        return []
    ceiling, cores, per_core = client_ceiling(point)
    top = max(rates)
    if top <= ceiling:
        return []
    need = math.ceil(top / per_core)
    names = ", ".join(c.name for c in point.clients)
    return [
        f"{names}: --rates up to {top:,} requests/s needs {need} client core(s) of "
        f"{point.profile.generator} at its planning figure of {per_core:,}/s per core "
        f"(benchmarks/generators); the clients have {cores}: lower the rates, or add "
        "client cores or clients"
    ]
