"""The upstream web server of the proxy and API-gateway profiles: an nginx of its own
(``playbooks/upstream.yml``, ``templates/nginx-upstream.conf.j2``), on the hosts of the
inventory's ``upstreams`` group, or else a second instance on the server host itself,
pinned to the CPUs the server's nginx does not use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sizing.errors import ToolError
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory
from sizing.plan.jwt import JWT_SECRET
from sizing.plan.points import PlannedPoint
from sizing.provision.ansible import Playbooks
from sizing.provision.platforms.base import Target
from sizing.topology import affinity_masks

__all__ = [
    "UPSTREAM_PORT",
    "UpstreamProvisioner",
    "gateway_vars",
    "upstream_address",
    "upstream_cpus",
    "upstream_host",
    "upstream_port",
]

UPSTREAM_PORT = 8090


def upstream_host(inventory: Inventory, point: PlannedPoint) -> Host:
    """The upstream's inventory host: the first ``upstreams`` host, else the server."""
    ups = inventory.upstreams
    return ups[0] if ups else point.server


def upstream_port(host: Host) -> int:
    return int(host.variables.get("sizing_upstream_port") or UPSTREAM_PORT)


def upstream_cpus(
    facts: Mapping[str, HostFacts], point: PlannedPoint, host: Host
) -> tuple[int, ...]:
    """Where the upstream's worker runs: on the server host, the CPUs nginx does not use
    (the last one: locally the client's core, shared); elsewhere unpinned."""
    if host.name != point.server.name or point.allocation is None:
        return ()
    host_facts = facts.get(host.name)
    if host_facts is None:
        return ()
    used = set(point.allocation.server_cpus)
    free = [c.id for c in host_facts.topology.cpus if c.id not in used]
    return (free[-1],) if free else ()


def upstream_address(inventory: Inventory, point: PlannedPoint, target: Target) -> str:
    host = upstream_host(inventory, point)
    if host.name == point.server.name:
        return "127.0.0.1" if target.address in ("127.0.0.1", "localhost") else target.address
    return host.address


def gateway_vars(inventory: Inventory, point: PlannedPoint, target: Target) -> dict[str, Any]:
    """The nginx.yml variables that make the instance a proxy or an API gateway."""
    prof = point.profile
    if not prof.is_gateway:
        return {}
    host = upstream_host(inventory, point)
    return {
        "sizing_nginx_role": prof.role,
        "sizing_upstream": f"{upstream_address(inventory, point, target)}:{upstream_port(host)}",
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

    def apply(self, point: PlannedPoint, facts: Mapping[str, HostFacts]) -> Host:
        host = upstream_host(self.inventory, point)
        cpus = upstream_cpus(facts, point, host)
        extra = {
            "sizing_hosts": host.name,
            "sizing_upstream_affinity": affinity_masks(cpus) if cpus else "",
        }
        if self.applied == extra:
            return host
        self.step(f"provisioning the upstream nginx on {host.name}")
        res = self.playbooks.run("upstream.yml", [host.name], extravars=extra)
        if not res.ok:
            raise ToolError(
                f"{host.name}: provisioning the upstream nginx failed: {res.why(host.name)}"
            )
        self.applied = extra
        return host
