"""Platforms behind one small interface: bare metal, libvirt/KVM and vSphere/ESXi.

A backend prepares a point (N cores, an HT mode, the host logical CPUs chosen by the
planner), returns where NGINX must be provisioned and loaded, and tears down. Heavy SDKs
(libvirt-python, pyVmomi) are imported lazily inside their backends. An operation a
backend cannot do raises a :class:`~sizing.errors.SizingError` that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from sizing.errors import SizingError
from sizing.inventory import Host
from sizing.model import Ht, Platform


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


class Backend(Protocol):
    """What every platform implements."""

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """Make ``host`` ready to serve with ``cores`` cores on host CPUs ``cpus``."""
        ...

    def teardown(self, host: Host) -> None:
        """Undo what prepare did where that matters (power off a guest, ...)."""
        ...

    def describe(self, host: Host) -> dict[str, Any]:
        """What ``sizing inventory check`` shows: reachability, HT capability, ..."""
        ...


def backend_for(platform: Platform) -> Backend:
    """The backend of a platform (imports its SDK only now)."""
    if platform is Platform.BAREMETAL:
        from sizing.platforms.baremetal import BareMetal

        return BareMetal()
    if platform is Platform.LIBVIRT:
        try:
            from sizing.platforms.libvirt import Libvirt  # type: ignore[attr-defined]
        except ImportError as exc:
            raise SizingError(f"the libvirt platform is not available: {exc}") from exc
        return Libvirt()  # type: ignore[no-any-return]
    if platform is Platform.VSPHERE:
        try:
            from sizing.platforms.vsphere import VSphere  # type: ignore[attr-defined]
        except ImportError as exc:
            raise SizingError(f"the vsphere platform is not available: {exc}") from exc
        return VSphere()  # type: ignore[no-any-return]
    raise SizingError(f"unknown platform {platform}")
