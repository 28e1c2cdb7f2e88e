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

import time
from typing import Any

from sizing.errors import HostError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht
from sizing.provision.platforms.base import Backend, BackendOptions, Target
from sizing.provision.platforms.libvirt_guest import (
    Connections,
    libvirt_module,
    lookup,
    readback,
    stop,
    wait_for_guest,
    why,
)
from sizing.provision.platforms.libvirt_spec import (
    NAMESPACE,
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
    vm_spec,
)

# -- the backend ------------------------------------------------------------------------


class Libvirt(Backend):
    """A libvirt guest on an inventory hypervisor host is the server under test."""

    def __init__(self, options: BackendOptions | None = None) -> None:
        self.options = options or BackendOptions()
        self.inventory = self.options.inventory
        self.debug = self.options.debug
        self.connections = Connections()

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
        return self.connections.connect(hyp, hspec)

    # -- the interface ------------------------------------------------------------------

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """(Re)define the guest for this configuration, boot it and wait until it answers."""
        spec, hyp, hspec = self._specs(host)
        domain_type = spec.domain_type or hspec.domain_type
        lv = libvirt_module()
        conn = self.connect(hyp, hspec)
        where = f"domain {spec.domain} on {hyp.name}"
        try:
            layout = self._layout(lv, conn, host, hyp, spec, domain_type, ht, cpus)
            uuid = self._stop_earlier(lv, conn, host, spec, where)
            xml = render_domain_xml(
                spec, domain_type, layout, cores=cores, ht=ht, inventory_host=host.name, uuid=uuid
            )
            try:
                dom = conn.defineXML(xml)
            except lv.libvirtError as exc:
                raise HostError(
                    host.name, f"libvirt rejected the XML of {where}: {why(exc)}"
                ) from None
            t0 = time.monotonic()
            try:
                dom.create()
            except lv.libvirtError as exc:
                raise HostError(host.name, f"{where} did not start: {why(exc)}") from None
            try:
                wait_for_guest(host, spec, hyp, dom, t0)
                pins = readback(lv, dom, hyp, spec, self._inv().path, self.debug)
            except BaseException:
                stop(lv, dom, 0)  # never leave a half-prepared guest burning host CPUs
                raise
            boot_s = time.monotonic() - t0
            problems = check_pinning(
                layout, pins["libvirt_vcpus"], pins["libvirt_emulator"], pins["proc_vcpus"]
            )
            if problems:
                stop(lv, dom, 0)
                raise HostError(host.name, f"pinning did not take effect: {'; '.join(problems)}")
            settings = guest_record(
                hyp.name,
                hspec,
                spec,
                domain_type,
                layout,
                pins,
                boot_s,
                (conn.getLibVersion(), conn.getVersion()),
            )
        except lv.libvirtError as exc:
            raise HostError(host.name, f"libvirt failed on {where}: {why(exc)}") from None
        return Target(
            host=host.name,
            address=host.address,
            workers=tuple(range(layout.vcpus)),
            settings=settings,
            emulated=domain_type == "qemu",
        )

    @staticmethod
    def _layout(
        lv: Any,
        conn: Any,
        host: Host,
        hyp: Host,
        spec: VmSpec,
        domain_type: str,
        ht: Ht,
        cpus: tuple[int, ...],
    ) -> PinLayout:
        """Where the guest's vCPUs and emulator threads go on the hypervisor's CPUs."""
        _n, cpumap, _online = conn.getCPUMap(0)
        try:
            max_vcpus = int(conn.getMaxVcpus(domain_type))
        except lv.libvirtError:
            max_vcpus = None
        try:
            return pin_layout(
                cpus,
                ht,
                cpus_of_map(cpumap),
                max_vcpus=max_vcpus,
                emulator_cpus=spec.emulator_cpus,
                hypervisor=hyp.name,
            )
        except SizingError as exc:
            raise HostError(host.name, str(exc)) from None

    def _stop_earlier(self, lv: Any, conn: Any, host: Host, spec: VmSpec, where: str) -> str | None:
        """The UUID of sizing's earlier definition of the domain (stopped), None when there
        is none; a domain sizing did not define is refused."""
        dom = lookup(lv, conn, spec.domain)
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
        lv = libvirt_module()
        conn = self.connect(hyp, hspec)
        try:
            dom = lookup(lv, conn, spec.domain)
            if dom is not None:
                stop(lv, dom, spec.shutdown_timeout_s)
        except lv.libvirtError as exc:
            raise HostError(host.name, f"could not stop domain {spec.domain}: {why(exc)}") from None

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
            lv = libvirt_module()
            conn = self.connect(hyp, hspec)
            info = conn.getInfo()  # [model, MiB, cpus, MHz, nodes, sockets, cores, threads]
            topo = host_smt(conn.getCapabilities())
            threads = topo.get("threads", int(info[7]))
            dom = lookup(lv, conn, spec.domain)
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
            out["error"] = why(exc)
        kind = "emulated (qemu/TCG)" if out["emulated"] else str(domain_type)
        if out["error"]:
            out["summary"] = f"domain {spec.domain} on {hyp.name} ({hspec.uri}): {out['error']}"
        else:
            out["summary"] = (
                f"libvirt domain {spec.domain} ({out['state']}, {kind}) on {hyp.name} "
                f"({hspec.uri}): {out['host_cpus']} host CPUs, HT {out['ht']}"
            )
        return out
