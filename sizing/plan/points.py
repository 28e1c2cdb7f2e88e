"""The plan: which points a run measures, on which CPUs, and which it must skip and why.

A point is server host x platform x cores x HT mode x profile. CPUs come from the host's
real topology (read by ``playbooks/facts.yml``); a point the host cannot measure honestly
is planned as skipped with the reason, never measured badly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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
    """Parse ``--cores 1,2,4,8``: each at least 1 and at most :data:`MAX_CORES`; any count
    (12, 20, 24: the cores of the servers customers buy, one socket of the lab host)."""
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
        if n > MAX_CORES:
            raise UsageError(f"--cores: {n} is not a supported core count; use at most {MAX_CORES}")
        if n not in out:
            out.append(n)
    return tuple(out)


def _client_cpus(client: Host, topo: Topology) -> tuple[int, ...]:
    if client.sizing.client_cpus:
        return parse_cpulist(client.sizing.client_cpus)
    return tuple(c.id for c in topo.cpus)


@dataclass
class _ClientSets:
    """Each client's CPU set, computed once per client and shared by every point that does
    not load its own host: a plan's cost then grows with points and hosts, not with points
    x clients x client CPUs (an 80-thread load generator costs what an 8-thread one does)."""

    topologies: Mapping[str, Topology]
    cpus: dict[str, tuple[int, ...]]
    by_clients: dict[tuple[str, ...], tuple[dict[str, tuple[int, ...]], str]]
    # by the identity of a clients tuple (kept alive here, so the id stays its own)
    by_tuple: dict[int, tuple[tuple[Host, ...], tuple[dict[str, tuple[int, ...]], str]]] = field(
        default_factory=dict
    )

    def of(self, clients: tuple[Host, ...]) -> tuple[dict[str, tuple[int, ...]], str]:
        """The reachable ``clients``' CPU sets (one dict, shared: never mutated), and the
        skip reason of the last unreachable one ("" when all are reachable)."""
        last = self.by_tuple.get(id(clients))
        if last is not None and last[0] is clients:  # the servers that share one tuple
            return last[1]
        key = tuple(c.name for c in clients)
        if key not in self.by_clients:
            sets: dict[str, tuple[int, ...]] = {}
            reason = ""
            for c in clients:
                if c.name not in self.topologies:
                    reason = f"client {c.name} is unreachable"
                    continue
                if c.name not in self.cpus:
                    self.cpus[c.name] = _client_cpus(c, self.topologies[c.name])
                sets[c.name] = self.cpus[c.name]
            self.by_clients[key] = (sets, reason)
        self.by_tuple[id(clients)] = (clients, self.by_clients[key])
        return self.by_clients[key]


def _pid_file(host: Host) -> str:
    return host.sizing.upstream_pid_file or UpstreamPlacement.pid_file


def place_upstreams(
    inventory: Inventory,
    topologies: Mapping[str, Topology],
    server: Host,
    phys: str,
    alloc: Allocation,
    client_cpus: Mapping[str, tuple[int, ...]],
    *,
    upstream_hosts: Sequence[Host] | None = None,
) -> tuple[tuple[UpstreamPlacement, ...], str]:
    """Where a point's upstream pool runs, or why it cannot run (a skip reason).

    The inventory's ``upstreams`` hosts, when it has them (unpinned: hosts of their own).
    Otherwise one nginx on the server host's CPUs outside the measured cores and their HT
    siblings: the client's CPUs when the host loads itself (shared), else the cores the
    point leaves free; a server with no core left puts it on the first client's CPUs.
    ``upstream_hosts``: the inventory's ``upstreams`` group when the caller read it already.
    """
    ups = inventory.upstreams if upstream_hosts is None else upstream_hosts
    if ups:
        down = [h.name for h in ups if h.name not in topologies]
        if down:
            return (), f"upstream {', '.join(down)} is unreachable"
        return tuple(UpstreamPlacement(h.name, pid_file=_pid_file(h)) for h in ups), ""
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
    all_clients = tuple(clients if clients is not None else inventory.clients)
    client_names = {c.name for c in all_clients}
    config = _Configs(inventory, topologies, _ClientSets(topologies, {}, {}), inventory.upstreams)
    for server in servers if servers is not None else inventory.servers:
        # A server listed as a client too loads itself only when no other client exists.
        # A server that is no client shares the one tuple of all clients (no copy per server).
        others = (
            all_clients
            if server.name not in client_names
            else tuple(c for c in all_clients if c.name != server.name)
        )
        point_clients = others or tuple(c for c in all_clients if c.name == server.name)
        # -- hypervisor guests (libvirt): plan on the hypervisor's CPUs -----------------
        phys = (placement or {}).get(server.name, server.name)
        shared = not others or (phys != server.name and phys in client_names)
        for n in cores:
            for ht in hts:
                plan += config.points(server, phys, point_clients, shared, n, ht, profiles)
    return plan


@dataclass
class _Configs:
    """The points of one configuration (server x core count x HT mode): the CPUs are
    allocated and the upstream pool placed once per configuration, not once per profile."""

    inventory: Inventory
    topologies: Mapping[str, Topology]
    client_sets: _ClientSets
    upstream_hosts: Sequence[Host]  # the inventory's upstreams group, read once per plan
    # per (server, host, loads itself): its clients and their CPU sets
    _per_server: dict[
        tuple[str, str, bool],
        tuple[tuple[Host, ...], tuple[dict[str, tuple[int, ...]], str]],
    ] = field(default_factory=dict)

    def points(
        self,
        server: Host,
        phys: str,
        point_clients: tuple[Host, ...],
        shared: bool,
        n: int,
        ht: Ht,
        profiles: Sequence[Profile],
    ) -> list[PlannedPoint]:
        """The configuration's points, one per profile, in ``profiles`` order. ``shared``:
        the server's host loads itself (a client is that host)."""
        alloc, client_cpus, reason = self._allocate(server, phys, point_clients, shared, n, ht)
        placed: tuple[tuple[UpstreamPlacement, ...], str] | None = None
        out: list[PlannedPoint] = []
        for prof in profiles:
            upstreams: tuple[UpstreamPlacement, ...] = ()
            why = reason
            if prof.needs_upstream and alloc is not None and not reason:
                if placed is None:
                    placed = place_upstreams(
                        self.inventory,
                        self.topologies,
                        server,
                        phys,
                        alloc,
                        client_cpus,
                        upstream_hosts=self.upstream_hosts,
                    )
                upstreams, why = placed
            out.append(
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
        return out

    def _others(
        self, server: Host, phys: str, point_clients: tuple[Host, ...], own: set[str]
    ) -> tuple[dict[str, tuple[int, ...]], str]:
        """The CPU sets of the clients other than the server's own host, once per server
        (the same for each of its configurations: a server's configurations then cost
        nothing per client)."""
        key = (server.name, phys, bool(own))
        if self._per_server.get(key, (None,))[0] is not point_clients:
            clients = (
                point_clients if not own else tuple(c for c in point_clients if c.name not in own)
            )
            self._per_server[key] = (point_clients, self.client_sets.of(clients))
        return self._per_server[key][1]

    def _allocate(
        self,
        server: Host,
        phys: str,
        point_clients: tuple[Host, ...],
        shared: bool,
        n: int,
        ht: Ht,
    ) -> tuple[Allocation | None, dict[str, tuple[int, ...]], str]:
        """The configuration's CPUs (server and clients), or why it is skipped."""
        topo = self.topologies.get(phys)
        if topo is None:
            if phys == server.name:
                return None, {}, f"host {server.name} is unreachable"
            return None, {}, f"hypervisor {phys} of {server.name} is unreachable"
        own = {server.name, phys} if shared else set()
        try:
            alloc = allocate(topo, n, ht, shared_client=shared)
        except CannotAllocate as exc:
            return None, {}, str(exc)
        others, unreachable = self._others(server, phys, point_clients, own)
        if not own:
            return alloc, others, unreachable
        # the host loads itself: its client CPUs are this point's own
        return (
            alloc,
            {
                c.name: alloc.client_cpus if c.name in own else others[c.name]
                for c in point_clients
                if c.name in own or c.name in others
            },
            unreachable,
        )
