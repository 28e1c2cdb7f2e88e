"""What the methodology says about the guests: the hypervisor and its version, the VM's
settings as the hypervisor read them back (latency sensitivity, reservations, pinning) and
the vCPUs each point gave the guest, read from the points' stored platform settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sizing.model import PointResult
from sizing.records import PlatformSettings
from sizing.report.data.model import Fact

__all__ = ["guest_facts", "host_cpus", "point_label", "vcpus"]


def point_label(r: PointResult) -> str:
    """``1 core, HT on``: a point's cores and HT mode."""
    n = r.key.cores
    return f"{n} core{'s' if n != 1 else ''}, HT {r.key.ht}"


def _readback(s: PlatformSettings) -> Mapping[str, Any]:
    got = s.extra.get("readback")
    return got if isinstance(got, dict) else {}


def host_cpus(r: PointResult) -> str:
    """The host CPUs a guest point's vCPUs ran on ("" for bare metal or when unrecorded):
    ESXi's CPU affinity as read back, or libvirt's vCPU pinning."""
    s = r.metadata.env.platform_settings
    if s is None:
        return ""
    cpus = _readback(s).get("cpuAffinity") or s.extra.get("host_cpus")
    if isinstance(cpus, list) and cpus:
        return ",".join(str(c) for c in cpus)
    pins = s.extra.get("vcpupin")
    if isinstance(pins, dict) and pins:
        return ",".join(str(pins[k]) for k in sorted(pins, key=int))
    return ""


def vcpus(r: PointResult) -> int | None:
    """The vCPUs a guest point ran with (None for bare metal or when unrecorded)."""
    s = r.metadata.env.platform_settings
    if s is None:
        return None
    n = s.vcpus or _readback(s).get("numCPUs")
    return int(n) if isinstance(n, int) and n > 0 else None


def _hypervisor(s: PlatformSettings) -> str:
    if s.esxi_host or s.hypervisor == "vsphere":
        version = s.extra.get("esxi_version") or "ESXi (version not recorded)"
        return f"{version} on {s.esxi_host or 'an unrecorded host'}"
    libvirt, qemu = s.extra.get("libvirt_version"), s.extra.get("hypervisor_version")
    kind = "KVM" if s.domain_type == "kvm" else "QEMU software emulation (TCG)"
    versions = ", ".join(
        f"{name} {_version(v)}" for name, v in (("libvirt", libvirt), ("QEMU", qemu)) if v
    )
    return f"{kind} under libvirt on {s.hypervisor or 'an unrecorded host'}" + (
        f" ({versions})" if versions else ""
    )


def _version(v: Any) -> str:
    """libvirt's integer versions (major·10⁶ + minor·10³ + micro) as text."""
    if isinstance(v, int):
        return f"{v // 1_000_000}.{v // 1000 % 1000}.{v % 1000}"
    return str(v)


def _vm_settings(s: PlatformSettings, n: int | None) -> list[str]:
    """The VM's settings as the hypervisor read them back."""
    got = _readback(s)
    out: list[str] = []
    if got.get("latencySensitivity"):
        out.append(f"latency sensitivity {got['latencySensitivity']}")
    mhz = got.get("cpuReservationMhz")
    if isinstance(mhz, int | float):
        # per vCPU: the total follows the point's vCPUs, the setting is the same for all
        amount = f"{mhz / n:,.0f} MHz per vCPU" if n else f"{mhz:,.0f} MHz"
        out.append(f"CPU reservation {amount}" if mhz else "no CPU reservation")
    mem = got.get("memoryReservationMb")
    if isinstance(mem, int | float):
        locked = ", locked to the VM's memory" if got.get("memoryReservationLockedToMax") else ""
        out.append(f"memory reservation {mem:,.0f} MB{locked}" if mem else "no memory reservation")
    if s.extra.get("emulatorpin"):
        out.append(f"QEMU's emulator threads on host CPU {s.extra['emulatorpin']}")
    if s.extra.get("memory_mib"):
        out.append(f"memory {s.extra['memory_mib']:,} MiB")
    return out


def _sockets(r: PointResult) -> str:
    """`` (2 sockets × 4)`` when the guest's vCPUs were not all on one virtual socket."""
    s = r.metadata.env.platform_settings
    n, per = vcpus(r), None if s is None else _readback(s).get("numCoresPerSocket")
    if not n or not isinstance(per, int) or per <= 0 or per >= n:
        return ""
    return f" ({n // per} sockets × {per})"


def guest_facts(points: Sequence[PointResult]) -> list[Fact]:
    """A guest's hypervisor, its settings per point where they differ, and its vCPUs per
    point with the host CPUs they were pinned to; none for bare metal."""
    guests = [
        r
        for r in points
        if r.metadata.env.platform_settings is not None
        and (
            r.metadata.env.platform_settings.hypervisor
            or r.metadata.env.platform_settings.esxi_host
        )
    ]
    if not guests:
        return []
    settings = [r.metadata.env.platform_settings for r in guests]
    hyps = dict.fromkeys(_hypervisor(s) for s in settings if s is not None)
    vm: dict[str, None] = {}
    for r in guests:
        s = r.metadata.env.platform_settings
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
