"""KVM/libvirt: NGINX inside a libvirt guest whose vCPUs are pinned like bare-metal workers.

For each configuration (N cores, HT mode) the planner chooses host logical CPUs on the
*hypervisor* with the same topology code as for bare metal (distinct physical cores with HT
off, sibling pairs with HT on). This backend then (re)defines the guest from
``templates/libvirt-domain.xml.j2`` with one vCPU per chosen CPU, vCPU i pinned to CPU i of
that set, QEMU's emulator threads pinned to the other host CPUs and a guest CPU topology of
the same shape (threads=2 with HT on); boots it; waits, bounded, until Ansible can log in;
reads the pinning back from libvirt (``vcpuPinInfo``, ``emulatorPinInfo``) and from
``/proc/<qemu pid>/task/*/status`` on the hypervisor (``playbooks/libvirt-host.yml``); and
returns the guest as the :class:`~sizing.provision.platforms.base.Target` that the NGINX
playbook and the clients use. Domain type ``kvm`` on a KVM host; ``qemu`` (software
emulation, TCG) where the guest cannot use KVM: the figures of such a guest are marked
``emulated``.

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
import socket
import time
from typing import Any

from sizing import paths
from sizing.errors import HostError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht
from sizing.provision.ansible import run_playbook
from sizing.provision.platforms.base import Backend, BackendOptions, Target
from sizing.provision.platforms.libvirt_spec import (
    DEFAULT_CONSOLE_LOG,
    NAMESPACE,
    PROBE_INTERVAL_S,
    HypervisorSpec,
    PinLayout,
    VmSpec,
    check_pinning,
    cpus_of_map,
    guest_record,
    host_smt,
    hypervisor_of,
    pin_layout,
    placements,
    render_domain_xml,
    vcpu_threads,
    vm_spec,
)

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
            layout = self._layout(lv, conn, host, hyp, spec, domain_type, ht, cpus)
            uuid = self._stop_earlier(lv, conn, host, spec, where)
            xml = render_domain_xml(spec, domain_type, layout, cores=cores, ht=ht,
                                    inventory_host=host.name, uuid=uuid)  # fmt: skip
            try:
                dom = conn.defineXML(xml)
            except lv.libvirtError as exc:
                raise HostError(host.name, f"libvirt rejected the XML of {where}: {_why(exc)}"
                                ) from None  # fmt: skip
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
            problems = check_pinning(layout, readback["libvirt_vcpus"],
                                     readback["libvirt_emulator"], readback["proc_vcpus"])
            if problems:
                self._stop(lv, dom, 0)
                raise HostError(host.name, f"pinning did not take effect: {'; '.join(problems)}")
            metadata = guest_record(hyp.name, hspec, spec, domain_type, layout, readback, boot_s,
                                    (conn.getLibVersion(), conn.getVersion()))  # fmt: skip
        except lv.libvirtError as exc:
            raise HostError(host.name, f"libvirt failed on {where}: {_why(exc)}") from None
        return Target(host=host.name, address=host.address, workers=tuple(range(layout.vcpus)),
                      metadata=metadata, emulated=domain_type == "qemu")  # fmt: skip

    @staticmethod
    def _layout(lv: Any, conn: Any, host: Host, hyp: Host, spec: VmSpec, domain_type: str,
                ht: Ht, cpus: tuple[int, ...]) -> PinLayout:  # fmt: skip
        """Where the guest's vCPUs and emulator threads go on the hypervisor's CPUs."""
        _n, cpumap, _online = conn.getCPUMap(0)
        try:
            max_vcpus = int(conn.getMaxVcpus(domain_type))
        except lv.libvirtError:
            max_vcpus = None
        try:
            return pin_layout(cpus, ht, cpus_of_map(cpumap), max_vcpus=max_vcpus,
                              emulator_cpus=spec.emulator_cpus, hypervisor=hyp.name)  # fmt: skip
        except SizingError as exc:
            raise HostError(host.name, str(exc)) from None

    def _stop_earlier(self, lv: Any, conn: Any, host: Host, spec: VmSpec, where: str
                      ) -> str | None:  # fmt: skip
        """The UUID of sizing's earlier definition of the domain (stopped), None when there
        is none; a domain sizing did not define is refused."""
        dom = self._lookup(lv, conn, spec.domain)
        if dom is None:
            return None
        if NAMESPACE not in dom.XMLDesc(0):
            raise HostError(
                host.name,
                f"{where} exists and was not defined by sizing; sizing redefines its "
                "guests for every point, so give it a domain name of its own",
            )
        if dom.isActive():
            dom.destroy()  # a throw-away benchmark guest: no need to wait for it
        return str(dom.UUIDString())

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
        if not self.options.connect:
            out["reachable"] = None
            out["summary"] = (
                f"libvirt domain {spec.domain} ({domain_type or 'kvm'}) on {hyp.name} "
                f"({hspec.uri}): not contacted (--connect asks it)"
            )
            return out
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
