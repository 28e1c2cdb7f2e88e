"""KVM/libvirt, the pure parts: the inventory variables (``sizing_hypervisor``,
``sizing_vm``), the guests' placement, the pin layout, the domain XML and the read-back
checks. The backend that acts on them is :mod:`sizing.provision.platforms.libvirt`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sizing import paths
from sizing.errors import InputError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht, Platform
from sizing.provision.platforms.urls import url_secret
from sizing.records import GuestTopology, KvmSettings, QemuThread, load
from sizing.topology import cpulist, parse_cpulist

NAMESPACE = "urn:x-sizing:libvirt:1"  # marks domains that sizing defined (and may redefine)
PROBE_INTERVAL_S = 1.0
DEFAULT_CONSOLE_LOG = "/var/log/libvirt/qemu/{domain}-console.log"
_VCPU_THREAD = re.compile(r"^CPU (\d+)/(KVM|TCG)$")

DomainType = Literal["kvm", "qemu"]


# -- inventory models -------------------------------------------------------------------


class HypervisorSpec(BaseModel):
    """``sizing_hypervisor`` of a hypervisor host."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["libvirt"] = "libvirt"
    uri: str = Field(min_length=1, description="libvirt URI, e.g. qemu+ssh://root@kvm1/system")
    domain_type: DomainType = Field(
        default="kvm", description="kvm on a KVM host; qemu (software emulation) elsewhere"
    )
    username_env: str | None = Field(default=None, description="environment variable")
    password_env: str | None = Field(default=None, description="environment variable")

    @field_validator("uri")
    @classmethod
    def _no_secret_in_uri(cls, v: str) -> str:
        # The secret first, and never the value itself in a message.
        secret = url_secret(v)
        if secret == "a user and password":
            raise ValueError(
                "holds a password; never store one in an inventory: name an environment "
                "variable with password_env instead"
            )
        if secret is not None:
            raise ValueError(f"holds {secret}; never store a secret in an inventory")
        if "://" not in v:
            raise ValueError("not a libvirt URI (e.g. qemu:///system, qemu+ssh://root@kvm1/system)")
        try:
            _ = urlsplit(v).port
        except ValueError:
            raise ValueError("not a valid libvirt URI (a bad host or port)") from None
        return v


class VmSpec(BaseModel):
    """``sizing_vm`` of a libvirt guest."""

    model_config = ConfigDict(extra="forbid")

    domain: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,62}$")
    hypervisor: str = Field(min_length=1, description="the inventory host the guest lives on")
    domain_type: DomainType | None = Field(default=None, description="overrides the host's")
    memory_mib: int = Field(default=1024, ge=128, le=4 * 1024 * 1024)
    machine: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    emulator: str | None = None
    cpu_mode: Literal["host-passthrough", "host-model", "maximum"] | None = Field(
        default=None, description="default: host-passthrough for kvm, QEMU's model for qemu"
    )
    kernel: str | None = Field(default=None, description="direct kernel boot, on the hypervisor")
    initrd: str | None = None
    cmdline: str | None = None
    disk: str = Field(min_length=1, description="root disk image path on the hypervisor")
    disk_format: Literal["raw", "qcow2"] = "raw"
    bridge: str | None = None
    network: str | None = None
    mac: str | None = Field(default=None, pattern=r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")
    emulator_cpus: str | None = Field(
        default=None, description="host cpulist for QEMU's emulator threads"
    )
    boot_timeout_s: float = Field(default=120, gt=0, le=3600)
    shutdown_timeout_s: float = Field(default=30, ge=0, le=600)
    console_log: str | None = None

    @field_validator("emulator_cpus")
    @classmethod
    def _cpulist(cls, v: str | None) -> str | None:
        if v is not None and not parse_cpulist(v):
            raise ValueError("an empty CPU list")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> VmSpec:
        if (self.bridge is None) == (self.network is None):
            raise ValueError("give exactly one of bridge (a host bridge) or network (libvirt's)")
        if (self.initrd or self.cmdline) and not self.kernel:
            raise ValueError("initrd and cmdline need kernel (direct kernel boot)")
        return self


def _problems(prefix: str, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        out.append(f"{prefix}{'.' + loc if loc else ''}: {msg}")
    return out


def vm_spec(inventory: Inventory, host: Host) -> VmSpec:
    """The validated ``sizing_vm`` of ``host``, or :class:`InputError`."""
    where = f"host {host.name}: sizing_vm"
    if not host.sizing.vm:
        raise InputError(str(inventory.path), [f"{where}: missing (a libvirt guest needs it)"])
    try:
        return VmSpec.model_validate(host.sizing.vm)
    except ValidationError as exc:
        raise InputError(str(inventory.path), _problems(where, exc)) from None


def hypervisor_of(inventory: Inventory, host: Host, spec: VmSpec) -> tuple[Host, HypervisorSpec]:
    """The hypervisor host of a guest and its validated ``sizing_hypervisor``."""
    hyp = inventory.hosts.get(spec.hypervisor)
    if hyp is None:
        raise InputError(
            str(inventory.path),
            [f"host {host.name}: sizing_vm.hypervisor: no inventory host {spec.hypervisor!r}"],
        )
    where = f"host {hyp.name}: sizing_hypervisor"
    if not hyp.sizing.hypervisor:
        raise InputError(
            str(inventory.path),
            [f"{where}: missing (the hypervisor of {host.name} needs at least a uri)"],
        )
    try:
        return hyp, HypervisorSpec.model_validate(hyp.sizing.hypervisor)
    except ValidationError as exc:
        raise InputError(str(inventory.path), _problems(where, exc)) from None


def placements(inventory: Inventory) -> dict[str, str]:
    """Guest server -> the inventory host whose CPUs it runs on, for every libvirt server.

    Validates every guest and hypervisor first; all problems come in one InputError.
    """
    out: dict[str, str] = {}
    problems: list[str] = []
    for host in inventory.servers:
        if host.platform is not Platform.LIBVIRT:
            continue
        try:
            spec = vm_spec(inventory, host)
            hypervisor_of(inventory, host, spec)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        out[host.name] = spec.hypervisor
    if problems:
        raise InputError(str(inventory.path), problems)
    return out


# -- pure parts: pins, XML, read-back --------------------------------------------------


@dataclass(frozen=True)
class PinLayout:
    """vCPU i runs on host CPU ``pins[i]``; the guest sees ``threads`` threads per core."""

    pins: tuple[int, ...]
    threads: int
    emulator: tuple[int, ...]

    @property
    def vcpus(self) -> int:
        return len(self.pins)


def pin_layout(
    cpus: Sequence[int],
    ht: Ht,
    host_cpus: Sequence[int],
    *,
    max_vcpus: int | None = None,
    emulator_cpus: str | None = None,
    hypervisor: str = "the hypervisor",
) -> PinLayout:
    """Check the planner's host CPUs against the hypervisor and place the emulator.

    ``cpus`` come from :func:`sizing.topology.allocate` on the hypervisor's topology: with HT
    on they are sibling pairs, so vCPUs 2k and 2k+1 are siblings in the guest too. The
    emulator threads get every other online host CPU, or ``emulator_cpus`` when given; they
    never share a CPU with a vCPU. Raises :class:`SizingError` with one sentence.
    """
    pins = tuple(cpus)
    if not pins:
        raise SizingError("a guest needs at least one vCPU")
    if len(set(pins)) != len(pins):
        raise SizingError(f"host CPUs {list(pins)} repeat a CPU; each vCPU needs its own")
    online = tuple(sorted(set(host_cpus)))
    if max_vcpus is not None and len(pins) > max_vcpus:
        raise SizingError(
            f"{len(pins)} vCPUs asked for; {hypervisor} allows at most {max_vcpus} per guest"
        )
    missing = [c for c in pins if c not in online]
    if missing or len(pins) > len(online):
        raise SizingError(
            f"{len(pins)} vCPUs on host CPUs {cpulist(pins)} asked for; {hypervisor} has "
            f"{len(online)} online CPUs ({cpulist(online) if online else 'none'})"
        )
    threads = 2 if ht is Ht.ON else 1
    if len(pins) % threads:
        raise SizingError(f"HT on needs sibling pairs of host CPUs, got {cpulist(pins)}")
    if emulator_cpus is not None:
        emulator = parse_cpulist(emulator_cpus)
        bad = [c for c in emulator if c not in online]
        if bad:
            raise SizingError(
                f"sizing_vm.emulator_cpus {emulator_cpus!r} names CPUs that {hypervisor} does "
                f"not have online ({cpulist(bad)}; online: {cpulist(online)})"
            )
    else:
        emulator = tuple(c for c in online if c not in pins)
    if not emulator:
        raise SizingError(
            f"no host CPU is left for QEMU's emulator threads: the {len(pins)} vCPUs take "
            f"every online CPU of {hypervisor} ({cpulist(online)})"
        )
    shared = sorted(set(emulator) & set(pins))
    if shared:
        raise SizingError(
            f"sizing_vm.emulator_cpus {emulator_cpus!r} overlaps the vCPUs' host CPUs "
            f"({cpulist(shared)}); the emulator must run elsewhere"
        )
    return PinLayout(pins=pins, threads=threads, emulator=emulator)


def cmdline_of(spec: VmSpec) -> str | None:
    """The kernel command line for direct kernel boot (None without a kernel)."""
    if not spec.kernel:
        return None
    return spec.cmdline or "root=/dev/vda rw console=ttyS0"


def render_domain_xml(
    spec: VmSpec,
    domain_type: DomainType,
    layout: PinLayout,
    *,
    cores: int,
    ht: Ht,
    inventory_host: str,
    uuid: str | None = None,
) -> str:
    """The domain XML of one configuration (pure: template + values)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    cpu_mode = spec.cpu_mode
    if cpu_mode is None and domain_type == "kvm":
        cpu_mode = "host-passthrough"
    return env.get_template("libvirt-domain.xml.j2").render(
        name=spec.domain,
        uuid=uuid,
        namespace=NAMESPACE,
        cores=cores,
        ht=str(ht),
        inventory_host=inventory_host,
        domain_type=domain_type,
        memory_mib=spec.memory_mib,
        pins=layout.pins,
        threads=layout.threads,
        emulator_cpuset=cpulist(layout.emulator),
        machine=spec.machine,
        cpu_mode=cpu_mode,
        kernel=spec.kernel,
        initrd=spec.initrd,
        cmdline=cmdline_of(spec),
        emulator=spec.emulator,
        disk=spec.disk,
        disk_format=spec.disk_format,
        bridge=spec.bridge,
        network=spec.network,
        mac=spec.mac,
        console_log=spec.console_log or DEFAULT_CONSOLE_LOG.format(domain=spec.domain),
    )


def cpus_of_map(cpumap: Sequence[bool]) -> tuple[int, ...]:
    """Host CPU ids set in a libvirt CPU map (a tuple of booleans)."""
    return tuple(i for i, on in enumerate(cpumap) if on)


def vcpu_threads(threads: Sequence[dict[str, Any]]) -> dict[int, tuple[int, ...]]:
    """vCPU index -> Cpus_allowed_list of its QEMU thread (named ``CPU n/KVM`` or ``/TCG``)."""
    out: dict[int, tuple[int, ...]] = {}
    for t in threads:
        m = _VCPU_THREAD.match(str(t.get("comm", "")))
        if m:
            out[int(m.group(1))] = parse_cpulist(str(t.get("cpus", "")))
    return out


def host_smt(capabilities_xml: str) -> dict[str, int]:
    """The host CPU topology that libvirt reports (sockets, cores, threads per core)."""
    root = ET.fromstring(capabilities_xml)
    topo = root.find("./host/cpu/topology")
    if topo is None:
        return {}
    return {k: int(v) for k, v in topo.attrib.items() if v.isdigit()}


def check_pinning(
    layout: PinLayout,
    libvirt_vcpus: dict[int, tuple[int, ...]],
    libvirt_emulator: tuple[int, ...],
    proc_vcpus: dict[int, tuple[int, ...]],
) -> list[str]:
    """Differences between the requested pinning and what libvirt and /proc report."""
    problems = []
    for i, cpu in enumerate(layout.pins):
        got = libvirt_vcpus.get(i)
        if got != (cpu,):
            problems.append(f"libvirt reports vCPU {i} on {cpulist(got) if got else 'nothing'}")
        seen = proc_vcpus.get(i)
        if seen is not None and seen != (cpu,):
            problems.append(f"/proc shows the thread of vCPU {i} allowed on {cpulist(seen)}")
    if tuple(sorted(libvirt_emulator)) != tuple(sorted(layout.emulator)):
        problems.append(f"libvirt reports the emulator on {cpulist(libvirt_emulator) or '-'}")
    return problems


def guest_record(
    hypervisor: str,
    hspec: HypervisorSpec,
    spec: VmSpec,
    domain_type: str,
    layout: PinLayout,
    readback: dict[str, Any],
    boot_s: float,
    versions: tuple[int, int],
) -> KvmSettings:
    """What a prepared guest reports for its points' records: the domain, its topology, its
    pinning as asked and as libvirt and /proc read it back, its QEMU threads and boot time."""
    return KvmSettings(
        hypervisor=hypervisor,
        uri=hspec.uri,
        domain=spec.domain,
        domain_type=domain_type,
        emulated=domain_type == "qemu",
        vcpus=layout.vcpus,
        guest_topology=GuestTopology(
            sockets=1, cores=layout.vcpus // layout.threads, threads=layout.threads
        ),
        vcpupin={str(i): str(c) for i, c in enumerate(layout.pins)},
        emulatorpin=cpulist(layout.emulator),
        vcpupin_libvirt={str(i): cpulist(v) for i, v in sorted(readback["libvirt_vcpus"].items())},
        emulatorpin_libvirt=cpulist(readback["libvirt_emulator"]),
        vcpupin_proc={str(i): cpulist(v) for i, v in sorted(readback["proc_vcpus"].items())},
        qemu_pid=readback["pid"],
        qemu_threads=tuple(load(QemuThread, t) for t in readback["threads"]),
        boot_s=round(boot_s, 1),
        memory_mib=spec.memory_mib,
        libvirt_version=versions[0],
        hypervisor_version=versions[1],
    )
