"""The platform interface: what a prepared point is, the run-wide backend options, and the
:class:`Backend` base class whose optional operations default to bare metal's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory
from sizing.model import Ht
from sizing.records import BaremetalSettings, PlatformSettings
from sizing.topology import Topology

__all__ = ["INVENTORY_PLACEHOLDER", "Backend", "BackendOptions", "Target"]


@dataclass(frozen=True)
class Target:
    """Where a prepared point runs.

    ``host`` is the inventory host NGINX is provisioned on (the machine itself for bare
    metal, the guest for a VM); ``address`` is what clients load; ``workers`` are the
    logical CPUs *as that host sees them* that nginx workers are pinned to (for a guest:
    vCPU 0..N-1); ``settings`` is what the backend set up and read back, typed per
    platform, stored with the point; ``facts``: a freshly booted guest's own, read once it
    answered (the run's first stage read its hypervisor's).
    """

    host: str
    address: str
    workers: tuple[int, ...]
    settings: PlatformSettings = field(default_factory=BaremetalSettings)
    emulated: bool = False
    facts: HostFacts | None = None


# Backends validate their host variables (sizing_vm, sizing_hypervisor) lazily and raise
# InputError(INVENTORY_PLACEHOLDER, [...]); callers that know the file put its name in.
INVENTORY_PLACEHOLDER = "inventory"


def _quiet(message: str) -> None:
    """The default ``notify``: drop the message."""


@dataclass(frozen=True)
class BackendOptions:
    """Run-wide choices a backend acts on (from ``sizing run`` options).

    ``allow_host_reboot``: a backend may change host firmware-level state that needs a
    reboot (ESXi hyper-threading). ``insecure``: skip TLS verification of hypervisor APIs
    (the backend warns). ``hts``: the HT modes the run measures. ``notify`` shows a
    warning to people (the CLI's stderr); the default drops it. ``inventory``: the whole
    inventory, for a backend whose guests name another inventory host as their hypervisor
    (libvirt: the KVM host that Ansible reaches to read QEMU's threads).
    """

    allow_host_reboot: bool = False
    insecure: bool = False
    hts: tuple[Ht, ...] = ()
    notify: Callable[[str], None] = field(default=_quiet, compare=False)
    inventory: Inventory | None = field(default=None, compare=False, repr=False)
    debug: bool = False
    # False: describe a guest from the inventory alone, contacting no hypervisor
    # (``inventory check`` without ``--connect``).
    connect: bool = True


class Backend:
    """What every platform implements (bare metal, libvirt, vSphere).

    ``prepare`` is required; every other operation is declared here with bare metal's
    behaviour, so the sweep calls them on any backend without probing for them.
    """

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """Make ``host`` ready to serve with ``cores`` cores on host CPUs ``cpus``."""
        raise NotImplementedError

    def teardown(self, host: Host) -> None:
        """Undo what prepare did where that matters (power off a guest, ...)."""
        return None

    def describe(self, host: Host) -> dict[str, Any]:
        """What ``sizing inventory check`` shows: reachability, HT capability, ..."""
        return {"platform": str(host.platform)}

    def host_topology(self, host: Host) -> Topology | None:
        """The CPUs a point of ``host`` is planned on, when they are not the host's own.

        A guest is planned on its hypervisor host's physical CPUs (ESXi, the KVM host), not
        on the vCPUs it sees. ``None`` means: plan on the host's own facts.
        """
        return None

    def skip_reason(self, host: Host, cores: int, ht: Ht) -> str:
        """Why this point cannot be measured as planned ("" when it can).

        Lets a backend say more than the planner can, e.g. "hyper-threading is off on ESXi
        host X; --allow-host-reboot enables it".
        """
        return ""

    def placements(self, inventory: Inventory) -> dict[str, str]:
        """Guest server -> the inventory host whose facts plan it (libvirt: its KVM host).

        Validates the backend's host variables; {} when every server plans on itself.
        """
        return {}
