"""What a point asks of each client: the URL, headers and the request its load generator
builds its exact argv from (:mod:`sizing.load.tools`; pure functions).

Shared by the sweep's measurement methods, the pre-flight checks and ``sizing run --plan``,
so the dry run prints the very argv the sweep would run.
"""

from __future__ import annotations

from sizing.inventory import Host
from sizing.load import wrk
from sizing.load.tools import WRK, LoadRequest, open_loop_tool, tool
from sizing.loadproto import Command
from sizing.paths import TOOL_DIR as DEFAULT_TOOL_DIR
from sizing.plan.jwt import make_token
from sizing.plan.points import PlannedPoint
from sizing.profiles import Profile

__all__ = [
    "DEFAULT_TOOL_DIR",
    "client_ceiling",
    "client_command",
    "client_request",
    "client_wrk_spec",
    "request_headers",
    "tool_dir",
    "url_for",
]


def url_for(point: PlannedPoint, address: str) -> str:
    """The URL clients load for ``point`` on a server reached at ``address``."""
    prof = point.profile
    sz = point.server.sizing
    port = sz.https_port if prof.scheme == "https" else sz.http_port
    host = f"[{address}]" if ":" in address else address
    return f"{prof.scheme}://{host}:{port}{prof.path}"


def request_headers(profile: Profile, token: str | None = None) -> tuple[str, ...]:
    """Extra request headers the load generator sends for ``profile`` (the JWT)."""
    if profile.role == "api-jwt":
        return (f"Authorization: Bearer {token or make_token()}",)
    return ()


def tool_dir(client: Host) -> str:
    """Where ``playbooks/clients.yml`` puts sizing's tools on ``client``."""
    return str(client.variables.get("sizing_tool_dir") or DEFAULT_TOOL_DIR).rstrip("/")


def client_wrk_spec(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> wrk.WrkSpec:
    """The wrk invocation ``client`` runs for one window of ``point`` (``connections``:
    this client's), as the registry's wrk builds it (:data:`sizing.load.tools.WRK`)."""
    return WRK.spec(_closed_request(point, client, url, connections, duration_s))


def _closed_request(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> LoadRequest:
    prof = point.profile
    return LoadRequest(
        url=url,
        duration_s=float(duration_s),
        connections=connections,
        tool_dir=tool_dir(client),
        headers=request_headers(prof),
        keepalive=prof.keepalive,
        cpus=tuple(point.client_cpus.get(client.name, ())),
    )


def client_command(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> Command:
    """The command ``client`` runs for one closed-loop window of ``point``, built by the
    profile's generator from the same request as :func:`client_wrk_spec`'s."""
    req = _closed_request(point, client, url, connections, duration_s)
    return tool(point.profile.generator).command(req)


def client_request(
    point: PlannedPoint,
    client: Host,
    url: str,
    rate: int,
    duration_s: float,
    *,
    window: bool = True,
) -> LoadRequest:
    """``client``'s share of one open-loop window of ``point`` at ``rate`` in all: every
    client offers its share of the rate, on its share of the profile's connections. The
    tool (:func:`sizing.load.tools.open_loop_tool`) builds its own argv from it;
    ``window=False``: without what only a real window sets, as the dry run prints it."""
    n = len(point.clients)
    return LoadRequest(
        url=url,
        rate=max(1, round(rate / n)),
        duration_s=duration_s,
        connections=max(1, round(point.profile.connections / n)),
        tool_dir=tool_dir(client),
        headers=request_headers(point.profile),
        keepalive=point.profile.keepalive,
        cpus=tuple(point.client_cpus.get(client.name, ())),
        window=window,
    )


def client_ceiling(point: PlannedPoint) -> tuple[float, int, int]:
    """What a fixed-rate point's clients can offer: (requests/s, client cores, planning
    rate per core). Their pinned cores (1 when unpinned) times the generator's planning
    figure per core (``PLANNING_RATE_PER_CORE``, from ``benchmarks/generators``)."""
    per_core = open_loop_tool(point.profile.generator).planning_rate_per_core
    cores = sum(max(1, len(point.client_cpus.get(c.name, ()))) for c in point.clients)
    return float(cores * per_core), cores, per_core
