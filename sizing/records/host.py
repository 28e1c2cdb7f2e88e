"""A host's record: what ``playbooks/files/hostfacts.py`` found on it (its JSON object,
typed), and what a run keeps beside the facts in its environment record: what the
inventory declares for pricing, which servers a sampled one stands for, and the crypto
ceilings measured on it. Stored as one JSON object per host in ``runs.environment``
(:mod:`sizing.records.codec`); every reader uses attributes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sizing.records.codec import dump_object, load, verbatim

__all__ = [
    "CeilingsRecord",
    "CryptoRecord",
    "DeclaredCpu",
    "DeclaredRecord",
    "HostRecord",
    "LockOwner",
    "LockReply",
    "hosts_of",
]


@dataclass(frozen=True)
class DeclaredCpu:
    """What the inventory declares of a host's CPUs (its ``sizing_cpu``, as
    :class:`sizing.inventory.model.CpuSpec` checked it; a field None: not declared)."""

    model: str | None = None
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int | None = None

    @property
    def physical_cores(self) -> int | None:
        """Sockets (1 when not declared) times cores per socket; None without the latter."""
        if self.cores_per_socket is None:
            return None
        return (self.sockets or 1) * self.cores_per_socket


@dataclass(frozen=True)
class CryptoRecord:
    """One ``openssl speed`` measurement as stored (:class:`sizing.ceilings.CryptoRate`);
    one lacking a field it needs is left out as it is read."""

    alg: str | None = None
    cpus: str | None = None
    threads: int | None = None
    sign_per_s: float | None = None
    verify_per_s: float | None = None


@dataclass(frozen=True)
class CeilingsRecord:
    """What a run measured of one host's crypto ceilings (:class:`sizing.ceilings.
    HostCeilings`): the ``openssl`` measured, its measurements, why none could be made."""

    openssl: str | None = None
    crypto: tuple[CryptoRecord, ...] = ()
    missing: str | None = None
    took_s: float | None = None


@dataclass(frozen=True)
class DeclaredRecord:
    """What the inventory declares of a host for pricing and hardware; ``_from`` names
    where an older run's entry was read from (its inventory file), when not the run."""

    sizing_price_usd: float | None = None
    sizing_cpu: DeclaredCpu | None = None
    sizing_cost_ref: str | None = None
    _from: str | None = None

    @classmethod
    def parse(cls, data: object) -> DeclaredRecord:
        """What an inventory declares of a host (its ``sizing_*`` variables), leniently."""
        return load(cls, data) if isinstance(data, Mapping) else cls()

    @property
    def source(self) -> str | None:
        return self._from

    @property
    def empty(self) -> bool:
        return (
            self.sizing_price_usd is None and self.sizing_cpu is None and not self.sizing_cost_ref
        )


@dataclass(frozen=True)
class HostRecord:
    """One host: its facts (see the module), then what the run adds."""

    facts: str | None = None  # "declared" or "local" when not probed (the dry run)
    hostname: str | None = None
    machine_id: str | None = None  # two inventory names, one machine: the same id
    net_ns: str | None = None
    kernel: str | None = None
    os: str | None = None
    arch: str | None = None
    cpu_model: str | None = None
    microcode: str | None = None
    governor: str | None = None
    smt_control: str | None = None
    lscpu: str | None = None  # ``lscpu -p`` of the online CPUs
    online: str | None = None
    hypervisor: str | None = None  # a guest's hypervisor vendor; None on bare metal
    nginx_version: str | None = None
    nginx_openssl: str | None = None  # the OpenSSL nginx was built with
    openssl_version: str | None = None
    nofile_soft: int | None = None
    nofile_hard: int | None = None
    cap_sys_resource: bool | None = None  # may raise the hard open-files limit
    euid: int | None = None
    nic_speeds_mbps: dict[str, int | None] | None = None
    somaxconn: int | None = None
    ip_local_port_range: str | None = None
    mem_total_kb: int | None = None
    time: float | None = None  # the host's clock when it read its facts (epoch s)
    # what the run keeps beside the facts
    declared: DeclaredRecord | None = None
    stands_for: tuple[str, ...] | None = None
    ceilings: CeilingsRecord | None = None  # :class:`sizing.ceilings.HostCeilings`
    # what a host script of another version reported beyond these facts, kept as reported
    verbatim_facts: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: object) -> HostRecord:
        """A host's stored or reported JSON object, leniently (:func:`load`); anything
        else reads as a host of which nothing is known."""
        return load(cls, data) if isinstance(data, Mapping) else cls()

    @property
    def nginx_build_openssl(self) -> str | None:
        """The OpenSSL nginx runs with: the one it was built with, else the system's."""
        return self.nginx_openssl or self.openssl_version


@dataclass(frozen=True)
class LockOwner:
    """Who measures a run: the controller (its machine-id) and the process (pid and its
    start time, so that a reused pid is not taken for it). The run record keeps it (the
    run's ``owner`` column); a host's run lock (``playbooks/files/hostlock.py``) keeps it
    with the run's ``token`` and the time it was taken (``since``)."""

    controller: str | None = None
    controller_host: str | None = None
    pid: int | None = None
    pid_start: int | None = None
    run_id: int | None = None
    token: str | None = None
    since: float | None = None
    unreadable: bool = False  # the lock's owner file could not be read
    # what a lock file of another version holds beyond these keys, kept as read
    verbatim_lock: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: object) -> LockOwner:
        return load(cls, data) if isinstance(data, Mapping) else cls()

    def to_json(self) -> dict[str, object]:
        return dump_object(self)


@dataclass(frozen=True)
class LockReply:
    """What ``hostlock.py acquire`` answers: taken, or who holds the lock."""

    acquired: bool = False
    holder: LockOwner | None = None
    lock: str = "/run/sizing.lock"  # the lock directory (the host's sizing_lock_path)

    @classmethod
    def parse(cls, data: object) -> LockReply:
        return load(cls, data) if isinstance(data, Mapping) else cls()


def hosts_of(environment: Mapping[str, object]) -> dict[str, HostRecord]:
    """A run's environment record, host by host."""
    return {str(h): HostRecord.parse(d) for h, d in environment.items()}
