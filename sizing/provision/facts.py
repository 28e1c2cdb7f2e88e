"""Host facts: read through Ansible (``playbooks/facts.yml``), or taken from what the
inventory declares (``sizing_cpu``) when nothing may be contacted.

``sizing run --plan`` and ``sizing inventory check`` are offline by default: they plan on
:func:`declared_facts`. ``--probe`` (plan) and ``--connect`` (check) read the real facts
with :func:`gather_facts`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from sizing.facts import HostFacts, ToolDir
from sizing.inventory import Host
from sizing.provision.ansible import Playbooks
from sizing.provision.hostsafety import HostLocks
from sizing.topology import Cpu, Topology, parse_cpulist

__all__ = [
    "DECLARE_HINT",
    "FACTS_TASK",
    "TOOL_DIR_TASK",
    "declared_facts",
    "declared_topology",
    "gather_facts",
]

FACTS_TASK = "Describe the host"
TOOL_DIR_TASK = "Look at the tool directory without changing it"
DECLARE_HINT = "declare sizing_cpu or use --probe"


def gather_facts(
    playbooks: Playbooks,
    hosts: Sequence[Host],
    *,
    locks: HostLocks | None = None,
    lock_hosts: Sequence[str] = (),
    tool_commands: Sequence[str] | None = None,
) -> tuple[dict[str, HostFacts], dict[str, str]]:
    """Facts of every reachable host, and one problem line for every other host.

    ``locks``: a run takes the run lock of ``lock_hosts`` in the same Ansible run (the lock
    task of ``playbooks/facts.yml``) and keeps those of the reachable ones (an unreachable
    host's points are skipped, its lock is not needed). ``tool_commands`` (a run's): look
    at each host's tool directory too, and whether these load generators are on its PATH
    (``HostFacts.tool_dir``), changing nothing."""
    names = sorted({h.name for h in hosts})
    extravars: dict[str, Any] = {"sizing_hosts": ",".join(names)}
    if locks is not None and lock_hosts:
        extravars.update(locks.request("acquire"), sizing_lock_hosts=sorted(set(lock_hosts)))
    if tool_commands is not None:
        extravars.update(sizing_tool_look=True, sizing_tool_commands=sorted(set(tool_commands)))
    called = time.time()
    res = playbooks.run("facts.yml", names, extravars=extravars)
    facts: dict[str, HostFacts] = {}
    problems = res.problems()
    for name in names:
        out = res.result(name, FACTS_TASK)
        if out is None:
            problems.setdefault(name, f"facts could not be read ({res.status})")
            continue
        try:
            facts[name] = HostFacts.parse(
                str(out.get("stdout", "")), res.window(name, FACTS_TASK), called=called
            )
        except (ValueError, KeyError) as exc:
            problems[name] = f"facts are unreadable: {exc}; {_printed(out)}"
            continue
        look = res.result(name, TOOL_DIR_TASK) if tool_commands is not None else None
        if look is not None and look.get("rc") == 0:
            # unreadable: clients.yml runs and says what is wrong with the directory
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                facts[name] = replace(facts[name], tool_dir=ToolDir.parse(str(look["stdout"])))
    if locks is not None and lock_hosts:
        locks.settle(res, [h for h in lock_hosts if h in facts])
    return facts, problems


def _printed(out: Mapping[str, Any]) -> str:
    """What the facts script printed, shortened, for a reply that is not its JSON."""
    said = [
        f"{stream} {str(out.get(stream) or '').strip()[:160]!r}" for stream in ("stdout", "stderr")
    ]
    return "the script printed " + ", ".join(said) + f" (rc {out.get('rc', '?')})"


@lru_cache(maxsize=64)
def declared_topology(sockets: int, cores_per_socket: int, threads_per_core: int) -> Topology:
    """The logical CPUs a declared ``sizing_cpu`` implies, numbered as Linux usually
    numbers them on x86: the first thread of every core (socket by socket), then the
    second threads, and so on. The real numbering is read by ``--probe``.

    One (immutable) topology per shape, shared by the hosts that declare it: a thousand
    80-thread clients cost what one does."""
    cores = sockets * cores_per_socket
    cpus = [
        Cpu(id=t * cores + s * cores_per_socket + c, core=c, socket=s, node=s)
        for t in range(threads_per_core)
        for s in range(sockets)
        for c in range(cores_per_socket)
    ]
    return Topology(tuple(cpus))


def _declared(host: Host) -> tuple[Topology, dict[str, Any]] | None:
    cpu = host.sizing.cpu
    if cpu is not None:
        topo = declared_topology(cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core)
        return topo, {"facts": "declared", "cpu_model": cpu.model}
    if host.is_local:
        # This machine's own sysfs: reading it contacts nothing, and it is the truth (a
        # client's sizing_client_cpus is checked against it, not taken for it).
        return Topology.from_sysfs(), {"facts": "local", "cpu_model": None}
    if host.sizing.client_cpus and "server" not in host.roles:
        # A client that names the CPUs its load generator may use needs no more.
        ids = parse_cpulist(host.sizing.client_cpus)
        topo = Topology(tuple(Cpu(id=i, core=i, socket=0) for i in ids))
        return topo, {"facts": "declared", "cpu_model": None}
    return None


def declared_facts(hosts: Sequence[Host]) -> tuple[dict[str, HostFacts], dict[str, str]]:
    """Facts from the inventory alone, contacting no host: ``sizing_cpu`` gives the
    topology (``raw["facts"] == "declared"``); a host reached with
    ``ansible_connection: local`` is this machine, read from sysfs (``"local"``). Every
    other host gets one line saying what to do."""
    facts: dict[str, HostFacts] = {}
    missing: dict[str, str] = {}
    # the hosts that declare one CPU share one (immutable) HostFacts, typed once
    shared: dict[tuple[int, str, str | None], HostFacts] = {}
    for host in hosts:
        found = _declared(host)
        if found is None:
            missing[host.name] = f"no sizing_cpu: {DECLARE_HINT}"
            continue
        topo, raw = found
        key = (id(topo), raw["facts"], raw["cpu_model"])
        facts[host.name] = shared.setdefault(key, HostFacts(topo, raw))
    return facts, missing
