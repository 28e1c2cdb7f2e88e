"""vSphere/ESXi, the pure parts: the inventory settings (``sizing_hypervisor``,
``sizing_vm``) and credentials, the ESXi topology and HT state, the VM config spec and its
read-back. The backend that acts on them is :mod:`sizing.provision.platforms.vsphere`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sizing.errors import InputError, SizingError
from sizing.inventory import Host
from sizing.model import Ht
from sizing.provision.platforms.base import (
    INVENTORY_PLACEHOLDER,
)
from sizing.provision.platforms.urls import redact_url, url_secret
from sizing.topology import Cpu, Topology

__all__ = [
    "HtState",
    "HypervisorSettings",
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
        # Credentials first, and never the value itself in a message: an URL such as
        # http://admin:PASS@vc/sdk must not be echoed by the scheme check below.
        secret = url_secret(value)
        if secret is not None or "@" in value.split("://", 1)[-1].split("/", 1)[0]:
            raise ValueError(
                f"must not carry credentials ({secret or 'a user name'}); use "
                "user_env/password_env or credentials_file"
            )
        shown = repr(redact_url(value))
        try:
            parts = urlsplit(value)
            _ = parts.port
        except ValueError:
            raise ValueError(f"{shown} is not a valid URL (e.g. https://vc1.lab/sdk)") from None
        if parts.scheme != "https":
            raise ValueError(f"{shown} must start with https:// (e.g. https://vc1.lab/sdk)")
        if not parts.hostname:
            raise ValueError(f"{shown} names no host (e.g. https://vc1.lab/sdk)")
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


def _vim() -> Any:
    """pyVmomi's ``vim`` namespace, imported only when a vSphere call is made."""
    from pyVmomi import vim

    return vim
