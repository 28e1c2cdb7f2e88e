"""What the methodology says about the guests: the hypervisor and its version, the VM's
settings as the hypervisor read them back (latency sensitivity, reservations, pinning) and
the vCPUs each point gave the guest, read from the points' stored platform settings."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.model import PointResult
from sizing.records import EsxiSettings, KvmSettings, PlatformSettings, VmConfigRecord
from sizing.report.data.model import Fact

__all__ = ["guest_facts", "host_cpus", "point_label", "vcpus"]


def point_label(r: PointResult) -> str:
    """``1 core, HT on``: a point's cores and HT mode."""
    n = r.key.cores
    return f"{n} core{'s' if n != 1 else ''}, HT {r.key.ht}"


def _readback(s: PlatformSettings | None) -> VmConfigRecord:
    """A vSphere VM's settings as read back (empty for any other platform)."""
    if isinstance(s, EsxiSettings) and s.readback is not None:
        return s.readback
    return VmConfigRecord()


def host_cpus(r: PointResult) -> str:
    """The host CPUs a guest point's vCPUs ran on ("" for bare metal or when unrecorded):
    ESXi's CPU affinity as read back, or libvirt's vCPU pinning."""
    s = r.metadata.env.platform_settings
    if isinstance(s, EsxiSettings):
        cpus = _readback(s).cpuAffinity or s.host_cpus
        return ",".join(str(c) for c in cpus) if cpus else ""
    if isinstance(s, KvmSettings) and s.vcpupin:
        pins = s.vcpupin
        return ",".join(str(pins[k]) for k in sorted(pins, key=int))
    return ""


def vcpus(r: PointResult) -> int | None:
    """The vCPUs a guest point ran with (None for bare metal or when unrecorded)."""
    s = r.metadata.env.platform_settings
    n = None if s is None else s.guest_vcpus
    return n if n is not None and n > 0 else None


def _hypervisor(s: EsxiSettings | KvmSettings) -> str:
    if isinstance(s, EsxiSettings):
        version = s.esxi_version or "ESXi (version not recorded)"
        return f"{version} on {s.esxi_host or 'an unrecorded host'}"
    libvirt, qemu = s.libvirt_version, s.hypervisor_version
    kind = "KVM" if s.domain_type == "kvm" else "QEMU software emulation (TCG)"
    versions = ", ".join(
        f"{name} {_version(v)}" for name, v in (("libvirt", libvirt), ("QEMU", qemu)) if v
    )
    return f"{kind} under libvirt on {s.hypervisor or 'an unrecorded host'}" + (
        f" ({versions})" if versions else ""
    )


def _version(v: int) -> str:
    """libvirt's integer versions (major·10⁶ + minor·10³ + micro) as text."""
    return f"{v // 1_000_000}.{v // 1000 % 1000}.{v % 1000}"


def _vm_settings(s: EsxiSettings | KvmSettings, n: int | None) -> list[str]:
    """The VM's settings as the hypervisor read them back."""
    got = _readback(s)
    out: list[str] = []
    if got.latencySensitivity:
        out.append(f"latency sensitivity {got.latencySensitivity}")
    mhz = got.cpuReservationMhz
    if mhz is not None:
        # per vCPU: the total follows the point's vCPUs, the setting is the same for all
        amount = f"{mhz / n:,.0f} MHz per vCPU" if n else f"{mhz:,.0f} MHz"
        out.append(f"CPU reservation {amount}" if mhz else "no CPU reservation")
    mem = got.memoryReservationMb
    if mem is not None:
        locked = ", locked to the VM's memory" if got.memoryReservationLockedToMax else ""
        out.append(f"memory reservation {mem:,.0f} MB{locked}" if mem else "no memory reservation")
    if isinstance(s, KvmSettings) and s.emulatorpin:
        out.append(f"QEMU's emulator threads on host CPU {s.emulatorpin}")
    if isinstance(s, KvmSettings) and s.memory_mib:
        out.append(f"memory {s.memory_mib:,} MiB")
    return out


def _sockets(r: PointResult) -> str:
    """`` (2 sockets × 4)`` when the guest's vCPUs were not all on one virtual socket."""
    n, per = vcpus(r), _readback(r.metadata.env.platform_settings).numCoresPerSocket
    if not n or per is None or per <= 0 or per >= n:
        return ""
    return f" ({n // per} sockets × {per})"


def _guest(r: PointResult) -> EsxiSettings | KvmSettings | None:
    """A guest point's settings (None for bare metal, a container, or when unrecorded)."""
    s = r.metadata.env.platform_settings
    if isinstance(s, EsxiSettings) and (s.hypervisor or s.esxi_host):
        return s
    if isinstance(s, KvmSettings) and s.hypervisor:
        return s
    return None


def guest_facts(points: Sequence[PointResult]) -> list[Fact]:
    """A guest's hypervisor, its settings per point where they differ, and its vCPUs per
    point with the host CPUs they were pinned to; none for bare metal."""
    guests = [r for r in points if _guest(r) is not None]
    if not guests:
        return []
    settings = [_guest(r) for r in guests]
    hyps = dict.fromkeys(_hypervisor(s) for s in settings if s is not None)
    vm: dict[str, None] = {}
    for r in guests:
        s = _guest(r)
        if s is not None:
            vm.update(dict.fromkeys(["; ".join(_vm_settings(s, vcpus(r)))]))
    per_point = dict.fromkeys(
        f"{point_label(r)}: {vcpus(r) or '?'} vCPU{'s' if vcpus(r) != 1 else ''}"
        + _sockets(r)
        + (f" on host CPU {host_cpus(r)}" if host_cpus(r) else "")
        for r in sorted(guests, key=lambda r: (r.key.cores, r.key.ht))
    )
    out = [Fact("Hypervisor", "; ".join(hyps))]
    settings_text = [v for v in vm if v]
    out.append(Fact("VM settings (as read back)", " | ".join(settings_text) or "not recorded"))
    out.append(Fact("vCPUs per point", "; ".join(per_point)))
    return out
