"""The validated inventory: ``sizing_*`` host variables (pydantic), the string checks that
keep inventory values safe to put into nginx.conf, and the :class:`Host` and
:class:`Inventory` the rest of sizing reads. Reading the file is :mod:`sizing.inventory`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from sizing.filemodel import FileModel
from sizing.model import Platform

if TYPE_CHECKING:
    pass
ROLE_GROUPS = {"servers": "server", "clients": "client", "upstreams": "upstream"}
YAML_SUFFIXES = (".yml", ".yaml", ".json")  # Ansible's YAML_FILENAME_EXTENSIONS


# -- the strings that reach nginx.conf, URLs and argv ------------------------------------
#
# nginx.conf is rendered from inventory values (playbooks/nginx.yml, upstream.yml): a value
# carrying `;`, `{`, `}`, a quote or a newline would add directives of its own. Every such
# string is checked here, at the edge, so `inventory check` refuses it with its field.

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONF_UNSAFE = re.compile(r"[\s;{}#'\"\\$`]")
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*\.?\Z")
_CPULIST_ITEM = re.compile(r"(\d{1,5})(?:-(\d{1,5}))?\Z")
MAX_CPU_ID = 8191  # the kernel's largest NR_CPUS
MAX_PATH = 1024


def no_control(value: str) -> str:
    """A text without control characters (newline, escape, NUL, ...)."""
    m = CONTROL.search(value)
    if m:
        raise ValueError(f"control character {m.group()!r} not allowed")
    return value


LOOPBACK_NAMES = ("localhost", "ip6-localhost", "ip6-loopback", "localhost.localdomain")


def is_loopback(address: str) -> bool:
    """Whether ``address`` is this machine's loopback (127.0.0.0/8, ::1, localhost): a
    client on another machine loading it would load itself."""
    addr = address.strip().lower().rstrip(".")
    if addr in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(addr.strip("[]")).is_loopback
    except ValueError:
        return False


def is_hostname(value: str) -> bool:
    """A DNS host name (labels of letters, digits, '-', '_'; not all-numeric at the end,
    which would be a malformed IPv4 address)."""
    return bool(_HOSTNAME.match(value)) and not value.rstrip(".").rsplit(".", 1)[-1].isdigit()


def check_address(value: str) -> str:
    """An IPv4 or IPv6 address or a host name: what clients load, an upstream's address."""
    no_control(value)
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not is_hostname(value):
            raise ValueError(f"{value!r} is not an IP address or a host name") from None
    return value


def check_listen_address(value: str) -> str:
    """nginx's ``listen ADDRESS:PORT`` address: IPv4, ``[IPv6]``, ``*`` or a host name."""
    no_control(value)
    if value == "*":
        return value
    if value.startswith("[") and value.endswith("]"):
        try:
            ipaddress.IPv6Address(value[1:-1])
        except ValueError:
            raise ValueError(f"{value!r} is not a bracketed IPv6 address") from None
        return value
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        if not is_hostname(value):
            raise ValueError(
                f"{value!r} is not an address nginx can listen on "
                "(an IPv4 address, [IPv6], * or a host name)"
            ) from None
        return value
    if ip.version == 6:
        raise ValueError(f"write the IPv6 address in brackets: [{value}]")
    return value


def check_path(value: str) -> str:
    """An absolute path that is safe in nginx.conf: no whitespace, ;, {, }, #, quotes,
    backslash, $ or backquote."""
    no_control(value)
    if not value.startswith("/"):
        raise ValueError(f"{value!r} is not an absolute path")
    if len(value) > MAX_PATH:
        raise ValueError(f"path longer than {MAX_PATH} characters")
    m = _CONF_UNSAFE.search(value)
    if m:
        raise ValueError(f"{m.group()!r} not allowed in a path")
    if value.rstrip("/") == "":
        raise ValueError("the root directory is not allowed here")
    return value


def check_cpulist(value: str) -> str:
    """A kernel CPU list (``0-3,8``) with ids up to :data:`MAX_CPU_ID`."""
    no_control(value)
    for item in value.split(","):
        m = _CPULIST_ITEM.match(item.strip())
        if m is None:
            raise ValueError(f"{value!r} is not a CPU list (like 0-3,8)")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        if last < first:
            raise ValueError(f"descending range {item.strip()!r} in CPU list {value!r}")
        if last > MAX_CPU_ID:
            raise ValueError(f"CPU {last} is beyond the largest CPU id ({MAX_CPU_ID})")
    return value


Text = Annotated[str, AfterValidator(no_control)]
Address = Annotated[str, AfterValidator(check_address)]
ListenAddress = Annotated[str, AfterValidator(check_listen_address)]
AbsPath = Annotated[str, AfterValidator(check_path)]
CpuList = Annotated[str, AfterValidator(check_cpulist)]


class CpuSpec(FileModel):
    """What the inventory declares about a host's CPUs (checked against the real host)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: Text | None = None
    sockets: int = Field(default=1, ge=1, le=16)
    cores_per_socket: int = Field(ge=1, le=512)
    threads_per_core: int = Field(default=1, ge=1, le=8)

    @property
    def physical_cores(self) -> int:
        return self.sockets * self.cores_per_socket


class HostVars(FileModel):
    """The ``sizing_*`` variables of one host, after group and host merging."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)

    platform: Platform = Platform.BAREMETAL
    address: Address | None = Field(
        default=None,
        description="Address the clients load; default ansible_host, or 127.0.0.1 locally.",
    )
    cpu: CpuSpec | None = None
    price_usd: float | None = Field(
        default=None, gt=0, le=1e9, description="The server's price (0 is refused)."
    )
    cost_ref: Text | None = None
    nic_gbps: float | None = Field(default=None, gt=0)
    steer_irqs: bool | None = Field(
        default=None,
        description="steer the NIC's IRQs and RPS to the measured cores (playbooks/nginx.yml)",
    )
    client_cpus: CpuList | None = Field(
        default=None, description="cpulist the load generator may use on a client host"
    )
    # Settings handed through to playbooks/nginx.yml (validated here, used there).
    http_port: int = Field(default=8080, ge=1, le=65535)
    https_port: int = Field(default=8443, ge=1, le=65535)
    listen_address: ListenAddress | None = None
    become: bool | None = None
    conf_dir: AbsPath | None = None
    www_root: AbsPath | None = None
    log_dir: AbsPath | None = None
    pid_file: AbsPath | None = None
    nginx_worker_connections: int | None = Field(default=None, ge=16, le=1_000_000)
    nginx_rlimit_nofile: int | None = Field(default=None, ge=64, le=1_073_741_816)
    tls_log: bool | None = None
    fault_locations: bool | None = Field(
        default=None, description="test-only nginx locations that answer 503 (fault tests)"
    )
    # Where loadgen.py and the load generators' files go: a directory that the connecting user
    # owns with mode 0700 (playbooks/tasks/tool-dir.yml creates it or refuses it).
    tool_dir: AbsPath | None = None
    # The run lock's directory on the host (files/hostlock.py): /run/sizing.lock if unset.
    lock_path: AbsPath | None = Field(
        default=None, description="the run lock's directory on the host (/run/sizing.lock)"
    )
    # The upstream nginx of the proxy and api-jwt profiles (playbooks/upstream.yml).
    upstream_port: int | None = Field(default=None, ge=1, le=65535)
    upstream_listen_address: ListenAddress | None = None
    upstream_conf_dir: AbsPath | None = None
    upstream_www_root: AbsPath | None = None
    upstream_log_dir: AbsPath | None = None
    upstream_pid_file: AbsPath | None = None
    # Hypervisor guests (libvirt, vsphere): validated by their platform adapters.
    vm: dict[str, Any] | None = None
    hypervisor: dict[str, Any] | None = None
    # A container server (sizing_platform: container): validated by its platform adapter.
    container: dict[str, Any] | None = None

    @field_validator("http_port", "https_port", "upstream_port", mode="before")
    @classmethod
    def _port_is_a_number(cls, value: Any) -> Any:
        # pydantic would take True as 1 and 8080.5 as an error only in strict mode
        if isinstance(value, bool):
            raise ValueError("a port is a number, not true/false")
        return value

    @model_validator(mode="after")
    def _distinct_ports(self) -> HostVars:
        if self.http_port == self.https_port:
            raise ValueError(
                f"sizing_http_port and sizing_https_port are both {self.http_port}; "
                "give them different ports"
            )
        if self.upstream_port is not None and self.upstream_port in (
            self.http_port,
            self.https_port,
        ):
            raise ValueError(
                f"sizing_upstream_port {self.upstream_port} is also the sizing nginx's port; "
                "give it another"
            )
        return self


def short_connection(name: str) -> str:
    """A connection plugin's short name: ``ansible.builtin.local`` is ``local``,
    ``ansible.netcommon.network_cli`` is ``network_cli``; another collection's keeps its
    FQCN."""
    for prefix in ("ansible.builtin.", "ansible.legacy.", "ansible.netcommon."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


@dataclass(frozen=True)
class Host:
    """One inventory host as sizing understands it."""

    name: str
    roles: frozenset[str]
    groups: tuple[str, ...]
    sizing: HostVars
    variables: dict[str, Any] = field(repr=False)

    @property
    def platform(self) -> Platform:
        return self.sizing.platform

    @property
    def is_local(self) -> bool:
        return self.connection == "local"

    @property
    def ansible_address(self) -> str:
        """Where Ansible reaches the host: ``ansible_ssh_host`` (the older alias, which
        Ansible's ssh connection prefers when both are set), ``ansible_host``, its name."""
        v = self.variables
        return str(v.get("ansible_ssh_host") or v.get("ansible_host") or self.name)

    @property
    def address(self) -> str:
        """Where clients send load for this host: ``sizing_address``; this machine's
        loopback for a local connection; else the address Ansible reaches it at."""
        if self.sizing.address:
            return self.sizing.address
        if self.is_local:
            return "127.0.0.1"
        return self.ansible_address

    @property
    def connection(self) -> str:
        """How Ansible reaches the host (``ssh`` unless the inventory says otherwise)."""
        return short_connection(str(self.variables.get("ansible_connection") or "ssh"))

    @property
    def runs_on(self) -> str:
        """The inventory host whose machine this server runs on: a container's host
        (``sizing_container.host``), else itself."""
        if self.platform is Platform.CONTAINER and self.sizing.container:
            return str(self.sizing.container.get("host") or self.name)
        return self.name


@dataclass(frozen=True)
class Inventory:
    """A validated inventory."""

    path: Path
    hosts: dict[str, Host]
    # hosts the inventory has but sizing does not use (in none of its groups), with their
    # groups: listed by `inventory check`, never validated
    ignored: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # every -i, in order (path is the first); Ansible's warnings as it read them
    sources: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()

    def warning_lines(self) -> list[str]:
        """Ansible's warnings, each distinct one once, with how often it came."""
        seen: dict[str, int] = {}
        for line in self.warnings:
            seen[line] = seen.get(line, 0) + 1
        return [line if n == 1 else f"{line} ({n} times)" for line, n in seen.items()]

    @property
    def inventories(self) -> tuple[Path, ...]:
        """Every ``-i``, in order."""
        return self.sources or (self.path,)

    @property
    def servers(self) -> list[Host]:
        return [h for h in self.hosts.values() if "server" in h.roles]

    @property
    def clients(self) -> list[Host]:
        return [h for h in self.hosts.values() if "client" in h.roles]

    @property
    def upstreams(self) -> list[Host]:
        return [h for h in self.hosts.values() if "upstream" in h.roles]

    def declared(self) -> dict[str, dict[str, Any]]:
        """What the inventory declares per host for pricing and hardware
        (``sizing_price_usd``, ``sizing_cpu``, ``sizing_cost_ref``); hosts declaring none
        are left out. A run stores it so its bases can be priced later
        (:mod:`sizing.sources.bases` reads ``environment[host]["declared"]``)."""
        out: dict[str, dict[str, Any]] = {}
        for h in self.hosts.values():
            v = h.sizing
            if v.price_usd is None and v.cpu is None and not v.cost_ref:
                continue
            out[h.name] = {
                "sizing_price_usd": v.price_usd,
                "sizing_cpu": None if v.cpu is None else v.cpu.model_dump(),
                "sizing_cost_ref": v.cost_ref,
            }
        return out
