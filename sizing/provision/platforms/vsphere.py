"""VMware vSphere (vCenter or a standalone ESXi) through pyVmomi.

The server under test is a guest VM. For each point ``prepare``:

1. powers the VM off;
2. sets ``numCPUs`` (one vCPU per logical host CPU the planner chose) and cores per socket;
3. pins the vCPUs to those host CPUs with ``cpuAffinity`` (distinct physical cores with HT
   off, sibling pairs with HT on: the planner's choice from the ESXi host's topology, the
   same :func:`sizing.topology.allocate` as on bare metal);
4. sets latency sensitivity (``high`` by default) with a full CPU reservation
   (vCPUs x host MHz) and memory reserved to the VM's size, as VMware requires for it;
5. powers the VM on;
6. waits (bounded) for SSH to answer on the address Ansible uses, reading the guest IP that
   VMware Tools report;
7. reads every setting back, checks it against what was asked, and returns it as the
   point's metadata. The runner then runs ``playbooks/nginx.yml`` on the guest.

The guest is planned on the ESXi host's CPUs (``hardware.cpuPkg`` and ``cpuInfo``), not on
the vCPUs it sees: see :meth:`VSphere.host_topology`. Host hyper-threading is read from
``config.hyperThread``; switching it goes through ``configManager.cpuScheduler`` and needs a
host reboot, so it happens only with ``--allow-host-reboot`` (and only when the run
measures ``ht=on`` on a host where HT is available but off). Otherwise those points are
skipped with the host's current state as the reason. ``ht=off`` points never toggle HT:
as on bare metal, they use one thread of distinct physical cores and leave siblings idle.

Inventory variables (a host with ``sizing_platform: vsphere``; usually the hypervisor part
sits in group vars shared by its VMs)::

    sizing_hypervisor:
      kind: vsphere
      url: https://vc1.lab/sdk          # vCenter or ESXi SDK endpoint, https only
      user_env: VSPHERE_USER             # credentials from the environment ...
      password_env: VSPHERE_PASSWORD
      # credentials_file: secrets/vc1.vault.yml   # ... or an ansible-vault encrypted file
      ca_file: /etc/ssl/vc1-ca.pem       # optional CA bundle; default: the system store
      verify_tls: true                   # false: no verification, with a warning
    sizing_vm:
      name: nginx-vm1                    # the VM's name in vSphere (default: the host name)
      esxi_host: esx1.lab                # the ESXi host it lives on (checked)
      latency_sensitivity: high

Credentials are never read from the inventory itself. ``user_env``/``password_env`` name
environment variables. ``credentials_file`` is a YAML file with ``user:`` and
``password:`` encrypted as a whole with ``ansible-vault encrypt``; sizing decrypts it with
Ansible's own ``VaultLib`` and the password file named by ``ANSIBLE_VAULT_PASSWORD_FILE``
(the variable ``ansible-playbook`` honours too). Inline ``!vault`` values inside the
inventory are not supported: sizing reads inventories with its own strict YAML reader,
which does not decrypt. Neither the user nor the password is ever stored with results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sizing.errors import HostError, InputError, SizingError
from sizing.inventory import Host
from sizing.model import Ht
from sizing.provision.platforms.base import (
    Backend,
    BackendOptions,
    Target,
)
from sizing.provision.platforms.vsphere_session import (
    ansible_address,
    open_session,
    power,
    wait_for_guest,
    wait_task,
)
from sizing.provision.platforms.vsphere_settings import (
    POLL_S,
    HtState,
    HypervisorSettings,
    VmSettings,
    build_config_spec,
    compare_readback,
    esxi_topology,
    fault_text,
    ht_skip_reason,
    load_settings,
    read_credentials,
    readback,
    spec_values,
)
from sizing.records import EsxiSettings, HostHtRecord, VmConfigRecord
from sizing.topology import Topology

__all__ = ["VSphere"]
# -- the backend -------------------------------------------------------------------------


@dataclass
class _Original:
    """A VM's settings before sizing first changed them, restored by ``teardown``."""

    values: dict[str, Any]
    powered_on: bool


class VSphere(Backend):
    """The vSphere backend: one session per endpoint, kept for the run."""

    def __init__(self, options: BackendOptions | None = None) -> None:
        self.options = options or BackendOptions()
        self._sessions: dict[tuple[str, str], Any] = {}
        self._originals: dict[str, _Original] = {}
        self._warned: set[str] = set()

    # -- connection ----------------------------------------------------------------------

    def connect(self, settings: HypervisorSettings) -> Any:
        """A logged-in ServiceInstance for ``settings`` (cached), or a one-line error."""
        user, password = read_credentials(settings)
        key = (settings.url, user)
        if key in self._sessions:
            return self._sessions[key]
        si = open_session(
            settings,
            user,
            password,
            insecure=self.options.insecure,
            notify=self.options.notify,
            warned=self._warned,
        )
        self._sessions[key] = si
        return si

    def _vm(self, host: Host) -> tuple[HypervisorSettings, VmSettings, Any, Any]:
        """Settings, the VM and the ESXi host (HostSystem) it runs on."""
        from pyVmomi import vim, vmodl  # optional (the vSphere extra): only when used

        hyp, vms = load_settings(host)
        si = self.connect(hyp)
        name = vms.name or host.name
        try:
            content = si.RetrieveContent()
            view = content.viewManager.CreateContainerView(
                content.rootFolder, [vim.VirtualMachine], True
            )
            try:
                found = [vm for vm in view.view if vm.name == name]
            finally:
                view.Destroy()
            if not found:
                raise HostError(host.name, f"no VM named {name!r} on {hyp.url}")
            if len(found) > 1:
                raise HostError(
                    host.name, f"{len(found)} VMs are named {name!r} on {hyp.url}; rename them"
                )
            vm = found[0]
            esxi = vm.runtime.host
            if esxi is None:
                raise HostError(host.name, f"VM {name!r} is on no ESXi host (disconnected?)")
            if vms.esxi_host and esxi.name != vms.esxi_host:
                raise HostError(
                    host.name,
                    f"VM {name!r} runs on ESXi host {esxi.name}, the inventory says"
                    f" {vms.esxi_host} (moved by vMotion or DRS?)",
                )
        except vmodl.MethodFault as exc:
            raise HostError(host.name, f"{hyp.url}: {fault_text(exc)}") from None
        return hyp, vms, vm, esxi

    # -- host facts ----------------------------------------------------------------------

    @staticmethod
    def _ht_state(esxi: Any) -> HtState:
        info = getattr(getattr(esxi, "config", None), "hyperThread", None)
        if info is None:
            return HtState(False, False, False)
        return HtState(bool(info.available), bool(info.active), bool(info.config))

    @staticmethod
    def _topology(esxi: Any) -> Topology:
        hw = esxi.hardware
        packages = [(int(p.index), list(p.threadId or [])) for p in (hw.cpuPkg or [])]
        return esxi_topology(packages, int(hw.cpuInfo.numCpuCores), int(hw.cpuInfo.numCpuThreads))

    def host_topology(self, host: Host) -> Topology | None:
        """The ESXi host's CPUs, which the guest's points are planned on.

        When the run measures ``ht=on``, HT is available but off, and
        ``--allow-host-reboot`` was given, HT is switched on here (rebooting the host)
        before the topology is read.
        """
        hyp, _vms, vm, esxi = self._vm(host)
        state = self._ht_state(esxi)
        if (
            Ht.ON in self.options.hts
            and state.available
            and not state.active
            and self.options.allow_host_reboot
        ):
            self.options.notify(f"ESXi host {esxi.name}: switching hyper-threading on (reboots)")
            self.set_hyperthreading(esxi, True)
            self._reboot(esxi, vm, hyp)
        return self._topology(esxi)

    def skip_reason(self, host: Host, cores: int, ht: Ht) -> str:
        """Skip ``ht=on`` points on an ESXi host whose HT is not on (with its state)."""
        if ht is not Ht.ON:
            return ""
        try:
            _hyp, _vms, _vm, esxi = self._vm(host)
        except SizingError as exc:
            return str(exc)
        return ht_skip_reason(self._ht_state(esxi), esxi.name, ht, self.options.allow_host_reboot)

    def set_hyperthreading(self, esxi: Any, enabled: bool) -> None:
        """Ask the host's CPU scheduler to switch HT at the next reboot (one-line errors)."""
        from pyVmomi import vmodl  # optional (the vSphere extra): only when used

        verb = "on" if enabled else "off"
        try:
            sched = esxi.configManager.cpuScheduler
            if sched is None:
                raise HostError(
                    f"ESXi host {esxi.name}",
                    f"switching hyper-threading {verb} failed: the host has no CPU scheduler",
                )
            if enabled:
                sched.EnableHyperThreading()
            else:
                sched.DisableHyperThreading()
        except vmodl.MethodFault as exc:
            raise HostError(
                f"ESXi host {esxi.name}",
                f"switching hyper-threading {verb} failed: {fault_text(exc)}",
            ) from None

    def _reboot(self, esxi: Any, vm: Any, hyp: HypervisorSettings) -> None:
        """Power the guest off, reboot the host, wait (bounded) until it is back."""
        from pyVmomi import vmodl  # optional (the vSphere extra): only when used

        name = esxi.name
        power(vm, on=False, timeout_s=300.0, what=f"VM {vm.name}")
        before = esxi.runtime.bootTime
        try:
            wait_task(esxi.RebootHost_Task(force=False), 300.0, f"ESXi host {name}")
        except vmodl.MethodFault as exc:
            raise HostError(f"ESXi host {name}", f"reboot refused: {fault_text(exc)}") from None
        deadline = time.monotonic() + hyp.reboot_timeout_s
        while time.monotonic() < deadline:
            time.sleep(5 * POLL_S)
            try:
                back = (
                    esxi.runtime.connectionState == "connected" and esxi.runtime.bootTime != before
                )
            except Exception:  # the session to a standalone ESXi dies with it: reconnect
                self._sessions.clear()
                continue
            if back:
                return
        raise HostError(
            f"ESXi host {name}", f"not back {hyp.reboot_timeout_s:.0f} s after its reboot"
        )

    # -- the Backend interface -----------------------------------------------------------

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """Steps 1-7 of the module docstring; returns the guest and the read-back."""
        from pyVmomi import vmodl  # optional (the vSphere extra): only when used

        hyp, vms, vm, esxi = self._vm(host)
        where = host.name
        try:
            topo = self._topology(esxi)
            threads = {c.id for c in topo.cpus}
            if len(cpus) > len(threads):
                raise HostError(
                    where,
                    f"{len(cpus)} vCPUs asked, but ESXi host {esxi.name} has only"
                    f" {len(threads)} logical CPUs",
                )
            unknown = sorted(set(cpus) - threads)
            if unknown:
                raise HostError(
                    where, f"ESXi host {esxi.name} has no logical CPU {unknown[0]} to pin to"
                )
            state = self._ht_state(esxi)
            reason = ht_skip_reason(state, esxi.name, ht, allow_host_reboot=False)
            if reason:
                raise HostError(where, reason)
            mhz = int(esxi.hardware.cpuInfo.hz // 1_000_000) or int(esxi.summary.hardware.cpuMhz)
            memory_mb = int(vm.config.hardware.memoryMB)
            values = spec_values(
                cpus,
                host_mhz=mhz,
                memory_mb=memory_mb,
                cores_per_socket=vms.cores_per_socket,
                latency_sensitivity=vms.latency_sensitivity,
                reserve=vms.reserve,
            )
            if vm._moId not in self._originals:
                self._originals[vm._moId] = _Original(
                    readback(vm.config), vm.runtime.powerState == "poweredOn"
                )
            what = f"VM {vm.name}"
            power(vm, on=False, timeout_s=vms.task_timeout_s, what=what)
            wait_task(
                vm.ReconfigVM_Task(spec=build_config_spec(values)),
                vms.task_timeout_s,
                f"{what}: reconfiguring to {len(cpus)} vCPUs",
            )
            power(vm, on=True, timeout_s=vms.task_timeout_s, what=what)
            guest_ip = wait_for_guest(host, vm, vms.boot_timeout_s)
            got = readback(vm.config)
        except vmodl.MethodFault as exc:
            raise HostError(where, f"{hyp.url}: {fault_text(exc)}") from None
        except SizingError as exc:
            if isinstance(exc, HostError):
                raise
            raise HostError(where, str(exc)) from None
        wrong = compare_readback(values, got)
        if wrong:
            raise HostError(where, "vSphere did not apply " + "; ".join(wrong))
        address = host.sizing.address or guest_ip or ansible_address(host)
        settings = EsxiSettings(
            hypervisor="vsphere",
            endpoint=hyp.url,
            tls_verified=hyp.verify_tls and not self.options.insecure,
            vm=vm.name,
            esxi_host=esxi.name,
            esxi_version=getattr(getattr(esxi.config, "product", None), "fullName", None),
            esxi_cpu=topo.describe(),
            esxi_cpu_mhz=mhz,
            host_ht=HostHtRecord(
                available=state.available, active=state.active, config=state.config
            ),
            host_cpus=tuple(sorted(cpus)),
            asked=VmConfigRecord.parse(values),
            readback=VmConfigRecord.parse(got),
            power_state=str(vm.runtime.powerState),
            guest_ip=guest_ip,
            tools_status=str(getattr(vm.guest, "toolsRunningStatus", "") or "") or None,
        )
        return Target(
            host=host.name, address=address, workers=tuple(range(len(cpus))), settings=settings
        )

    def teardown(self, host: Host) -> None:
        """Give the VM back its settings from before the run (and its power state)."""
        from pyVmomi import vmodl  # optional (the vSphere extra): only when used

        hyp, vms, vm, _esxi = self._vm(host)
        original = self._originals.pop(vm._moId, None)
        if original is None:
            return
        o = original.values
        values = {
            "numCPUs": o["numCPUs"],
            "numCoresPerSocket": o["numCoresPerSocket"] or o["numCPUs"],
            "cpuAffinity": o["cpuAffinity"],
            "latencySensitivity": o["latencySensitivity"] or "normal",
            "cpuReservationMhz": o["cpuReservationMhz"] or 0,
            "memoryReservationLockedToMax": o["memoryReservationLockedToMax"],
            "memoryReservationMb": o["memoryReservationMb"] or 0,
        }
        what = f"VM {vm.name}"
        try:
            power(vm, on=False, timeout_s=vms.task_timeout_s, what=what)
            wait_task(
                vm.ReconfigVM_Task(spec=build_config_spec(values)),
                vms.task_timeout_s,
                f"{what}: restoring its settings",
            )
            if original.powered_on:
                power(vm, on=True, timeout_s=vms.task_timeout_s, what=what)
        except vmodl.MethodFault as exc:
            raise HostError(host.name, f"{hyp.url}: {fault_text(exc)}") from None

    def describe(self, host: Host) -> dict[str, Any]:
        """Endpoint, credential source, VM, its ESXi host, and that host's HT and CPUs.

        Bad settings raise InputError; an endpoint that cannot be asked is reported in
        ``error`` (``summary`` says it in one line).
        """
        hyp, vms = load_settings(host)
        out: dict[str, Any] = {
            "platform": "vsphere",
            "endpoint": hyp.url,
            "credentials": hyp.credentials_source,
            "verify_tls": hyp.verify_tls and not self.options.insecure,
            "vm": vms.name or host.name,
            "esxi_host": vms.esxi_host,
            "ansible": f"{ansible_address(host)}:{host.variables.get('ansible_port', 22)}",
        }
        if not self.options.connect:
            out["summary"] = (
                f"VM {out['vm']} via {hyp.url} ({hyp.credentials_source}): not contacted"
                " (--connect asks it)"
            )
            return out
        try:
            _hyp, _vms, vm, esxi = self._vm(host)
            state = self._ht_state(esxi)
            out.update(
                esxi_host=esxi.name,
                power_state=str(vm.runtime.powerState),
                vcpus=int(vm.config.hardware.numCPU),
                host_cpu=self._topology(esxi).describe(),
                ht=state.as_dict(),
            )
            out["summary"] = (
                f"VM {out['vm']} on ESXi {esxi.name} via {hyp.url} ({hyp.credentials_source});"
                f" {out['vcpus']} vCPUs, {out['power_state']}; host {out['host_cpu']},"
                f" hyper-threading {state.describe()}"
            )
        except SizingError as exc:
            if isinstance(exc, InputError):
                raise
            out["error"] = str(exc)
            out["summary"] = f"VM {out['vm']} via {hyp.url}: {exc}"
        return out
