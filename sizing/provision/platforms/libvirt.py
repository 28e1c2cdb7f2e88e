"""KVM/libvirt: NGINX inside a libvirt guest whose vCPUs are pinned like bare-metal workers.

For each configuration (N cores, HT mode) the planner chooses host logical CPUs on the
*hypervisor* with the same topology code as for bare metal (distinct physical cores with HT
off, sibling pairs with HT on). This backend then (re)defines the guest from
``templates/libvirt-domain.xml.j2`` with one vCPU per chosen CPU, vCPU i pinned to CPU i of
that set, QEMU's emulator threads pinned to the other host CPUs and a guest CPU topology of
the same shape (threads=2 with HT on); boots it; waits, bounded, until Ansible can log in;
reads the pinning back from libvirt (``vcpuPinInfo``, ``emulatorPinInfo``) and from
``/proc/<qemu pid>/task/*/status`` on the hypervisor (``playbooks/libvirt-host.yml``); and
returns the guest as the :class:`~sizing.platforms.Target` that the NGINX playbook and the
clients use. Domain type ``kvm`` on a KVM host; ``qemu`` (software emulation, TCG) where the
guest cannot use KVM: the figures of such a guest are marked ``emulated``.

Inventory (validated here, each problem one ``file: host H: sizing_x.field: message`` line):

* the hypervisor is an inventory host (Ansible reaches it to read ``/proc``) with
  ``sizing_hypervisor: {uri: qemu+ssh://root@kvm1/system, domain_type: kvm}``; credentials,
  when the URI needs any, come from environment variables named by ``username_env`` and
  ``password_env``, never from the inventory;
* the guest is a server with ``sizing_platform: libvirt`` and ``sizing_vm: {domain: ...,
  hypervisor: kvm1, disk: ..., bridge: ...}``; Ansible reaches it as any host
  (``ansible_host``, ``ansible_user``, key).

libvirt-python is imported only when a hypervisor is contacted.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sizing import paths
from sizing.errors import HostError, InputError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht, Platform
from sizing.provision.platforms.base import Backend, BackendOptions, Target
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
        if "://" not in v:
            raise ValueError("not a libvirt URI (e.g. qemu:///system, qemu+ssh://root@kvm1/system)")
        if urlsplit(v).password:
            raise ValueError(
                "holds a password; never store one in an inventory: name an environment "
                "variable with password_env instead"
            )
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


# -- the backend ------------------------------------------------------------------------


def _libvirt() -> Any:
    try:
        import libvirt
    except ImportError as exc:
        raise SizingError(
            "libvirt-python is not installed; install it with "
            "`.venv/bin/pip install -e '.[libvirt]'` (needs pkg-config and libvirt-dev)"
        ) from exc
    # libvirt prints every error on stderr by default; we report them ourselves, once.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    return libvirt


def _why(exc: Exception) -> str:
    get = getattr(exc, "get_error_message", None)
    msg = get() if callable(get) else None
    return str(msg or exc).strip().splitlines()[0] if str(msg or exc).strip() else repr(exc)


class Libvirt(Backend):
    """A libvirt guest on an inventory hypervisor host is the server under test."""

    def __init__(self, options: BackendOptions | None = None) -> None:
        self.options = options or BackendOptions()
        self.inventory = self.options.inventory
        self.debug = self.options.debug
        self._conns: dict[str, Any] = {}

    # -- helpers ------------------------------------------------------------------------

    def placements(self, inventory: Inventory) -> dict[str, str]:
        return placements(inventory)

    def _inv(self) -> Inventory:
        if self.inventory is None:
            raise SizingError("the libvirt platform needs the inventory to find the hypervisor")
        return self.inventory

    def _specs(self, host: Host) -> tuple[VmSpec, Host, HypervisorSpec]:
        inv = self._inv()
        spec = vm_spec(inv, host)
        hyp, hspec = hypervisor_of(inv, host, spec)
        return spec, hyp, hspec

    def connect(self, hyp: Host, hspec: HypervisorSpec) -> Any:
        """An open connection to the hypervisor (cached), or :class:`HostError`."""
        conn = self._conns.get(hspec.uri)
        if conn is not None and conn.isAlive():
            return conn
        lv = _libvirt()
        try:
            if hspec.username_env or hspec.password_env:
                conn = lv.openAuth(hspec.uri, self._auth(lv, hyp, hspec), 0)
            else:
                conn = lv.open(hspec.uri)
        except lv.libvirtError as exc:
            raise HostError(
                hyp.name, f"cannot reach the hypervisor at {hspec.uri}: {_why(exc)}"
            ) from None
        if conn is None:  # pragma: no cover - old bindings return None instead of raising
            raise HostError(hyp.name, f"cannot reach the hypervisor at {hspec.uri}")
        self._conns[hspec.uri] = conn
        return conn

    @staticmethod
    def _auth(lv: Any, hyp: Host, hspec: HypervisorSpec) -> list[Any]:
        values = {}
        for kind, var in (
            (lv.VIR_CRED_AUTHNAME, hspec.username_env),
            (lv.VIR_CRED_PASSPHRASE, hspec.password_env),
        ):
            if var is None:
                continue
            if var not in os.environ:
                raise HostError(
                    hyp.name, f"environment variable {var} is not set (libvirt credentials)"
                )
            values[kind] = os.environ[var]

        def callback(creds: list[list[Any]], _data: Any) -> int:
            for cred in creds:
                if cred[0] not in values:
                    return -1
                cred[4] = values[cred[0]]
            return 0

        return [list(values), callback, None]

    @staticmethod
    def _lookup(lv: Any, conn: Any, name: str) -> Any:
        try:
            return conn.lookupByName(name)
        except lv.libvirtError as exc:
            if exc.get_error_code() == lv.VIR_ERR_NO_DOMAIN:
                return None
            raise

    # -- the interface ------------------------------------------------------------------

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """(Re)define the guest for this configuration, boot it and wait until it answers."""
        spec, hyp, hspec = self._specs(host)
        domain_type = spec.domain_type or hspec.domain_type
        lv = _libvirt()
        conn = self.connect(hyp, hspec)
        where = f"domain {spec.domain} on {hyp.name}"
        try:
            _n, cpumap, _online = conn.getCPUMap(0)
            try:
                max_vcpus = int(conn.getMaxVcpus(domain_type))
            except lv.libvirtError:
                max_vcpus = None
            try:
                layout = pin_layout(
                    cpus,
                    ht,
                    cpus_of_map(cpumap),
                    max_vcpus=max_vcpus,
                    emulator_cpus=spec.emulator_cpus,
                    hypervisor=hyp.name,
                )
            except SizingError as exc:
                raise HostError(host.name, str(exc)) from None
            dom = self._lookup(lv, conn, spec.domain)
            uuid = None
            if dom is not None:
                if NAMESPACE not in dom.XMLDesc(0):
                    raise HostError(
                        host.name,
                        f"{where} exists and was not defined by sizing; sizing redefines its "
                        "guests for every point, so give it a domain name of its own",
                    )
                uuid = dom.UUIDString()
                if dom.isActive():
                    dom.destroy()  # a throw-away benchmark guest: no need to wait for it
            xml = render_domain_xml(
                spec, domain_type, layout, cores=cores, ht=ht, inventory_host=host.name, uuid=uuid
            )
            try:
                dom = conn.defineXML(xml)
            except lv.libvirtError as exc:
                raise HostError(
                    host.name, f"libvirt rejected the XML of {where}: {_why(exc)}"
                ) from None
            t0 = time.monotonic()
            try:
                dom.create()
            except lv.libvirtError as exc:
                raise HostError(host.name, f"{where} did not start: {_why(exc)}") from None
            try:
                self._wait_for_guest(host, spec, hyp, dom, t0)
                readback = self._readback(lv, dom, hyp, spec, layout)
            except BaseException:
                self._stop(lv, dom, 0)  # never leave a half-prepared guest burning host CPUs
                raise
            boot_s = time.monotonic() - t0
            problems = check_pinning(
                layout,
                readback["libvirt_vcpus"],
                readback["libvirt_emulator"],
                readback["proc_vcpus"],
            )
            if problems:
                self._stop(lv, dom, 0)
                raise HostError(host.name, f"pinning did not take effect: {'; '.join(problems)}")
            metadata = {
                "hypervisor": hyp.name,
                "uri": hspec.uri,
                "domain": spec.domain,
                "domain_type": domain_type,
                "emulated": domain_type == "qemu",
                "vcpus": layout.vcpus,
                "guest_topology": {
                    "sockets": 1,
                    "cores": layout.vcpus // layout.threads,
                    "threads": layout.threads,
                },
                "vcpupin": {str(i): str(c) for i, c in enumerate(layout.pins)},
                "emulatorpin": cpulist(layout.emulator),
                "vcpupin_libvirt": {
                    str(i): cpulist(v) for i, v in sorted(readback["libvirt_vcpus"].items())
                },
                "emulatorpin_libvirt": cpulist(readback["libvirt_emulator"]),
                "vcpupin_proc": {
                    str(i): cpulist(v) for i, v in sorted(readback["proc_vcpus"].items())
                },
                "qemu_pid": readback["pid"],
                "qemu_threads": readback["threads"],
                "boot_s": round(boot_s, 1),
                "memory_mib": spec.memory_mib,
                "libvirt_version": conn.getLibVersion(),
                "hypervisor_version": conn.getVersion(),
            }
        except lv.libvirtError as exc:
            raise HostError(host.name, f"libvirt failed on {where}: {_why(exc)}") from None
        return Target(
            host=host.name,
            address=host.address,
            workers=tuple(range(layout.vcpus)),
            metadata=metadata,
            emulated=domain_type == "qemu",
        )

    def teardown(self, host: Host) -> None:
        """Shut the guest down (bounded), then power it off; its definition stays."""
        spec, hyp, hspec = self._specs(host)
        lv = _libvirt()
        conn = self.connect(hyp, hspec)
        try:
            dom = self._lookup(lv, conn, spec.domain)
            if dom is not None:
                self._stop(lv, dom, spec.shutdown_timeout_s)
        except lv.libvirtError as exc:
            raise HostError(
                host.name, f"could not stop domain {spec.domain}: {_why(exc)}"
            ) from None

    def describe(self, host: Host) -> dict[str, Any]:
        """The guest's hypervisor, its reachability, host CPUs and HT capability."""
        spec, hyp, hspec = self._specs(host)
        domain_type = spec.domain_type or hspec.domain_type
        out: dict[str, Any] = {
            "platform": "libvirt",
            "vm": host.name,
            "domain": spec.domain,
            "hypervisor": hyp.name,
            "endpoint": hspec.uri,
            "domain_type": domain_type,
            "emulated": domain_type == "qemu",
            "reachable": False,
            "host_cpus": None,
            "threads_per_core": None,
            "ht": "?",
            "state": "?",
            "error": None,
        }
        try:
            lv = _libvirt()
            conn = self.connect(hyp, hspec)
            info = conn.getInfo()  # [model, MiB, cpus, MHz, nodes, sockets, cores, threads]
            topo = host_smt(conn.getCapabilities())
            threads = topo.get("threads", int(info[7]))
            dom = self._lookup(lv, conn, spec.domain)
            state = "not defined"
            if dom is not None:
                state = "running" if dom.isActive() else "shut off"
            out.update(
                reachable=True,
                host_cpus=int(info[2]),
                threads_per_core=threads,
                ht="on" if threads > 1 else "off (1 thread/core)",
                state=state,
            )
        except SizingError as exc:
            out["error"] = str(exc)
        except Exception as exc:  # a libvirtError: describe never raises for reachability
            out["error"] = _why(exc)
        kind = "emulated (qemu/TCG)" if out["emulated"] else str(domain_type)
        if out["error"]:
            out["summary"] = f"domain {spec.domain} on {hyp.name} ({hspec.uri}): {out['error']}"
        else:
            out["summary"] = (
                f"libvirt domain {spec.domain} ({out['state']}, {kind}) on {hyp.name} "
                f"({hspec.uri}): {out['host_cpus']} host CPUs, HT {out['ht']}"
            )
        return out

    # -- steps --------------------------------------------------------------------------

    @staticmethod
    def _stop(lv: Any, dom: Any, timeout_s: float) -> None:
        try:
            if not dom.isActive():
                return
            if timeout_s > 0:
                dom.shutdown()
                deadline = time.monotonic() + timeout_s
                while time.monotonic() < deadline:
                    if not dom.isActive():
                        return
                    time.sleep(0.5)
            dom.destroy()
        except lv.libvirtError:
            if dom.isActive():
                raise

    def _wait_for_guest(self, host: Host, spec: VmSpec, hyp: Host, dom: Any, t0: float) -> None:
        """Bounded: until the guest's sshd greets on ``ansible_host:ansible_port``.

        The probe runs from this machine, where Ansible runs too; Ansible's own login comes
        right after (the sweep reads the guest's facts) and reports its own failure.
        """
        addr = str(host.variables.get("ansible_host") or host.address)
        port = int(host.variables.get("ansible_port", 22))
        deadline = t0 + spec.boot_timeout_s
        console = spec.console_log or DEFAULT_CONSOLE_LOG.format(domain=spec.domain)
        last = "no answer"
        while True:
            if not dom.isActive():
                raise HostError(
                    host.name,
                    f"domain {spec.domain} stopped while booting; see its console log "
                    f"{console} on {hyp.name}",
                )
            last = _ssh_banner(addr, port)
            if last == "ok":
                break
            if time.monotonic() >= deadline:
                raise HostError(
                    host.name,
                    f"the guest did not come up: no SSH at {addr}:{port} within "
                    f"{spec.boot_timeout_s:g} s of booting ({last}); see its console log "
                    f"{console} on {hyp.name}",
                )
            time.sleep(PROBE_INTERVAL_S)

    def _readback(
        self, lv: Any, dom: Any, hyp: Host, spec: VmSpec, layout: PinLayout
    ) -> dict[str, Any]:
        """The pinning as libvirt and as /proc/<qemu pid>/task/*/status report it."""
        from sizing.provision.ansible import run_playbook

        live = lv.VIR_DOMAIN_AFFECT_LIVE
        libvirt_vcpus = {i: cpus_of_map(m) for i, m in enumerate(dom.vcpuPinInfo(live))}
        libvirt_emulator = cpus_of_map(dom.emulatorPinInfo(live))
        if hyp.is_local:  # this machine: read /proc here, with the same script
            doc = _qemu_threads_script().collect(spec.domain)
            if doc is None:
                raise HostError(hyp.name, f"no running QEMU process for domain {spec.domain}")
            return self._readback_doc(libvirt_vcpus, libvirt_emulator, doc)
        res = run_playbook(
            "libvirt-host.yml",
            self._inv().path,
            extravars={"sizing_hosts": hyp.name, "sizing_domain": spec.domain},
            limit=[hyp.name],
            timeout=120,
            debug=self.debug,
        )
        out = res.result(hyp.name, "Read the QEMU threads of the guest")
        if out is None:
            why = res.problems().get(hyp.name) or f"playbook {res.status}"
            raise HostError(hyp.name, f"cannot read the QEMU threads of {spec.domain}: {why}")
        try:
            doc = json.loads(str(out.get("stdout", "")))
        except ValueError:
            raise HostError(hyp.name, f"unreadable QEMU thread list of {spec.domain}") from None
        return self._readback_doc(libvirt_vcpus, libvirt_emulator, doc)

    @staticmethod
    def _readback_doc(
        libvirt_vcpus: dict[int, tuple[int, ...]],
        libvirt_emulator: tuple[int, ...],
        doc: dict[str, Any],
    ) -> dict[str, Any]:
        threads = list(doc.get("threads", []))
        return {
            "libvirt_vcpus": libvirt_vcpus,
            "libvirt_emulator": libvirt_emulator,
            "proc_vcpus": vcpu_threads(threads),
            "pid": doc.get("pid"),
            "threads": threads,
        }


def _qemu_threads_script() -> Any:
    """``playbooks/files/qemu_threads.py`` as a module (what the playbook runs remotely)."""
    import importlib.util

    path = paths.PLAYBOOKS / "files" / "qemu_threads.py"
    spec = importlib.util.spec_from_file_location("sizing_qemu_threads", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ssh_banner(addr: str, port: int) -> str:
    """``ok`` when an SSH server greets on addr:port, else why not (one short phrase)."""
    try:
        with socket.create_connection((addr, port), timeout=2) as s:
            s.settimeout(5)
            banner = s.recv(64)
    except TimeoutError:
        return "connection timed out"
    except OSError as exc:
        return exc.strerror or str(exc)
    return "ok" if banner.startswith(b"SSH-") else f"not an SSH server: {banner[:20]!r}"
