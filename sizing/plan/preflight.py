"""Pre-flight checks: what must hold on every host before any load runs.

The sweep calls :func:`preflight` after reading the host facts (``playbooks/facts.yml``,
``playbooks/files/hostfacts.py``) and planning, before it installs or starts anything.
Every check is a pure function of the facts and the plan that returns problem lines of
the form ``host: what is wrong; what to do``. All failing checks of all hosts are raised
together as one :class:`PreflightError`, so a lab is fixed in one pass.

The checks:

* every host is reachable (its facts were read);
* its clock agrees with this machine's within a bound (clients start at a common time);
* the open-files limit nginx gets, and ``worker_connections``, carry the connections a
  point sends to the server; the clients' open-files limit carries their connections;
* the clients' ephemeral port range and the server's ``somaxconn`` suffice;
* the generator's argv builds (a closed-loop tool: threads at most its connections; checked);
* the nginx CPU masks are well formed, one CPU each, on CPUs the server has online, and
  the clients' CPU lists name CPUs they have.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.errors import PreflightError, SizingError
from sizing.inventory import Host
from sizing.inventory.model import is_loopback
from sizing.plan.client_checks import check_client_argv, check_offered_rates
from sizing.plan.points import PlannedPoint
from sizing.profiles import Profile
from sizing.records.host import HostRecord
from sizing.topology import Topology, affinity_masks, cpulist, parse_cpulist

__all__ = [
    "CLOCK_BOUND_S",
    "PreflightError",
    "Requirements",
    "check_clock",
    "check_client_limits",
    "check_cpu_masks",
    "check_plan",
    "check_reach",
    "check_reachable",
    "check_server_limits",
    "check_client_argv",
    "offline_checks",
    "preflight",
    "same_address",
    "requirements",
]

CLOCK_BOUND_S = 1.0  # the common start time of a point's clients tolerates this much
NGINX_BACKLOG = 511  # nginx's default listen backlog on Linux (NGX_LISTEN_BACKLOG)
NGINX_DEFAULT_WORKER_CONNECTIONS = 16384  # playbooks/nginx.yml's default
NGINX_DEFAULT_RLIMIT_NOFILE = 65536  # playbooks/nginx.yml's default
SPARE_FDS_SERVER = 64  # listen sockets, logs, open_file_cache, epoll
SPARE_FDS_CLIENT = 16  # the generator's epoll descriptors, stdio, its report script


@dataclass
class Requirements:
    """What the planned points ask of one host (the worst case over its points)."""

    host: Host
    server_connections: int = 0  # connections all clients open to this server at once
    server_workers: int = 0  # fewest workers sharing them (worst case per worker)
    client_connections: int = 0  # connections this host's load generator opens
    masks: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)  # (masks, cpus)
    client_cpus: set[int] = field(default_factory=set)


def requirements(
    plan: Sequence[PlannedPoint], connections: Callable[[Profile], int]
) -> dict[str, Requirements]:
    """Per host, the worst case of what the measured (not skipped) points need."""
    out: dict[str, Requirements] = {}
    for p in plan:
        if p.skipped or p.allocation is None:
            continue
        conns = connections(p.profile)
        srv = out.setdefault(p.server.name, Requirements(p.server))
        total = conns * len(p.clients)
        workers = len(p.allocation.server_cpus)
        if total > srv.server_connections:
            srv.server_connections = total
        if srv.server_workers == 0 or workers < srv.server_workers:
            srv.server_workers = workers
        entry = (affinity_masks(p.allocation.server_cpus), tuple(p.allocation.server_cpus))
        if entry not in srv.masks:
            srv.masks.append(entry)
        for c in p.clients:
            req = out.setdefault(c.name, Requirements(c))
            req.client_connections = max(req.client_connections, conns)
            req.client_cpus.update(p.client_cpus.get(c.name, ()))
    return out


# -- the checks (pure) -----------------------------------------------------------------


def check_reachable(hosts: Iterable[str], unreachable: Mapping[str, str]) -> list[str]:
    """One line per host whose facts could not be read."""
    return [f"{h}: {unreachable[h]}" for h in sorted(set(hosts)) if h in unreachable]


def check_clock(
    host: str,
    host_time: float | None,
    window: tuple[float, float] | None,
    bound_s: float = CLOCK_BOUND_S,
) -> list[str]:
    """The host's clock, read during the facts task, against this machine's.

    ``window`` is this machine's time when the task started on the host and when its
    result came back: the host read its clock in between, so the offset is known to
    within that round trip. Only an offset beyond ``bound_s`` outside the window fails.
    """
    if host_time is None or window is None:
        return []
    start, end = window
    if start - bound_s <= host_time <= end + bound_s:
        return []
    if host_time > end:
        off, how = host_time - end, "ahead of"
    else:
        off, how = start - host_time, "behind"
    return [
        f"{host}: clock is {off:.1f} s {how} this machine's (bound {bound_s:g} s, "
        f"round trip {end - start:.1f} s); synchronise it (chrony or systemd-timesyncd): "
        f"clients start a point's load at a common time"
    ]


def _nginx_nofile(facts: HostRecord, wanted: int) -> tuple[int, str]:
    """The open-files limit nginx will get (as playbooks/nginx.yml sets it) and why."""
    hard = facts.nofile_hard
    if facts.cap_sys_resource or hard is None or int(hard) >= wanted:
        return wanted, f"worker_rlimit_nofile {wanted}"
    return int(hard), f"hard limit {hard} (cannot raise it to {wanted})"


def check_server_limits(
    host: Host,
    facts: HostRecord,
    total_connections: int,
    workers: int,
) -> list[str]:
    """nginx's open files and ``worker_connections``, and ``somaxconn``, on a server."""
    if total_connections <= 0:
        return []
    out: list[str] = []
    name = host.name
    wanted = host.sizing.nginx_rlimit_nofile or NGINX_DEFAULT_RLIMIT_NOFILE
    nofile, why = _nginx_nofile(facts, wanted)
    # With reuseport the kernel spreads connections over the workers, unevenly: count on
    # a worker getting up to twice its share, and never more than all of them.
    per_worker = min(total_connections, math.ceil(2 * total_connections / max(workers, 1)))
    if nofile < per_worker + SPARE_FDS_SERVER:
        out.append(
            f"{name}: nginx may open {nofile} files ({why}), fewer than the "
            f"{per_worker} connections a worker may hold plus {SPARE_FDS_SERVER} spare; "
            f"raise the hard open-files limit (limits.conf, LimitNOFILE) or lower --connections"
        )
    wc = host.sizing.nginx_worker_connections or NGINX_DEFAULT_WORKER_CONNECTIONS
    if wc < per_worker:
        out.append(
            f"{name}: worker_connections {wc} is below the {per_worker} connections a "
            f"worker may hold ({total_connections} in all over {workers} worker(s)); "
            f"raise sizing_nginx_worker_connections or lower --connections"
        )
    somaxconn = facts.somaxconn or 0
    needed = min(total_connections, NGINX_BACKLOG)
    if somaxconn and somaxconn < needed:
        out.append(
            f"{name}: net.core.somaxconn {somaxconn} caps nginx's listen backlog below the "
            f"{needed} connections clients open at once; raise it "
            f"(sysctl -w net.core.somaxconn={max(4096, needed)})"
        )
    return out


def _port_range(text: Any) -> int | None:
    parts = str(text or "").split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    lo, hi = int(parts[0]), int(parts[1])
    return max(0, hi - lo + 1)


def check_client_limits(host: Host, facts: HostRecord, connections: int) -> list[str]:
    """The load generator's open files and the ephemeral ports on a client."""
    if connections <= 0:
        return []
    out: list[str] = []
    name = host.name
    soft = facts.nofile_soft
    if soft is not None and int(soft) < connections + SPARE_FDS_CLIENT:
        out.append(
            f"{name}: open-files limit {soft} is below the {connections} connections the load "
            f"generator opens plus {SPARE_FDS_CLIENT}; raise it (ulimit -n, limits.conf) for "
            f"{host.variables.get('ansible_user', 'the Ansible user')} or lower --connections"
        )
    ports = _port_range(facts.ip_local_port_range)
    if ports is not None and ports < connections:
        out.append(
            f"{name}: the ephemeral port range ({' '.join(str(facts.ip_local_port_range).split())}"
            f", {ports} ports) is smaller than the {connections} connections the load generator "
            "opens; widen net.ipv4.ip_local_port_range"
        )
    return out


_MASK = re.compile(r"^[01]+$")


def check_cpu_masks(
    host: str,
    masks: str,
    cpus: Sequence[int],
    topology: Topology | None,
) -> list[str]:
    """nginx ``worker_cpu_affinity`` masks: one well-formed, distinct mask per worker,
    each naming exactly one CPU the server has online."""
    words = masks.split()
    problems: list[str] = []
    if len(words) != len(cpus):
        problems.append(f"{len(words)} masks for {len(cpus)} workers")
    named: list[int] = []
    for w in words:
        if not _MASK.match(w) or w.count("1") != 1:
            problems.append(f"mask {w!r} is not one binary mask with exactly one CPU")
            continue
        named.append(len(w) - 1 - w.index("1"))
    if len(set(named)) != len(named):
        problems.append("two workers share a CPU")
    if sorted(named) != sorted(cpus) and not problems:
        problems.append(f"masks name CPUs {sorted(named)}, not the planned {sorted(cpus)}")
    if topology is not None:
        online = {c.id for c in topology.cpus}
        missing = sorted(set(named) - online)
        if missing:
            problems.append(f"CPU(s) {missing} are not online on the host")
    return [f"{host}: worker_cpu_affinity '{masks}' is wrong: {p}" for p in problems]


def check_client_cpus(host: Host, cpus: Iterable[int], topology: Topology | None) -> list[str]:
    """The CPUs a client's load generator is pinned to, and every CPU its ``sizing_client_cpus``
    names (the planner keeps only the ones it finds, which hides a list written for
    another host), exist on that client."""
    wanted = set(cpus)
    if host.sizing.client_cpus:
        try:
            wanted |= set(parse_cpulist(host.sizing.client_cpus))
        except SizingError as exc:
            return [f"{host.name}: sizing_client_cpus {host.sizing.client_cpus!r}: {exc}"]
    if topology is None or not wanted:
        return []
    online = sorted(c.id for c in topology.cpus)
    missing = sorted(wanted - set(online))
    if missing:
        return [
            f"{host.name}: the load generator would be pinned to CPU(s) {cpulist(missing)}, "
            f"which the host does not have online (online: {cpulist(online)}); "
            "fix sizing_client_cpus"
        ]
    return []


def same_address(servers: Sequence[Host]) -> list[str]:
    """One line per load address and port that two servers of the inventory share: one
    machine named twice (``--probe`` also compares machine-ids). Loopback addresses count
    as one; SSH endpoints do not count (Vagrant forwards one port per guest to 127.0.0.1)."""
    by: dict[tuple[str, int], list[str]] = {}
    for h in servers:
        addr = h.address.strip().lower()
        if is_loopback(addr):
            addr = "this machine (loopback)"
        by.setdefault((addr, h.sizing.http_port), []).append(h.name)
    return [
        f"{' and '.join(sorted(names))} are the same machine ({addr}), loaded at port "
        f"{port}: name it once in the inventory, or two servers would share its CPUs and "
        "its ports"
        for (addr, port), names in sorted(by.items())
        if len(names) > 1
    ]


def _same_machine(server: Host, client: Host) -> bool:
    """Whether ``client`` runs on the machine whose loopback ``server`` is loaded at (a
    container's loopback-published port is its host's)."""
    return client.name in (server.name, server.runs_on) or (server.is_local and client.is_local)


def check_reach(plan: Sequence[PlannedPoint]) -> list[str]:
    """A server loaded at a loopback address (or over ``ansible_connection: local``
    without ``sizing_address``) can only be loaded by a client on the same machine: any
    other client would load its own loopback, whatever listens there."""
    lines: list[str] = []
    for p in plan:
        if p.skipped or not is_loopback(p.server.address):
            continue
        s = p.server
        why = (
            "ansible_connection: local"
            if s.is_local and not s.sizing.address
            else f"{'sizing_address' if s.sizing.address else 'ansible_host'} {s.address}"
        )
        for c in p.clients:
            if _same_machine(s, c):
                continue
            line = (
                f"{s.name}: clients load it at {s.address} ({why}), but client {c.name} "
                f"(over {c.connection}, at {c.ansible_address}) would load its own loopback; "
                f"give {s.name} an address the clients reach (sizing_address), or load it "
                "from a client on the same machine"
            )
            if line not in lines:
                lines.append(line)
    return lines


def offline_checks(
    plan: Sequence[PlannedPoint], servers: Sequence[Host], topologies: Mapping[str, Topology]
) -> list[str]:
    """What ``--plan`` can check without contacting a host: the CPUs each client is pinned
    to exist in its declared (or, for this machine, its own) topology, and no machine is
    named twice as a server, and no client is aimed at its own loopback."""
    lines: list[str] = []
    seen: set[str] = set()
    read: set[int] = set()  # the clients tuples read (the servers' points share one)
    for p in plan:
        if p.skipped or id(p.clients) in read:
            continue
        read.add(id(p.clients))
        for c in (c for c in p.clients if c.name not in seen):
            seen.add(c.name)
            lines += check_client_cpus(c, p.client_cpus.get(c.name, ()), topologies.get(c.name))
    return check_reach(plan) + lines + same_address(servers)


# -- all checks over a plan --------------------------------------------------------------


def check_plan(
    plan: Sequence[PlannedPoint],
    facts: Mapping[str, HostRecord],
    *,
    connections: Callable[[Profile], int],
    duration_s: Callable[[Profile], float] = lambda p: p.duration_s,
    hosts: Iterable[str] = (),
    unreachable: Mapping[str, str] | None = None,
    clock: Mapping[str, tuple[float, float]] | None = None,
    topologies: Mapping[str, Topology] | None = None,
    clock_bound_s: float = CLOCK_BOUND_S,
    rates: Callable[[Profile], Sequence[int]] = lambda p: (),
) -> list[str]:
    """Every problem line of every check, in host order, each line once. ``rates``: the
    offered rates a fixed-rate profile was given (``--rates``; none: a climb to the knee,
    which stops at the clients' ceiling by itself)."""
    lines: list[str] = []
    lines += check_reachable(hosts, unreachable or {})
    lines += check_reach(plan)
    for name in sorted(facts):
        lines += check_clock(
            name,
            facts[name].time,
            (clock or {}).get(name),
            clock_bound_s,
        )
    topologies = topologies or {}
    for name, req in sorted(requirements(plan, connections).items()):
        host_facts = facts.get(name)
        if host_facts is None:
            continue  # unreachable: already said
        if req.server_connections:
            lines += check_server_limits(
                req.host, host_facts, req.server_connections, req.server_workers
            )
            for masks, cpus in req.masks:
                lines += check_cpu_masks(name, masks, cpus, topologies.get(name))
        if req.client_connections:
            lines += check_client_limits(req.host, host_facts, req.client_connections)
            lines += check_client_cpus(req.host, req.client_cpus, topologies.get(name))
    seen_clients: set[tuple[str, str, int, float]] = set()
    for p in plan:
        if p.skipped:
            continue
        conns = connections(p.profile)
        dur = duration_s(p.profile)
        for c in p.clients:
            if (c.name, p.profile.generator, conns, dur) in seen_clients:
                continue
            seen_clients.add((c.name, p.profile.generator, conns, dur))
            lines += check_client_argv(p, c, conns, dur, rates(p.profile))
        lines += check_offered_rates(p, rates(p.profile))
    out: list[str] = []
    for line in lines:
        if line not in out:
            out.append(line)
    return out


def preflight(
    plan: Sequence[PlannedPoint],
    facts: Mapping[str, HostRecord],
    **kwargs: Any,
) -> None:
    """Raise :class:`PreflightError` listing every failing check; return when all pass."""
    problems = check_plan(plan, facts, **kwargs)
    if problems:
        raise PreflightError(problems)
