"""Platforms behind one small interface: bare metal, libvirt/KVM and vSphere/ESXi.

A backend prepares a point (N cores, an HT mode, the host logical CPUs chosen by the
planner), returns where NGINX must be provisioned and loaded, and tears down. Heavy SDKs
(libvirt-python, pyVmomi) are imported lazily inside their backends. An operation a
backend cannot do raises a :class:`~sizing.errors.SizingError` that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sizing.errors import SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht, Platform
from sizing.topology import Topology


@dataclass(frozen=True)
class Target:
    """Where a prepared point runs.

    ``host`` is the inventory host NGINX is provisioned on (the machine itself for bare
    metal, the guest for a VM); ``address`` is what clients load; ``workers`` are the
    logical CPUs *as that host sees them* that nginx workers are pinned to (for a guest:
    vCPU 0..N-1); ``metadata`` is every setting read back, stored with the point.
    """

    host: str
    address: str
    workers: tuple[int, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    emulated: bool = False


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


class Backend(Protocol):
    """What every platform implements.

    Two optional hooks are called through :func:`host_topology` and :func:`skip_reason`,
    so a backend without them behaves like bare metal.
    """

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """Make ``host`` ready to serve with ``cores`` cores on host CPUs ``cpus``."""
        ...

    def teardown(self, host: Host) -> None:
        """Undo what prepare did where that matters (power off a guest, ...)."""
        ...

    def describe(self, host: Host) -> dict[str, Any]:
        """What ``sizing inventory check`` shows: reachability, HT capability, ..."""
        ...


# -- optional hooks (shared by the libvirt and vsphere backends) --------------------------


def host_topology(backend: Backend, host: Host) -> Topology | None:
    """The CPUs a point of ``host`` is planned on, when they are not the host's own.

    A guest is planned on its hypervisor host's physical CPUs (ESXi, the KVM host), not on
    the vCPUs it sees. ``None`` (the default, and bare metal) means: plan on the host's own
    facts. A backend opts in with ``host_topology(host) -> Topology | None``.
    """
    hook = getattr(backend, "host_topology", None)
    return None if hook is None else hook(host)  # type: ignore[no-any-return]


def skip_reason(backend: Backend, host: Host, cores: int, ht: Ht) -> str:
    """Why ``backend`` cannot measure this point as planned ("" when it can).

    Lets a backend say more than the planner can, e.g. "hyper-threading is off on ESXi
    host X; --allow-host-reboot enables it". Opt in with ``skip_reason(host, cores, ht)``.
    """
    hook = getattr(backend, "skip_reason", None)
    return "" if hook is None else str(hook(host, cores, ht) or "")


def backend_for(platform: Platform, options: BackendOptions | None = None) -> Backend:
    """The backend of a platform (imports its SDK only now)."""
    if platform is Platform.BAREMETAL:
        from sizing.platforms.baremetal import BareMetal

        return BareMetal()
    if platform is Platform.LIBVIRT:
        try:
            from sizing.platforms.libvirt import Libvirt
        except ImportError as exc:
            raise SizingError(f"the libvirt platform is not available: {exc}") from exc
        return Libvirt(options or BackendOptions())
    if platform is Platform.VSPHERE:
        try:
            from sizing.platforms.vsphere import VSphere  # type: ignore[attr-defined]
        except ImportError as exc:
            raise SizingError(f"the vsphere platform is not available: {exc}") from exc
        return VSphere(options or BackendOptions())  # type: ignore[no-any-return]
    raise SizingError(f"unknown platform {platform}")
