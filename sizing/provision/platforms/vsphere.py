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

import atexit
import os
import socket
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sizing.errors import HostError, InputError, SizingError
from sizing.inventory import Host
from sizing.model import Ht
from sizing.provision.platforms.base import (
    INVENTORY_PLACEHOLDER,
    Backend,
    BackendOptions,
    Target,
)
from sizing.topology import Cpu, Topology

__all__ = [
    "HtState",
    "HypervisorSettings",
    "VSphere",
    "VmSettings",
    "build_config_spec",
    "compare_readback",
    "esxi_topology",
    "fault_text",
    "ht_skip_reason",
    "load_settings",
    "read_credentials",
    "readback",
    "spec_values",
]

VAULT_PASSWORD_ENV = "ANSIBLE_VAULT_PASSWORD_FILE"
POLL_S = 0.5  # how often a bounded wait asks vSphere again
_SECRET_KEYS = ("user", "username", "password", "pwd", "pass", "secret")


# -- settings ---------------------------------------------------------------------------


class HypervisorSettings(BaseModel):
    """``sizing_hypervisor`` of a vSphere guest: the endpoint and where credentials are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["vsphere"] = "vsphere"
    url: str = Field(description="https://HOST[:PORT]/sdk of vCenter or ESXi")
    user_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    password_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    credentials_file: str | None = None
    ca_file: str | None = None
    verify_tls: bool = True
    timeout_s: float = Field(default=20.0, gt=0, le=600)
    reboot_timeout_s: float = Field(default=1200.0, gt=0, le=7200)

    @model_validator(mode="before")
    @classmethod
    def _no_plain_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in data:
                if str(key).lower() in _SECRET_KEYS:
                    raise ValueError(
                        f"{key}: never write credentials into an inventory; name environment"
                        " variables with user_env/password_env, or use credentials_file"
                        " (an ansible-vault encrypted file)"
                    )
        return data

    @field_validator("url")
    @classmethod
    def _https_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme != "https":
            raise ValueError(f"{value!r} must start with https:// (e.g. https://vc1.lab/sdk)")
        if not parts.hostname:
            raise ValueError(f"{value!r} names no host (e.g. https://vc1.lab/sdk)")
        if parts.username or parts.password:
            raise ValueError("must not carry credentials; use user_env/password_env")
        try:
            _ = parts.port
        except ValueError:
            raise ValueError(f"{value!r} has a bad port") from None
        return value

    @model_validator(mode="after")
    def _one_credential_source(self) -> HypervisorSettings:
        env = self.user_env is not None or self.password_env is not None
        if self.credentials_file is not None and env:
            raise ValueError("give either user_env/password_env or credentials_file, not both")
        if self.credentials_file is None and (self.user_env is None or self.password_env is None):
            raise ValueError(
                "credentials: set user_env and password_env (names of environment"
                " variables), or credentials_file (ansible-vault encrypted)"
            )
        return self

    @property
    def host(self) -> str:
        return str(urlsplit(self.url).hostname)

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 443

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/sdk"

    @property
    def credentials_source(self) -> str:
        """Where the credentials come from, for people (never the values)."""
        if self.credentials_file:
            return f"ansible-vault file {self.credentials_file}"
        return f"${self.user_env} / ${self.password_env}"


class VmSettings(BaseModel):
    """``sizing_vm`` of a vSphere guest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1, description="VM name in vSphere")
    esxi_host: str | None = Field(default=None, description="ESXi host the VM lives on")
    cores_per_socket: int | None = Field(default=None, ge=1, le=768)
    latency_sensitivity: Literal["high", "normal", "low", "medium"] = "high"
    reserve: bool = Field(
        default=True, description="Full CPU and memory reservation (forced with high)"
    )
    boot_timeout_s: float = Field(default=300.0, gt=0, le=3600)
    task_timeout_s: float = Field(default=300.0, gt=0, le=3600)


def load_settings(
    host: Host, path: str = INVENTORY_PLACEHOLDER
) -> tuple[HypervisorSettings, VmSettings]:
    """Validate a host's ``sizing_hypervisor`` and ``sizing_vm``, or raise InputError.

    Every problem is one ``host X: sizing_hypervisor.url: ...`` line.
    """
    problems: list[str] = []
    hyp: HypervisorSettings | None = None
    vm: VmSettings | None = None
    if host.sizing.hypervisor is None:
        problems.append(
            f"host {host.name}: sizing_hypervisor: missing; a vsphere guest needs"
            " {kind: vsphere, url: https://.../sdk, user_env: ..., password_env: ...}"
        )
    else:
        try:
            hyp = HypervisorSettings.model_validate(host.sizing.hypervisor)
        except ValidationError as exc:
            problems += _problems(host.name, "sizing_hypervisor", exc)
    try:
        vm = VmSettings.model_validate(host.sizing.vm or {})
    except ValidationError as exc:
        problems += _problems(host.name, "sizing_vm", exc)
    if problems or hyp is None or vm is None:
        raise InputError(path, problems)
    return hyp, vm


def _problems(host: str, var: str, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        where = f"{var}.{loc}" if loc else var
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting"
        out.append(f"host {host}: {where}: {msg}")
    return out


def read_credentials(
    settings: HypervisorSettings, environ: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The user and password, from the environment or an ansible-vault file."""
    env = os.environ if environ is None else environ
    where = settings.url
    if settings.credentials_file is None:
        assert settings.user_env is not None and settings.password_env is not None
        missing = [v for v in (settings.user_env, settings.password_env) if not env.get(v)]
        if missing:
            raise SizingError(
                f"{where}: credentials: environment variable {' and '.join(missing)}"
                f" {'is' if len(missing) == 1 else 'are'} not set"
            )
        return env[settings.user_env], env[settings.password_env]
    return _vault_credentials(settings.credentials_file, env)


def _vault_credentials(file: str, env: Mapping[str, str]) -> tuple[str, str]:
    from ansible.errors import AnsibleError
    from ansible.parsing.vault import VaultLib, VaultSecret, is_encrypted

    try:
        blob = Path(file).read_bytes()
    except OSError as exc:
        raise InputError(file, [f"cannot read credentials: {exc.strerror or exc}"]) from None
    if not is_encrypted(blob):
        raise InputError(
            file, ["credentials file is not encrypted; run: ansible-vault encrypt " + file]
        )
    pw_file = env.get(VAULT_PASSWORD_ENV)
    if not pw_file:
        raise SizingError(
            f"{file}: is ansible-vault encrypted; set {VAULT_PASSWORD_ENV} to the vault"
            " password file"
        )
    try:
        secret = Path(pw_file).read_bytes().strip()
    except OSError as exc:
        raise SizingError(
            f"{VAULT_PASSWORD_ENV}={pw_file}: cannot read: {exc.strerror or exc}"
        ) from None
    try:
        plain = VaultLib([("default", VaultSecret(secret))]).decrypt(blob)
    except AnsibleError:
        raise SizingError(f"{file}: the vault password does not decrypt it") from None
    import yaml

    try:
        data = yaml.safe_load(plain)
    except yaml.YAMLError:
        raise InputError(file, ["decrypted, but it is not YAML"]) from None
    if not isinstance(data, dict) or not data.get("user") or not data.get("password"):
        raise InputError(file, ["decrypted, but it has no 'user:' and 'password:'"])
    return str(data["user"]), str(data["password"])


# -- pure parts: topology, HT, config spec, read-back ------------------------------------


def esxi_topology(
    packages: Sequence[tuple[int, Sequence[int]]], num_cores: int, num_threads: int
) -> Topology:
    """The ESXi host's logical CPUs (PCPUs) as a :class:`Topology`.

    ``packages`` are ``(index, threadIds)`` from ``hardware.cpuPkg``; ``num_cores`` and
    ``num_threads`` from ``hardware.cpuInfo``. ESXi numbers the hyper-threads of a core
    consecutively (PCPU 0 and 1 are core 0's), so within a package each run of
    ``threads_per_core`` ids is one physical core.
    """
    if num_cores < 1 or num_threads < num_cores:
        raise SizingError(
            f"ESXi reports {num_cores} cores and {num_threads} threads: not a CPU topology"
        )
    tpc = max(1, num_threads // num_cores)
    cpus: list[Cpu] = []
    for index, thread_ids in packages:
        for i, tid in enumerate(sorted(int(t) for t in thread_ids)):
            cpus.append(Cpu(id=tid, core=i // tpc, socket=int(index), node=int(index)))
    if not cpus:  # no cpuPkg: spread the threads evenly over one package
        cpus = [Cpu(id=t, core=t // tpc, socket=0) for t in range(num_threads)]
    return Topology(tuple(cpus))


@dataclass(frozen=True)
class HtState:
    """``config.hyperThread`` of an ESXi host."""

    available: bool
    active: bool
    config: bool  # the state after the next reboot

    def describe(self) -> str:
        if not self.available:
            return "not available"
        now = "on" if self.active else "off"
        if self.config != self.active:
            return f"{now} (turns {'on' if self.config else 'off'} at the next reboot)"
        return now

    def as_dict(self) -> dict[str, bool]:
        return {"available": self.available, "active": self.active, "config": self.config}


def ht_skip_reason(state: HtState, esxi: str, ht: Ht, allow_host_reboot: bool) -> str:
    """Why a point with HT mode ``ht`` cannot run on ESXi host ``esxi`` ("" if it can)."""
    if ht is not Ht.ON or state.active:
        return ""
    if not state.available:
        return f"ESXi host {esxi} has no hyper-threading (config.hyperThread.available is false)"
    if allow_host_reboot:
        return ""
    return (
        f"hyper-threading is off on ESXi host {esxi}; switching it on reboots the host:"
        " rerun with --allow-host-reboot"
    )


def spec_values(
    cpus: Sequence[int],
    *,
    host_mhz: int,
    memory_mb: int,
    cores_per_socket: int | None = None,
    latency_sensitivity: str = "high",
    reserve: bool = True,
) -> dict[str, Any]:
    """The VM settings of a point as plain values (what ``build_config_spec`` sends).

    One vCPU per host logical CPU in ``cpus``, pinned to exactly those CPUs. High latency
    sensitivity needs the full reservation: vCPUs x ``host_mhz`` and all memory.
    """
    n = len(cpus)
    if n < 1:
        raise SizingError("a VM needs at least one vCPU")
    cps = cores_per_socket or n
    if n % cps:
        raise SizingError(
            f"sizing_vm.cores_per_socket={cps} does not divide {n} vCPUs; use a divisor of"
            " every core count measured, or leave it unset (one socket)"
        )
    full = reserve or latency_sensitivity == "high"
    return {
        "numCPUs": n,
        "numCoresPerSocket": cps,
        "cpuAffinity": sorted(int(c) for c in cpus),
        "latencySensitivity": latency_sensitivity,
        "cpuReservationMhz": n * host_mhz if full else 0,
        "memoryReservationLockedToMax": full,
        "memoryReservationMb": memory_mb if full else 0,
    }


def build_config_spec(values: Mapping[str, Any]) -> Any:
    """A ``vim.vm.ConfigSpec`` for ``ReconfigVM_Task`` from :func:`spec_values`."""
    vim = _vim()
    spec = vim.vm.ConfigSpec()
    spec.numCPUs = values["numCPUs"]
    spec.numCoresPerSocket = values["numCoresPerSocket"]
    spec.cpuAffinity = vim.vm.AffinityInfo(affinitySet=list(values["cpuAffinity"]))
    spec.latencySensitivity = vim.LatencySensitivity(level=values["latencySensitivity"])
    spec.cpuAllocation = vim.ResourceAllocationInfo(reservation=values["cpuReservationMhz"])
    spec.memoryReservationLockedToMax = values["memoryReservationLockedToMax"]
    if not values["memoryReservationLockedToMax"]:
        spec.memoryAllocation = vim.ResourceAllocationInfo(
            reservation=values["memoryReservationMb"]
        )
    return spec


def readback(config: Any) -> dict[str, Any]:
    """The point's settings as vSphere reports them (``vm.config``), as plain values."""
    hw = getattr(config, "hardware", None)
    affinity = getattr(config, "cpuAffinity", None)
    latency = getattr(config, "latencySensitivity", None)
    cpu_alloc = getattr(config, "cpuAllocation", None)
    mem_alloc = getattr(config, "memoryAllocation", None)
    return {
        "numCPUs": getattr(hw, "numCPU", None),
        "numCoresPerSocket": getattr(hw, "numCoresPerSocket", None),
        "memoryMb": getattr(hw, "memoryMB", None),
        "cpuAffinity": sorted(int(c) for c in (getattr(affinity, "affinitySet", None) or [])),
        "latencySensitivity": getattr(latency, "level", None),
        "cpuReservationMhz": getattr(cpu_alloc, "reservation", None),
        "memoryReservationLockedToMax": bool(getattr(config, "memoryReservationLockedToMax", 0)),
        "memoryReservationMb": getattr(mem_alloc, "reservation", None),
    }


def compare_readback(asked: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    """One ``setting: asked X, reads back Y`` line per setting vSphere did not apply."""
    out = []
    for key, want in asked.items():
        if key == "memoryReservationMb" and asked.get("memoryReservationLockedToMax"):
            continue  # locked to max: ESXi fills it in with the VM's memory size
        if got.get(key) != want:
            out.append(f"{key}: asked {want}, reads back {got.get(key)}")
    return out


def fault_text(exc: BaseException) -> str:
    """One line out of a vSphere fault (or any exception)."""
    msg = getattr(exc, "msg", None) or getattr(exc, "localizedMessage", None)
    name = type(exc).__name__.rsplit(".", 1)[-1]  # pyVmomi: "vim.fault.InvalidLogin"
    if getattr(exc, "faultMessage", None):
        extra = "; ".join(
            str(getattr(m, "message", "") or "")
            for m in exc.faultMessage  # type: ignore[attr-defined]
        ).strip("; ")
        msg = f"{msg}: {extra}" if msg and extra else (msg or extra)
    prop = getattr(exc, "invalidProperty", None)
    if prop:
        msg = f"{msg or 'invalid argument'} ({prop})"
    text = str(msg or exc or name)
    text = " ".join(text.split())
    return text if name in text or not msg else f"{text} ({name})"


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
        from pyVim import connect as pyvim_connect
        from pyVmomi import vim, vmodl

        smart_connect: Callable[..., Any] = pyvim_connect.SmartConnect

        verify = settings.verify_tls and not self.options.insecure
        if verify:
            try:
                ctx = ssl.create_default_context(cafile=settings.ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise SizingError(
                    f"{settings.url}: sizing_hypervisor.ca_file {settings.ca_file}: cannot"
                    f" load it: {getattr(exc, 'strerror', None) or exc}"
                ) from None
        else:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            if settings.url not in self._warned:
                self._warned.add(settings.url)
                why = "--insecure" if self.options.insecure else "sizing_hypervisor.verify_tls"
                self.options.notify(
                    f"{settings.url}: TLS certificate verification is off ({why}); anyone on"
                    " the path can read the vSphere credentials"
                )
        try:
            si = smart_connect(
                host=settings.host,
                port=settings.port,
                path=settings.path,
                user=user,
                pwd=password,
                sslContext=ctx,
                httpConnectionTimeout=settings.timeout_s,
                connectionPoolTimeout=-1,
            )
        except vim.fault.InvalidLogin:
            raise HostError(
                settings.url,
                f"login failed: vSphere refused the user and password from"
                f" {settings.credentials_source}",
            ) from None
        except ssl.SSLCertVerificationError as exc:
            raise HostError(
                settings.url,
                f"TLS certificate does not verify ({exc.verify_message or exc.reason});"
                " give its CA with sizing_hypervisor.ca_file, or use --insecure",
            ) from None
        except ssl.SSLError as exc:
            raise HostError(settings.url, f"TLS failed: {exc.reason or exc}") from None
        except vmodl.MethodFault as exc:
            raise HostError(settings.url, fault_text(exc)) from None
        except OSError as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, ssl.SSLCertVerificationError):
                raise HostError(
                    settings.url,
                    f"TLS certificate does not verify ({cause.verify_message});"
                    " give its CA with sizing_hypervisor.ca_file, or use --insecure",
                ) from None
            why = exc.strerror or str(exc) or type(exc).__name__
            raise HostError(settings.url, f"vSphere endpoint unreachable: {why}") from None
        except Exception as exc:  # pyVmomi raises http.client / parser errors as they come
            raise HostError(settings.url, f"not a vSphere endpoint? {fault_text(exc)}") from None
        atexit.register(_disconnect_quietly, pyvim_connect.Disconnect, si)
        self._sessions[key] = si
        return si

    def _vm(self, host: Host) -> tuple[HypervisorSettings, VmSettings, Any, Any]:
        """Settings, the VM and the ESXi host (HostSystem) it runs on."""
        from pyVmomi import vim, vmodl

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
        from pyVmomi import vmodl

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
        from pyVmomi import vmodl

        name = esxi.name
        self._power(vm, on=False, timeout_s=300.0, what=f"VM {vm.name}")
        before = esxi.runtime.bootTime
        try:
            self._wait_task(esxi.RebootHost_Task(force=False), 300.0, f"ESXi host {name}")
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
        from pyVmomi import vmodl

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
            self._power(vm, on=False, timeout_s=vms.task_timeout_s, what=what)
            self._wait_task(
                vm.ReconfigVM_Task(spec=build_config_spec(values)),
                vms.task_timeout_s,
                f"{what}: reconfiguring to {len(cpus)} vCPUs",
            )
            self._power(vm, on=True, timeout_s=vms.task_timeout_s, what=what)
            guest_ip = self._wait_for_guest(host, vm, vms.boot_timeout_s)
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
        address = host.sizing.address or guest_ip or _ansible_address(host)
        metadata = {
            "hypervisor": "vsphere",
            "endpoint": hyp.url,
            "tls_verified": hyp.verify_tls and not self.options.insecure,
            "vm": vm.name,
            "esxi_host": esxi.name,
            "esxi_version": getattr(getattr(esxi.config, "product", None), "fullName", None),
            "esxi_cpu": topo.describe(),
            "esxi_cpu_mhz": mhz,
            "host_ht": state.as_dict(),
            "host_cpus": sorted(cpus),
            "asked": values,
            "readback": got,
            "power_state": str(vm.runtime.powerState),
            "guest_ip": guest_ip,
            "tools_status": str(getattr(vm.guest, "toolsRunningStatus", "") or "") or None,
        }
        return Target(
            host=host.name, address=address, workers=tuple(range(len(cpus))), metadata=metadata
        )

    def teardown(self, host: Host) -> None:
        """Give the VM back its settings from before the run (and its power state)."""
        from pyVmomi import vmodl

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
            self._power(vm, on=False, timeout_s=vms.task_timeout_s, what=what)
            self._wait_task(
                vm.ReconfigVM_Task(spec=build_config_spec(values)),
                vms.task_timeout_s,
                f"{what}: restoring its settings",
            )
            if original.powered_on:
                self._power(vm, on=True, timeout_s=vms.task_timeout_s, what=what)
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
            "ansible": f"{_ansible_address(host)}:{host.variables.get('ansible_port', 22)}",
        }
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

    # -- waits (all bounded) -------------------------------------------------------------

    def _wait_task(self, task: Any, timeout_s: float, what: str) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            info = task.info
            if info.state == "success":
                return info.result
            if info.state == "error":
                raise SizingError(f"{what}: {fault_text(info.error)}")
            if time.monotonic() > deadline:
                raise SizingError(f"{what}: vSphere task not done after {timeout_s:.0f} s")
            time.sleep(POLL_S / 5 if info.state == "queued" else POLL_S)

    def _power(self, vm: Any, *, on: bool, timeout_s: float, what: str) -> None:
        want = "poweredOn" if on else "poweredOff"
        if vm.runtime.powerState == want:
            return
        task = vm.PowerOnVM_Task() if on else vm.PowerOffVM_Task()
        self._wait_task(task, timeout_s, f"{what}: powering {'on' if on else 'off'}")

    def _wait_for_guest(self, host: Host, vm: Any, timeout_s: float) -> str | None:
        """Wait until SSH answers on the address Ansible uses; the IP Tools report."""
        addr = _ansible_address(host)
        port = int(host.variables.get("ansible_port", 22))
        deadline = time.monotonic() + timeout_s
        ip: str | None = None
        while True:
            ip = str(getattr(vm.guest, "ipAddress", "") or "") or ip
            if _tcp_open(addr, port, timeout=min(2.0, max(0.1, deadline - time.monotonic()))):
                return ip
            if time.monotonic() > deadline:
                seen = f"VMware Tools report {ip}" if ip else "VMware Tools report no IP"
                raise HostError(
                    host.name,
                    f"VM {vm.name} did not come up: no SSH on {addr}:{port} within"
                    f" {timeout_s:.0f} s ({seen})",
                )
            time.sleep(POLL_S)


def _vim() -> Any:
    """pyVmomi's ``vim`` namespace, imported only when a vSphere call is made."""
    from pyVmomi import vim

    return vim


def _ansible_address(host: Host) -> str:
    return str(host.variables.get("ansible_host", host.name))


def _tcp_open(addr: str, port: int, *, timeout: float) -> bool:
    try:
        with socket.create_connection((addr, port), timeout=timeout):
            return True
    except OSError:
        return False


def _disconnect_quietly(disconnect: Callable[[Any], None], si: Any) -> None:
    try:
        disconnect(si)
    except Exception:  # the endpoint may be gone at exit; nothing to do about it
        pass
