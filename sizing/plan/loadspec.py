"""What a point asks of each client: the URL, headers and the request its load generator
builds its exact argv from (:mod:`sizing.load.tools`; pure functions).

Shared by the sweep's measurement methods, the pre-flight checks and ``sizing run --plan``,
so the dry run prints the very argv the sweep would run.
"""

from __future__ import annotations

from sizing.errors import SizingError
from sizing.inventory import Host
from sizing.load.tools import DEFAULT_GENERATOR, LoadRequest, open_loop_tool, pinned_cpus, tool
from sizing.loadproto import Command
from sizing.paths import TOOL_DIR as DEFAULT_TOOL_DIR
from sizing.plan.jwt import make_token
from sizing.plan.points import PlannedPoint
from sizing.plan.replay import point_targets
from sizing.profiles import Profile

__all__ = [
    "DEFAULT_TOOL_DIR",
    "client_ceiling",
    "client_command",
    "client_request",
    "client_summary",
    "closed_request",
    "generator_problem",
    "request_headers",
    "tool_dir",
    "url_for",
]


def generator_problem(profile: Profile) -> str:
    """Why ``profile``'s generator cannot measure it, from the tool's capabilities
    (unregistered, no TLS, no full handshakes); "" when it can."""
    try:
        gen = tool(profile.generator)
    except SizingError as exc:
        return f"profile {profile.name}: generator: {exc}"
    caps = gen.capabilities
    if profile.mode == "fixed-rate":
        return ""  # offered by an open-loop tool (open_loop_tool)
    if profile.scheme == "https" and not caps.tls:
        return f"profile {profile.name}: generator: {gen.name} does not load https:// URLs"
    if not profile.keepalive and not caps.full_handshakes:
        return (
            f"profile {profile.name}: generator: {gen.name} cannot close each connection "
            "(keepalive: false needs a generator that makes full handshakes, e.g. "
            f"{DEFAULT_GENERATOR})"
        )
    return ""


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


def closed_request(
    point: PlannedPoint,
    client: Host,
    url: str,
    connections: int,
    duration_s: float,
    *,
    window: bool = True,
) -> LoadRequest:
    """``client``'s request for one closed-loop window of ``point`` (``connections``: this
    client's); ``window=False``: as the dry run prints it."""
    prof = point.profile
    headers = request_headers(prof)
    return LoadRequest(
        url=url,
        duration_s=float(duration_s),
        connections=connections,
        tool_dir=tool_dir(client),
        headers=headers,
        keepalive=prof.keepalive,
        cpus=pinned_cpus(prof.generator, tuple(point.client_cpus.get(client.name, ()))),
        window=window,
        # a replayed customer workload: its weighted targets (sizing.plan.replay)
        targets=point_targets(point, url) if prof.workload else "",
    )


def client_summary(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> list[str]:
    """The argv the plan prints for one closed-loop window of ``point`` on ``client``: the
    profile's generator's own summary (:meth:`sizing.load.base.LoadTool.summary`)."""
    req = closed_request(point, client, url, connections, duration_s, window=False)
    return tool(point.profile.generator).summary(req)


def client_command(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> Command:
    """The command ``client`` runs for one closed-loop window of ``point``, built by the
    profile's generator from :func:`closed_request`."""
    req = closed_request(point, client, url, connections, duration_s)
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
        cpus=_open_loop_cpus(point, client),
        window=window,
    )


def _open_loop_cpus(point: PlannedPoint, client: Host) -> tuple[int, ...]:
    """The CPUs the point's open-loop tool is pinned to on ``client``
    (:func:`~sizing.load.tools.pinned_cpus`)."""
    cpus = tuple(point.client_cpus.get(client.name, ()))
    return pinned_cpus(open_loop_tool(point.profile.generator).name, cpus)


def client_ceiling(point: PlannedPoint) -> tuple[float, int, int]:
    """What a fixed-rate point's clients can offer: (requests/s, client cores, planning
    rate per core). Their pinned cores (1 when unpinned) times the generator's planning
    figure per core (``PLANNING_RATE_PER_CORE``, from ``benchmarks/generators``)."""
    per_core = open_loop_tool(point.profile.generator).planning_rate_per_core
    cores = sum(max(1, len(_open_loop_cpus(point, c))) for c in point.clients)
    return float(cores * per_core), cores, per_core
