"""The upstream pool of the load-balancing, proxy and API-gateway profiles: nginx
instances of their own (``playbooks/upstream.yml``, ``templates/nginx-upstream.conf.j2``)
where the plan placed them (:class:`~sizing.plan.points.UpstreamPlacement`): on the hosts
of the inventory's ``upstreams`` group, or else on client-side CPUs, never on the measured
cores or their HT siblings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sizing.errors import ToolError
from sizing.inventory import Host, Inventory
from sizing.plan.jwt import JWT_SECRET
from sizing.plan.points import PlannedPoint
from sizing.plan.replay import point_plan
from sizing.provision.ansible import Playbooks
from sizing.provision.platforms.base import Target
from sizing.topology import affinity_masks

__all__ = [
    "UPSTREAM_PORT",
    "UpstreamProvisioner",
    "gateway_vars",
    "upstream_addresses",
    "upstream_url",
    "upstream_port",
]

UPSTREAM_PORT = 8090
UPSTREAM_KEEPALIVE = 64  # idle cached connections per worker when the profile sets none


def upstream_port(host: Host) -> int:
    return int(host.variables.get("sizing_upstream_port") or UPSTREAM_PORT)


def _address(inventory: Inventory, point: PlannedPoint, target: Target, name: str) -> str:
    """Where the server's nginx reaches the upstream on ``name``."""
    if name in (point.server.name, target.host):
        return "127.0.0.1" if target.address in ("127.0.0.1", "localhost") else target.address
    host = inventory.hosts[name]
    if host.is_local and target.address in ("127.0.0.1", "localhost"):
        return "127.0.0.1"
    return host.address


def upstream_addresses(inventory: Inventory, point: PlannedPoint, target: Target) -> list[str]:
    """``address:port`` of every upstream of the point's pool."""
    out = []
    for up in point.upstreams:
        addr = _address(inventory, point, target, up.host)
        addr = f"[{addr}]" if ":" in addr else addr
        out.append(f"{addr}:{upstream_port(inventory.hosts[up.host])}")
    return out


def upstream_url(inventory: Inventory, point: PlannedPoint, target: Target) -> str:
    """``http://address:port`` of the pool's first upstream (the single-request baseline)."""
    return f"http://{upstream_addresses(inventory, point, target)[0]}"


def gateway_vars(inventory: Inventory, point: PlannedPoint, target: Target) -> dict[str, Any]:
    """The nginx.yml variables that make the instance a load balancer, proxy or gateway."""
    prof = point.profile
    if not prof.needs_upstream:
        return {}
    return {
        "sizing_nginx_role": prof.role,
        "sizing_upstreams": upstream_addresses(inventory, point, target),
        "sizing_upstream_keepalive": prof.upstream_keepalive or UPSTREAM_KEEPALIVE,
        "sizing_jwt_secret": JWT_SECRET,
    }


class UpstreamProvisioner:
    """Starts (or keeps) the upstream nginx with ``playbooks/upstream.yml``."""

    def __init__(
        self, playbooks: Playbooks, inventory: Inventory, step: Callable[[str], None]
    ) -> None:
        self.playbooks = playbooks
        self.inventory = inventory
        self.step = step
        self.applied: dict[str, Any] | None = None

    def apply(self, point: PlannedPoint) -> list[Host]:
        """Start the point's upstream pool (one nginx per placement); its hosts."""
        hosts = [self.inventory.hosts[up.host] for up in point.upstreams]
        pinned = {up.cpus for up in point.upstreams}
        cpus = next(iter(pinned)) if len(pinned) == 1 else ()
        extra: dict[str, Any] = {
            "sizing_hosts": ",".join(h.name for h in hosts),
            "sizing_upstream_affinity": affinity_masks(cpus) if cpus else "",
        }
        if point.profile.workload:  # a replayed workload's files, proxied to the pool
            extra["sizing_mix_files"] = point_plan(point, "").files
        if self.applied == extra:
            return hosts
        names = ", ".join(h.name for h in hosts)
        self.step(f"provisioning the upstream nginx on {names}")
        res = self.playbooks.run("upstream.yml", [h.name for h in hosts], extravars=extra)
        if not res.ok:
            bad = next((h.name for h in hosts if res.why(h.name)), hosts[0].name)
            raise ToolError(f"{bad}: provisioning the upstream nginx failed: {res.why(bad)}")
        self.applied = extra
        return hosts
