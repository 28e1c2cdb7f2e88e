"""What a point asks of each client: the URL and the exact wrk argv (pure functions).

Shared by the sweep (``runner``), the pre-flight checks and ``sizing run --plan``, so the
dry run prints the very argv the sweep would run.
"""

from __future__ import annotations

from sizing.apigw import request_headers  # api-jwt: the JWT on every request
from sizing.inventory import Host
from sizing.load import wrk
from sizing.plan import PlannedPoint

__all__ = ["DEFAULT_TOOL_DIR", "client_threads", "client_wrk_spec", "report_script", "url_for"]

DEFAULT_TOOL_DIR = "/var/tmp/sizing"  # playbooks/clients.yml: sizing_tool_dir's default
REPORT_SCRIPT = "wrk_report.lua"


def url_for(point: PlannedPoint, address: str) -> str:
    """The URL clients load for ``point`` on a server reached at ``address``."""
    prof = point.profile
    sz = point.server.sizing
    port = sz.https_port if prof.scheme == "https" else sz.http_port
    host = f"[{address}]" if ":" in address else address
    return f"{prof.scheme}://{host}:{port}{prof.path}"


def report_script(client: Host) -> str:
    """Where ``playbooks/clients.yml`` put ``wrk_report.lua`` on ``client``."""
    tool_dir = str(client.variables.get("sizing_tool_dir") or DEFAULT_TOOL_DIR)
    return f"{tool_dir.rstrip('/')}/{REPORT_SCRIPT}"


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
