"""``sizing inventory check``: what sizing understood of an inventory, offline, or with
``--connect`` whether every host and hypervisor can be reached."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing.extravars import parse_extra_vars
from sizing.inventory import Host, Inventory, load_inventory
from sizing.provision.ansible import Playbooks
from sizing.provision.facts import gather_facts
from sizing.provision.platforms import BackendOptions, describe_host

__all__ = ["HostCheck", "InventoryCheck", "check"]


@dataclass(frozen=True)
class HostCheck:
    """One host as the inventory declares it, and what its backend says about it."""

    host: Host
    connection: str
    backend: dict[str, Any]  # a guest's endpoint and VM (with --connect its state); {} else
    problem: str | None = None  # --connect: why it could not be reached

    @property
    def hypervisor(self) -> dict[str, Any] | None:
        got = self.backend.get("hypervisor")
        return got if isinstance(got, dict) else None

    def to_json(self, connected: bool) -> dict[str, Any]:
        h, cpu = self.host, self.host.sizing.cpu
        doc = {
            "name": h.name,
            "roles": sorted(h.roles),
            "platform": str(h.platform),
            "address": h.address,
            "connection": self.connection,
            "cpu": None if cpu is None else cpu.model_dump(),
            "price_usd": h.sizing.price_usd,
            "cost_ref": h.sizing.cost_ref,
            "groups": list(h.groups),
            **self.backend,
        }
        if connected:
            doc.update(reachable=self.problem is None, problem=self.problem)
        return doc


@dataclass(frozen=True)
class InventoryCheck:
    """The inventory, each host's check, and whether the hosts were contacted."""

    file: Path
    inventory: Inventory
    hosts: list[HostCheck]
    connected: bool
    unreachable: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "inventory": str(self.file),
            "inventories": [str(p) for p in self.inventory.inventories],
            "hosts": [h.to_json(self.connected) for h in self.hosts],
            "ignored": [
                {"name": n, "groups": list(g)} for n, g in sorted(self.inventory.ignored.items())
            ],
            "connected": self.connected,
        }

    def summary(self, verbose: bool = False) -> list[str]:
        """Which hosts sizing would measure, load from, run upstreams on, and which it
        ignores (with their groups): a ``servers`` group an inventory already had (a
        Proxmox host, a NAS) is seen before anything is measured. Each line fits
        :data:`WIDTH`: a long list is summarised unless ``verbose``."""
        inv = self.inventory
        lines = [
            _listed(f"{what} ({group})", [h.name for h in hosts], verbose)
            for what, group, hosts in (
                ("measured", "servers", inv.servers),
                ("load generators", "clients", inv.clients),
                ("upstreams", "upstreams", inv.upstreams),
            )
            if hosts
        ]
        others = [n for n in inv.hosts if not inv.hosts[n].roles]
        if others:
            lines.append(_listed("used as hypervisors", others, verbose))
        if inv.ignored:
            shown = [
                f"{n} ({', '.join(g for g in groups if g != 'all') or 'ungrouped'})"
                for n, groups in sorted(inv.ignored.items())
            ]
            line = f"ignored, in none of servers, clients, upstreams: {', '.join(shown)}"
            if verbose:
                lines.append("ignored, in none of servers, clients, upstreams:")
                lines += [f"  {s}" for s in shown]
            elif len(line) <= WIDTH:
                lines.append(line)
            else:
                groups = {g for gs in inv.ignored.values() for g in gs if g != "all"}
                lines.append(
                    f"ignored: {len(inv.ignored)} hosts in {len(groups)} groups;"
                    " --verbose lists them"
                )
        return lines


WIDTH = 100  # the width of every line of text output


def _listed(label: str, names: list[str], verbose: bool) -> str:
    """``label: a, b, c``, or ``label: a, b, ... z (300 hosts)`` where that is too wide."""
    line = f"{label}: {', '.join(names)}"
    if verbose or len(line) <= WIDTH:
        return line
    line = f"{label}: {names[0]}, ... {names[-1]} ({len(names)} hosts; --verbose lists them)"
    if len(line) <= WIDTH:
        return line
    return f"{label}: {len(names)} hosts, {names[0]} first; --verbose lists them"


def check(
    file: Path | Sequence[Path],
    *,
    limit: str | None = None,
    extra_vars: list[str] | None = None,
    connect: bool = False,
    notify: Callable[[str], None] = print,
    debug: bool = False,
) -> InventoryCheck:
    """Read ``file`` as sizing does; with ``connect`` reach every host (its facts, over
    Ansible) and hypervisor (``notify``: the backends' warnings; ``debug``: Ansible's own
    output)."""
    inv = load_inventory(file, limit=limit, extra_vars=parse_extra_vars(extra_vars or []))
    options = BackendOptions(notify=notify, inventory=inv, connect=connect)
    backends = {h.name: describe_host(h, inv, options) for h in inv.hosts.values()}
    failed: dict[str, str] = {}
    if connect:
        _facts, failed = gather_facts(Playbooks(inv.inventories, debug), list(inv.hosts.values()))
        for name, backend in backends.items():
            hyp = backend.get("hypervisor")
            if isinstance(hyp, dict) and hyp.get("error"):
                failed.setdefault(name, f"hypervisor: {hyp['error']}")
    hosts = [
        HostCheck(h, h.connection, backends[h.name], failed.get(h.name)) for h in inv.hosts.values()
    ]
    return InventoryCheck(inv.path, inv, hosts, connect, failed)
