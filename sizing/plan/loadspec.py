"""What a point asks of each client: the URL, headers and the exact wrk or vegeta argv
(pure functions).

Shared by the sweep's measurement methods, the pre-flight checks and ``sizing run --plan``,
so the dry run prints the very argv the sweep would run.
"""

from __future__ import annotations

from dataclasses import replace

from sizing.inventory import Host
from sizing.load import oha, vegeta, wrk
from sizing.paths import TOOL_DIR as DEFAULT_TOOL_DIR
from sizing.plan.jwt import make_token
from sizing.plan.points import PlannedPoint
from sizing.profiles import Profile

__all__ = [
    "DEFAULT_TOOL_DIR",
    "client_ceiling",
    "client_oha_spec",
    "client_threads",
    "client_vegeta_spec",
    "client_wrk_spec",
    "report_script",
    "request_headers",
    "hist_script",
    "oha_path",
    "tool_dir",
    "url_for",
    "vegeta_path",
]

REPORT_SCRIPT = "wrk_report.lua"


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


def report_script(client: Host) -> str:
    """Where ``playbooks/clients.yml`` put ``wrk_report.lua`` on ``client``."""
    return f"{tool_dir(client)}/{REPORT_SCRIPT}"


def vegeta_path(client: Host) -> str:
    """Where ``playbooks/vegeta.yml`` put vegeta on ``client``."""
    return f"{tool_dir(client)}/vegeta"


def oha_path(client: Host) -> str:
    """Where ``playbooks/oha.yml`` put oha on ``client``."""
    return f"{tool_dir(client)}/oha"


def hist_script(client: Host) -> str:
    """Where ``playbooks/oha.yml`` put ``latency_hist.py`` on ``client``."""
    return f"{tool_dir(client)}/latency_hist.py"


def client_threads(point: PlannedPoint, client: str, connections: int) -> int:
    """wrk threads on ``client``: one per CPU it may use, never more than connections."""
    cpus = point.client_cpus.get(client, ())
    return max(1, min(len(cpus) or 1, connections))


def client_wrk_spec(
    point: PlannedPoint, client: Host, url: str, connections: int, duration_s: float
) -> wrk.WrkSpec:
    """The wrk invocation ``client`` runs for one window of ``point``."""
    prof = point.profile
    return wrk.WrkSpec(
        url=url,
        threads=client_threads(point, client.name, connections),
        connections=connections,
        duration_s=float(duration_s),
        headers=(() if prof.keepalive else ("Connection: close",)) + request_headers(prof),
        cpus=tuple(point.client_cpus.get(client.name, ())),
        script=report_script(client),
    )


def client_vegeta_spec(
    point: PlannedPoint,
    client: Host,
    url: str,
    rate: int,
    duration_s: float,
    *,
    window: bool = True,
) -> vegeta.VegetaSpec:
    """The vegeta attack ``client`` runs for one window of ``point`` at ``rate`` in all
    (every client offers its share). ``window=False``: without what only a real window
    sets (request timeout, keep-alive), as the dry run prints it."""
    spec = vegeta.VegetaSpec(
        url=url,
        rate=max(1, round(rate / len(point.clients))),
        duration_s=duration_s,
        results_file=f"{tool_dir(client)}/vegeta-results.bin",
        headers=request_headers(point.profile),
        cpus=tuple(point.client_cpus.get(client.name, ())),
    )
    if not window:
        return spec
    return replace(
        spec, timeout_s=max(5.0, min(30.0, duration_s)), keepalive=point.profile.keepalive
    )


def client_oha_spec(
    point: PlannedPoint,
    client: Host,
    url: str,
    rate: int,
    duration_s: float,
    *,
    window: bool = True,
) -> oha.OhaSpec:
    """The oha run ``client`` makes for one window of ``point`` at ``rate`` in all (every
    client offers its share, on the profile's connections split between the clients).
    ``window=False``: without what only a real window sets (timeout, raw latencies)."""
    n = len(point.clients)
    spec = oha.OhaSpec(
        url=url,
        rate=max(1, round(rate / n)),
        duration_s=duration_s,
        connections=max(1, round(point.profile.connections / n)),
        headers=request_headers(point.profile),
        keepalive=point.profile.keepalive,
        cpus=tuple(point.client_cpus.get(client.name, ())),
    )
    if not window:
        return spec
    return replace(spec, timeout_s=max(5.0, min(30.0, duration_s)),
                   db_file=f"{tool_dir(client)}/oha-results.db")


def client_ceiling(point: PlannedPoint) -> tuple[float, int, int]:
    """What a fixed-rate point's clients can offer: (requests/s, client cores, planning
    rate per core). Their pinned cores (1 when unpinned) times the generator's planning
    figure per core (``PLANNING_RATE_PER_CORE``, from ``benchmarks/generators``)."""
    per_core = (oha.PLANNING_RATE_PER_CORE if point.profile.generator == "oha"
                else vegeta.PLANNING_RATE_PER_CORE)
    cores = sum(max(1, len(point.client_cpus.get(c.name, ()))) for c in point.clients)
    return float(cores * per_core), cores, per_core
