"""What a platform backend set up for a point and read back, typed per platform.

A point stores its platform's settings as one flat JSON object (``platform_settings``),
with no tag naming the platform: the kind is told by the keys each backend has always
written (:meth:`PlatformSettings.kind_of`), so the rows of every older sizing read back
as the kind they were measured on. Bare metal sets nothing up (:class:`BaremetalSettings`,
an empty object); a libvirt guest is a :class:`KvmSettings`, a vSphere VM an
:class:`EsxiSettings`, a Podman container a :class:`ContainerSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sizing.records.codec import load

__all__ = [
    "BaremetalSettings",
    "ContainerSettings",
    "EsxiSettings",
    "GuestTopology",
    "HostHtRecord",
    "KvmSettings",
    "PlatformSettings",
    "QemuThread",
    "UlimitsRecord",
    "VmConfigRecord",
]


@dataclass(frozen=True)
class PlatformSettings:
    """What a platform backend set up and read back (one of the kinds below)."""

    @classmethod
    def kind_of(cls, data: Mapping[str, object]) -> type[PlatformSettings]:
        """The kind a stored object is, by the keys its backend writes (see the module)."""
        if data.get("platform") == "container" or "container_host" in data:
            return ContainerSettings
        if data.get("hypervisor") == "vsphere" or "esxi_host" in data:
            return EsxiSettings
        if "domain" in data or "hypervisor" in data:
            return KvmSettings
        return BaremetalSettings

    @classmethod
    def parse(cls, data: Mapping[str, object] | None) -> PlatformSettings:
        """What a platform backend reported, or a stored object, as its kind."""
        return load(cls, data or {})

    def physical_host(self) -> str | None:
        """The machine the guest or container ran on (None: the host itself)."""
        return None

    @property
    def guest_vcpus(self) -> int | None:
        """The vCPUs the guest was given (None: not a guest, or not recorded)."""
        return None


@dataclass(frozen=True)
class BaremetalSettings(PlatformSettings):
    """Bare metal: nothing set up (the host's own CPUs, as the point's CPU sets say)."""


@dataclass(frozen=True)
class GuestTopology:
    """A libvirt guest's CPU topology."""

    sockets: int | None = None
    cores: int | None = None
    threads: int | None = None


@dataclass(frozen=True)
class QemuThread:
    """One thread of the guest's QEMU process, as ``playbooks/files/qemu_threads.py``
    read it from /proc (its ``Cpus_allowed_list``)."""

    tid: int | None = None
    comm: str | None = None
    cpus: str | None = None


@dataclass(frozen=True)
class KvmSettings(PlatformSettings):
    """A libvirt guest: its domain, topology, pinning as asked and as libvirt and /proc
    read it back, its QEMU threads, boot time, memory and versions."""

    hypervisor: str | None = None  # the hypervisor host (an inventory name)
    uri: str | None = None
    domain: str | None = None
    domain_type: str | None = None  # kvm, or qemu (emulated)
    emulated: bool | None = None
    vcpus: int | None = None
    guest_topology: GuestTopology | None = None
    vcpupin: dict[str, str] | None = None  # vCPU -> host CPU, as asked
    emulatorpin: str | None = None
    vcpupin_libvirt: dict[str, str] | None = None
    emulatorpin_libvirt: str | None = None
    vcpupin_proc: dict[str, str] | None = None
    qemu_pid: int | None = None
    qemu_threads: tuple[QemuThread, ...] | None = None
    boot_s: float | None = None
    memory_mib: int | None = None
    libvirt_version: int | None = None  # major·10⁶ + minor·10³ + micro
    hypervisor_version: int | None = None  # QEMU's, the same way

    def physical_host(self) -> str | None:
        return self.hypervisor or None

    @property
    def guest_vcpus(self) -> int | None:
        return self.vcpus


@dataclass(frozen=True)
class HostHtRecord:
    """An ESXi host's hyper-threading: available, active now, configured for next boot."""

    available: bool | None = None
    active: bool | None = None
    config: bool | None = None


@dataclass(frozen=True)
class VmConfigRecord:
    """A VM's settings as sizing asked them or as vSphere read them back (``vm.config``);
    the keys are vSphere's own names."""

    numCPUs: int | None = None  # noqa: N815 - vSphere's names, stored as such
    numCoresPerSocket: int | None = None  # noqa: N815
    memoryMb: int | None = None  # noqa: N815
    cpuAffinity: tuple[int, ...] | None = None  # noqa: N815
    latencySensitivity: str | None = None  # noqa: N815
    cpuReservationMhz: int | None = None  # noqa: N815
    memoryReservationLockedToMax: bool | None = None  # noqa: N815
    memoryReservationMb: int | None = None  # noqa: N815

    @classmethod
    def parse(cls, data: Mapping[str, object]) -> VmConfigRecord:
        return load(cls, data)


@dataclass(frozen=True)
class EsxiSettings(PlatformSettings):
    """A vSphere VM: the endpoint, the VM and its ESXi host, the settings asked and read
    back, the host's HT and the host CPUs the vCPUs were given."""

    hypervisor: str | None = None  # "vsphere"
    endpoint: str | None = None
    tls_verified: bool | None = None
    vm: str | None = None
    esxi_host: str | None = None
    esxi_version: str | None = None
    esxi_cpu: str | None = None
    esxi_cpu_mhz: int | None = None
    host_ht: HostHtRecord | None = None
    host_cpus: tuple[int, ...] | None = None
    vcpus: int | None = None
    asked: VmConfigRecord | None = None
    readback: VmConfigRecord | None = None
    power_state: str | None = None
    guest_ip: str | None = None
    tools_status: str | None = None

    def physical_host(self) -> str | None:
        return self.esxi_host or None

    @property
    def guest_vcpus(self) -> int | None:
        return self.vcpus or (self.readback.numCPUs if self.readback else None)


@dataclass(frozen=True)
class UlimitsRecord:
    """A container's open-files and processes limits."""

    nofile: int | None = None
    nproc: int | None = None


@dataclass(frozen=True)
class ContainerSettings(PlatformSettings):
    """A Podman container: where it ran, its image and network, and its pinning as
    Podman, /proc and the cgroup report it."""

    platform: str | None = None  # "container"
    runtime: str | None = None
    podman_version: str | None = None
    oci_runtime: str | None = None
    container: str | None = None
    container_id: str | None = None
    image: str | None = None
    network: str | None = None
    container_address: str | None = None
    cpuset_cpus: str | None = None
    memory_bytes: int | None = None
    proc_cpus_allowed: str | None = None
    cgroup_cpuset: str | None = None
    init_pid: int | None = None
    container_host: str | None = None
    address: str | None = None
    argv: tuple[str, ...] | None = None
    ulimits: UlimitsRecord | None = None
    published: tuple[int, ...] | None = None

    def physical_host(self) -> str | None:
        return self.container_host or None
