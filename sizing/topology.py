"""CPU topology of a host, and which logical CPUs a point gives to NGINX and to the client.

A point of a run asks for N *physical* cores with hyper-threading on or off. This module
turns a host's topology (from ``lscpu -p=CPU,CORE,SOCKET,NODE`` or from sysfs) into the
logical CPU ids for the NGINX workers and, when the load generator shares the host, for the
client; and it formats them for ``worker_cpu_affinity``, ``taskset -c`` and
``numactl --physcpubind``.

Everything here is pure except the two explicit readers, :meth:`Topology.from_sysfs`
(reads files under a root you pass) and :meth:`Topology.from_lscpu` (parses text someone
else captured).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sizing.errors import ToolError, UsageError
from sizing.model import Ht

__all__ = [
    "Allocation",
    "CannotAllocate",
    "Cpu",
    "Topology",
    "affinity_masks",
    "allocate",
    "cpulist",
    "parse_cpulist",
]


class CannotAllocate(UsageError):
    """The host cannot give a point the CPUs it asks for.

    ``reason`` is shown to users verbatim as the reason the point was skipped.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Cpu:
    """One online logical CPU.

    ``core`` is the physical core id as the kernel reports it: unique only within a
    socket, so a physical core is identified by ``(socket, core)``.
    """

    id: int
    core: int
    socket: int
    node: int = 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class Topology:
    """The online logical CPUs of one host, kept sorted by logical id."""

    cpus: tuple[Cpu, ...]

    def __post_init__(self) -> None:
        if not self.cpus:
            raise ValueError("a topology needs at least one CPU")
        ordered = tuple(sorted(self.cpus, key=lambda c: c.id))
        ids = [c.id for c in ordered]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate logical CPU ids in topology: {ids}")
        if ids[0] < 0:
            raise ValueError(f"negative logical CPU id in topology: {ids[0]}")
        object.__setattr__(self, "cpus", ordered)

    # -- shape ------------------------------------------------------------------------

    def _groups(self) -> dict[tuple[int, int], list[Cpu]]:
        groups: dict[tuple[int, int], list[Cpu]] = {}
        for cpu in self.cpus:  # already sorted by id, so each group is sorted too
            groups.setdefault((cpu.socket, cpu.core), []).append(cpu)
        return groups

    @cached_property
    def _core_order(self) -> tuple[tuple[int, ...], ...]:
        """The logical CPU ids of each physical core, in the order :func:`allocate` takes
        cores: by socket, then NUMA node, then core id. Computed once per topology, as a
        plan allocates each host's configurations from it many times."""
        groups = self._groups()
        node_of = {key: min(c.node for c in group) for key, group in groups.items()}
        order = sorted(groups, key=lambda key: (key[0], node_of[key], key[1]))
        return tuple(tuple(c.id for c in groups[key]) for key in order)

    @cached_property
    def _smt(self) -> bool:
        return any(len(g) > 1 for g in self._groups().values())

    def physical_cores(self) -> list[tuple[int, ...]]:
        """Sibling groups of logical CPU ids, each sorted, ordered by (socket, core)."""
        groups = self._groups()
        return [tuple(c.id for c in groups[key]) for key in sorted(groups)]

    @property
    def smt(self) -> bool:
        """True when some physical core has more than one logical CPU."""
        return self._smt

    @property
    def sockets(self) -> int:
        """Number of sockets (physical packages) with at least one online CPU."""
        return len({c.socket for c in self.cpus})

    @property
    def threads_per_core(self) -> int:
        """The largest number of logical CPUs on one physical core (1 without SMT)."""
        return max(len(g) for g in self._groups().values())

    def describe(self) -> str:
        """One line for people, e.g. ``2 sockets x 8 cores x 2 threads = 32 logical CPUs``.

        The core count is per socket. Hosts whose sockets or cores are not alike (hybrid
        CPUs, partly offlined sockets) are described by totals instead.
        """
        return self._description

    @cached_property
    def _description(self) -> str:
        # once per topology: the hosts that declare one shape share one topology
        groups = self._groups()
        n = len(self.cpus)
        per_socket: dict[int, int] = {}
        for socket, _core in groups:
            per_socket[socket] = per_socket.get(socket, 0) + 1
        threads = {len(g) for g in groups.values()}
        if len(set(per_socket.values())) == 1 and len(threads) == 1:
            return (
                f"{_plural(len(per_socket), 'socket')} x "
                f"{_plural(next(iter(per_socket.values())), 'core')} x "
                f"{_plural(next(iter(threads)), 'thread')} = {_plural(n, 'logical CPU')}"
            )
        return (
            f"{_plural(len(per_socket), 'socket')}, {_plural(len(groups), 'physical core')}"
            f" ({min(threads)}-{max(threads)} threads per core) = {_plural(n, 'logical CPU')}"
        )

    # -- readers ----------------------------------------------------------------------

    @classmethod
    def from_lscpu(cls, text: str) -> Topology:
        """Parse the output of ``lscpu -p=CPU,CORE,SOCKET,NODE``.

        Comment lines start with ``#``; the last comment line that names the columns
        (``# CPU,Core,Socket,Node``) sets their order, so the default ``lscpu -p`` output
        parses too. Offline CPUs (listed by ``--all`` with empty fields) are skipped; an
        empty Node field (hosts without NUMA) means node 0.

        Raises :class:`~sizing.errors.ToolError` on text that is not such output.
        """
        columns = ["cpu", "core", "socket", "node"]
        cpus: list[Cpu] = []
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                names = [f.strip().lower() for f in line.lstrip("#").split(",")]
                if "cpu" in names and "core" in names and "socket" in names:
                    columns = names
                continue
            fields = [f.strip() for f in line.split(",")]
            row = dict(zip(columns, fields, strict=False))
            if not row.get("cpu") or not row.get("core") or not row.get("socket"):
                continue  # an offline CPU: lscpu leaves its topology fields empty
            try:
                cpus.append(
                    Cpu(
                        id=int(row["cpu"]),
                        core=int(row["core"]),
                        socket=int(row["socket"]),
                        node=int(row.get("node") or 0),
                    )
                )
            except ValueError:
                raise ToolError(
                    f"lscpu output line {lineno} is not CPU,CORE,SOCKET,NODE: {raw!r}"
                ) from None
        if not cpus:
            raise ToolError("lscpu output lists no online CPU")
        return cls(tuple(cpus))

    @classmethod
    def from_sysfs(cls, root: Path = Path("/sys/devices/system/cpu")) -> Topology:
        """Read the online CPUs' topology from sysfs (or from a copy of it under ``root``).

        Uses ``online``, ``cpuN/topology/{core_id,physical_package_id,
        thread_siblings_list}`` and the ``cpuN/nodeM`` links. When ``(package, core_id)``
        does not identify sibling groups (some multi-die parts repeat core ids), the lowest
        id of ``thread_siblings_list`` is used as the core id instead.
        """
        online_file = root / "online"
        if online_file.exists():
            online = parse_cpulist(online_file.read_text())
        else:
            online = tuple(
                sorted(
                    int(p.name[3:])
                    for p in root.glob("cpu[0-9]*")
                    if p.name[3:].isdigit() and (p / "topology").is_dir()
                )
            )
        if not online:
            raise ToolError(f"{root}: no online CPU found")

        rows: list[tuple[int, int, int, int, tuple[int, ...]]] = []
        for cpu_id in online:
            topo = root / f"cpu{cpu_id}" / "topology"
            try:
                core = int((topo / "core_id").read_text())
                package = int((topo / "physical_package_id").read_text())
                siblings_file = topo / "thread_siblings_list"
                siblings = (
                    parse_cpulist(siblings_file.read_text())
                    if siblings_file.exists()
                    else (cpu_id,)
                )
            except (OSError, ValueError) as exc:
                raise ToolError(f"{topo}: cannot read CPU topology: {exc}") from None
            nodes = sorted(
                int(p.name[4:])
                for p in (root / f"cpu{cpu_id}").glob("node[0-9]*")
                if p.name[4:].isdigit()
            )
            # physical_package_id is -1 on some virtual and ARM machines: one package.
            rows.append((cpu_id, core, max(package, 0), nodes[0] if nodes else 0, siblings))

        by_key: dict[tuple[int, int], set[int]] = {}
        for cpu_id, core, package, _node, _sib in rows:
            by_key.setdefault((package, core), set()).add(cpu_id)
        online_set = set(online)
        consistent = all(
            by_key[(package, core)] == set(sib) & online_set
            for _id, core, package, _node, sib in rows
        )
        cpus = tuple(
            Cpu(
                id=cpu_id,
                core=core if consistent else min(sib),
                socket=package,
                node=node,
            )
            for cpu_id, core, package, node, sib in rows
        )
        return cls(cpus)


@dataclass(frozen=True)
class Allocation:
    """The logical CPUs of one point.

    ``server_cpus``: one NGINX worker per logical CPU. ``client_cpus``: the load
    generator's CPUs on the same host, empty when the client is another host.
    """

    server_cpus: tuple[int, ...]
    client_cpus: tuple[int, ...]


def allocate(
    topo: Topology, cores: int, ht: Ht, *, shared_client: bool, min_client_cores: int = 1
) -> Allocation:
    """Choose the logical CPUs for ``cores`` physical server cores with HT ``ht``.

    The server takes physical cores in order: socket 0 first, filling a socket (and within
    it a NUMA node) before the next, so a small point stays on one socket and one memory
    node and never pays for cross-socket traffic. ``Ht.OFF`` gives one worker CPU per core
    (its lowest-numbered sibling; the other siblings stay idle, as close as software gets to
    HT off in the firmware); ``Ht.ON`` gives every sibling of each core.

    With ``shared_client`` the client gets all logical CPUs of the remaining physical cores
    (never a sibling of a server core, so client and server do not share a core), and there
    must be at least ``min_client_cores`` of them.

    Raises :class:`CannotAllocate`, whose reason is the user-facing skip reason, when the
    host cannot give the point; :class:`~sizing.errors.UsageError` for ``cores < 1``.
    """
    if cores < 1:
        raise UsageError(f"a point needs at least 1 core, not {cores}")
    if shared_client and min_client_cores < 1:
        raise UsageError(f"a shared client needs at least 1 core, not {min_client_cores}")
    if ht is Ht.ON and not topo.smt:
        raise CannotAllocate("hyper-threading is not available on this host (one thread per core)")

    order = topo._core_order
    n = len(order)

    if shared_client:
        if cores + min_client_cores > n:
            raise CannotAllocate(
                f"needs {_plural(cores, 'server core')} plus at least "
                f"{_plural(min_client_cores, 'client core')}; this host has "
                f"{_plural(n, 'physical core')}; add a client host to the inventory"
            )
    elif cores > n:
        raise CannotAllocate(f"needs {_plural(cores, 'physical core')}; this host has {n}")

    server_groups = order[:cores]
    if ht is Ht.ON:
        server = tuple(cpu for group in server_groups for cpu in group)
    else:
        server = tuple(group[0] for group in server_groups)
    client: tuple[int, ...] = ()
    if shared_client:
        client = tuple(cpu for group in order[cores:] for cpu in group)
    return Allocation(server_cpus=server, client_cpus=client)


def _check_cpus(cpus: Iterable[int]) -> list[int]:
    ids = list(cpus)
    for cpu in ids:
        if cpu < 0:
            raise ValueError(f"negative CPU id: {cpu}")
    return ids


def affinity_masks(cpus: Sequence[int]) -> str:
    """The value of nginx's ``worker_cpu_affinity``: one binary mask per worker.

    Masks are space-separated, in the order of ``cpus`` (worker i is bound to
    ``cpus[i]``), all of width ``max(cpus) + 1``, and read like nginx's documentation: the
    rightmost character is CPU 0. ``[0, 1, 2, 3]`` gives ``"0001 0010 0100 1000"``.
    """
    ids = _check_cpus(cpus)
    if not ids:
        raise ValueError("worker_cpu_affinity needs at least one CPU")
    width = max(ids) + 1
    return " ".join(format(1 << cpu, f"0{width}b") for cpu in ids)


def cpulist(cpus: Sequence[int]) -> str:
    """The kernel's CPU list format, as ``taskset -c`` and ``numactl --physcpubind`` take.

    Sorted, duplicates dropped, runs of two or more as ranges: ``"0-3,8,10-11"``.
    """
    ids = sorted(set(_check_cpus(cpus)))
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


_CPULIST_ITEM = re.compile(r"(\d+)(?:-(\d+))?")


def parse_cpulist(text: str) -> tuple[int, ...]:
    """Parse a kernel CPU list (``"0-3,8,10-11"``), e.g. ``Cpus_allowed_list``.

    Returns sorted, distinct ids; an empty or blank text gives ``()``. Raises
    ``ValueError`` on anything else.
    """
    ids: set[int] = set()
    stripped = text.strip()
    if not stripped:
        return ()
    for item in stripped.split(","):
        m = _CPULIST_ITEM.fullmatch(item.strip())
        if m is None:
            raise ValueError(f"not a CPU list: {text.strip()!r}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        if last < first:
            raise ValueError(f"descending range {item.strip()!r} in CPU list {stripped!r}")
        ids.update(range(first, last + 1))
    return tuple(sorted(ids))
