"""Platforms behind one small interface: bare metal, libvirt/KVM, vSphere/ESXi and a
Podman container (``container``).

A backend prepares a point (N cores, an HT mode, the host logical CPUs chosen by the
planner), returns where NGINX must be provisioned and loaded, and tears down
(:class:`~sizing.provision.platforms.base.Backend`). Heavy SDKs (libvirt-python, pyVmomi)
are imported lazily inside their backends. An operation a backend cannot do raises a
:class:`~sizing.errors.SizingError` that says so.
"""

from __future__ import annotations

from typing import Any

from sizing.errors import InputError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Platform
from sizing.provision.platforms.baremetal import BareMetal
from sizing.provision.platforms.base import (
    INVENTORY_PLACEHOLDER,
    Backend,
    BackendOptions,
    Target,
)

__all__ = [
    "INVENTORY_PLACEHOLDER",
    "Backend",
    "BackendOptions",
    "Target",
    "backend_for",
    "describe_host",
]


def backend_for(platform: Platform, options: BackendOptions | None = None) -> Backend:
    """The backend of a platform (imports its SDK only now)."""
    if platform is Platform.BAREMETAL:
        return BareMetal()
    if platform is Platform.LIBVIRT:
        try:  # libvirt-python and pyVmomi: optional, and only a guest's run needs them
            from sizing.provision.platforms.libvirt import Libvirt
        except ImportError as exc:
            raise SizingError(f"the libvirt platform is not available: {exc}") from exc
        return Libvirt(options or BackendOptions())
    if platform is Platform.VSPHERE:
        try:
            from sizing.provision.platforms.vsphere import VSphere
        except ImportError as exc:
            raise SizingError(f"the vsphere platform is not available: {exc}") from exc
        return VSphere(options or BackendOptions())
    if platform is Platform.CONTAINER:
        from sizing.provision.platforms.container import Container

        return Container(options or BackendOptions())
    raise SizingError(f"unknown platform {platform}")


def describe_host(
    host: Host, inventory: Inventory, options: BackendOptions | None = None
) -> dict[str, Any]:
    """What a guest's backend says about it (endpoint, VM, host HT); {} for bare metal.

    ``sizing inventory check``: a backend error is shown, not raised; a bad host variable
    is the inventory file's fault and raises :class:`InputError` naming the file.
    """
    if host.platform is Platform.BAREMETAL:
        return {}
    try:
        options = options or BackendOptions(inventory=inventory)
        return {"hypervisor": backend_for(host.platform, options).describe(host)}
    except InputError as exc:
        if exc.path != INVENTORY_PLACEHOLDER:
            raise
        raise InputError(str(inventory.path), exc.problems) from None
    except SizingError as exc:
        return {"hypervisor": {"error": str(exc), "summary": str(exc)}}
