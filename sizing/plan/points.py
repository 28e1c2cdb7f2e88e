"""The plan: which points a run measures, on which CPUs, and which it must skip and why.

A point is server host x platform x cores x HT mode x profile. CPUs come from the host's
real topology (read by ``playbooks/facts.yml``); a point the host cannot measure honestly
is planned as skipped with the reason, never measured badly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sizing.errors import UsageError
from sizing.inventory import Host, Inventory
from sizing.model import Ht, PointKey
from sizing.profiles import Profile
from sizing.topology import (
    Allocation,
    CannotAllocate,
    Topology,
    allocate,
    cpulist,
    parse_cpulist,
)

MAX_CORES = 256


@dataclass(frozen=True)
class UpstreamPlacement:
    """Where one upstream nginx of a point runs: a host and its pinned CPUs (none: a host of
    the inventory's ``upstreams`` group, unpinned), and with whom it shares them."""

    host: str
    cpus: tuple[int, ...] = ()
    shares_with: str = ""  # "client": the load generator's CPUs (a small box)
    pid_file: str = "/run/sizing-upstream.pid"  # sizing_upstream_pid_file (sampled)

    def describe(self) -> str:
        where = f"{self.host} CPUs {cpulist(self.cpus)}" if self.cpus else f"{self.host} (all CPUs)"
        if self.shares_with:
            return f"{where}, shared with the {self.shares_with}"
        return where


@dataclass(frozen=True)
class PlannedPoint:
    """One point of the sweep, ready to measure or already skipped."""

    key: PointKey
    server: Host
    clients: tuple[Host, ...]
    profile: Profile
    ht: Ht
    allocation: Allocation | None
    client_cpus: dict[str, tuple[int, ...]]  # client host -> CPUs the load generator may use
    skip_reason: str = ""
    # load-balance, proxy and api-jwt profiles: where the upstream pool runs
    upstreams: tuple[UpstreamPlacement, ...] = ()

    @property
    def skipped(self) -> bool:
        return bool(self.skip_reason)

    @property
    def config(self) -> tuple[str, int, str]:
        """Points sharing a config share one NGINX provisioning."""
        return (self.server.name, self.key.cores, self.key.ht)


def parse_cores(text: str) -> tuple[int, ...]:
    """Parse ``--cores 1,2,4,8``: powers of two, each at least 1."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError("--cores: give at least one core count, e.g. --cores 1,2,4,8")
    out: list[int] = []
    for item in items:
        try:
            n = int(item)
        except ValueError:
            raise UsageError(f"--cores: {item!r} is not a number (e.g. --cores 1,2,4,8)") from None
        if n < 1:
            raise UsageError(f"--cores: {n} is not a core count; use 1 or more")
        if n > MAX_CORES or n & (n - 1):
            raise UsageError(
                f"--cores: {n} is not a supported core count;"
                " use powers of two (1, 2, 4, 8, 16, ...)"
            )
        if n not in out:
            out.append(n)
    return tuple(out)


def _client_cpus(client: Host, topo: Topology) -> tuple[int, ...]:
    if client.sizing.client_cpus:
        return parse_cpulist(client.sizing.client_cpus)
    return tuple(c.id for c in topo.cpus)


def _pid_file(host: Host) -> str:
    return host.sizing.upstream_pid_file or UpstreamPlacement.pid_file


def place_upstreams(
    inventory: Inventory,
    topologies: Mapping[str, Topology],
    server: Host,
    phys: str,
    alloc: Allocation,
    client_cpus: Mapping[str, tuple[int, ...]],
) -> tuple[tuple[UpstreamPlacement, ...], str]:
    """Where a point's upstream pool runs, or why it cannot run (a skip reason).

    The inventory's ``upstreams`` hosts, when it has them (unpinned: hosts of their own).
    Otherwise one nginx on the server host's CPUs outside the measured cores and their HT
    siblings: the client's CPUs when the host loads itself (shared), else the cores the
    point leaves free; a server with no core left puts it on the first client's CPUs.
    """
    if inventory.upstreams:
        down = [h.name for h in inventory.upstreams if h.name not in topologies]
        if down:
            return (), f"upstream {', '.join(down)} is unreachable"
        return tuple(
            UpstreamPlacement(h.name, pid_file=_pid_file(h)) for h in inventory.upstreams
        ), ""
    if phys == server.name:
        own = client_cpus.get(server.name)
        if own:
            return (UpstreamPlacement(server.name, tuple(own), "client", _pid_file(server)),), ""
        topo = topologies.get(server.name)
        if topo is not None:
            try:
                spare = allocate(topo, len(alloc.server_cpus), Ht.OFF, shared_client=True)
            except CannotAllocate:
                spare = None
            # the cores after the measured ones, every sibling of them (allocate() takes
            # physical cores in the same order whatever the HT mode)
            if spare is not None and spare.client_cpus:
                return (
                    UpstreamPlacement(server.name, spare.client_cpus, pid_file=_pid_file(server)),
                ), ""
    for name, cpus in client_cpus.items():
        if cpus:
            host = inventory.hosts.get(name)
            pid = _pid_file(host) if host else UpstreamPlacement.pid_file
            return (UpstreamPlacement(name, tuple(cpus), "client", pid),), ""
    return (), "no CPU outside the measured cores for the upstream nginx; add an upstreams host"


def build_plan(
    inventory: Inventory,
    topologies: dict[str, Topology],
    cores: Sequence[int],
    hts: Iterable[Ht],
    profiles: Sequence[Profile],
    *,
    servers: Sequence[Host] | None = None,
    clients: Sequence[Host] | None = None,
    placement: Mapping[str, str] | None = None,
) -> list[PlannedPoint]:
    """Every point of the sweep, in the order it is measured (config by config).

    ``topologies`` holds the topology of every reachable host. Servers or clients missing
    from it (unreachable) make their points skipped with that reason.

    ``placement`` maps a guest server (a libvirt VM) to the inventory host whose CPUs it
    runs on (its hypervisor): the guest's CPUs are allocated from that host's topology, and
    a client that *is* that host shares it like a bare-metal server loading itself.
    """
    hts = tuple(hts)
    plan: list[PlannedPoint] = []
    all_clients = list(clients if clients is not None else inventory.clients)
    for server in servers if servers is not None else inventory.servers:
        # A server listed as a client too loads itself only when no other client exists.
        others = [c for c in all_clients if c.name != server.name]
        point_clients = (
            tuple(others) if others else tuple(c for c in all_clients if c.name == server.name)
        )
        # -- hypervisor guests (libvirt): plan on the hypervisor's CPUs -----------------
        phys = (placement or {}).get(server.name, server.name)
        shared = not others or any(c.name == phys for c in others)
        topo = topologies.get(phys)
        for n in cores:
            for ht in hts:
                reason = ""
                alloc: Allocation | None = None
                client_cpus: dict[str, tuple[int, ...]] = {}
                if topo is None:
                    reason = (
                        f"host {server.name} is unreachable"
                        if phys == server.name
                        else f"hypervisor {phys} of {server.name} is unreachable"
                    )
                else:
                    try:
                        alloc = allocate(topo, n, ht, shared_client=shared)
                    except CannotAllocate as exc:
                        reason = str(exc)
                if alloc is not None:
                    for c in point_clients:
                        if shared and c.name in (server.name, phys):
                            client_cpus[c.name] = alloc.client_cpus
                        elif c.name in topologies:
                            client_cpus[c.name] = _client_cpus(c, topologies[c.name])
                        else:
                            reason = f"client {c.name} is unreachable"
                for prof in profiles:
                    upstreams: tuple[UpstreamPlacement, ...] = ()
                    why = reason
                    if prof.needs_upstream and alloc is not None and not reason:
                        upstreams, why = place_upstreams(
                            inventory, topologies, server, phys, alloc, client_cpus
                        )
                    plan.append(
                        PlannedPoint(
                            key=PointKey(server.name, str(server.platform), n, str(ht), prof.name),
                            server=server,
                            clients=point_clients,
                            profile=prof,
                            ht=ht,
                            allocation=alloc if not why else None,
                            client_cpus=client_cpus if not why else {},
                            skip_reason=why,
                            upstreams=upstreams,
                        )
                    )
    return plan
