"""Inventories: standard Ansible YAML inventories with ``sizing_*`` variables.

The file is read with a strict YAML loader that gives the same hosts, groups and merged
variables as Ansible's YAML inventory plugin (``all:``, ``children:``, ``hosts:``,
``vars:``; group variables by depth then name, host variables last), and additionally
reports duplicate keys with their line. The ``sizing_*`` variables are validated with
pydantic; every problem becomes one ``file: host.field: message`` line.

Roles come from group membership: hosts in ``servers`` are measured, hosts in ``clients``
generate load, hosts in ``upstreams`` serve behind a proxy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizing.errors import InputError
from sizing.model import Platform
from sizing.yamlfile import StrictLoader, read_yaml

ROLE_GROUPS = {"servers": "server", "clients": "client", "upstreams": "upstream"}


class CpuSpec(BaseModel):
    """What the inventory declares about a host's CPUs (checked against the real host)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    sockets: int = Field(default=1, ge=1, le=16)
    cores_per_socket: int = Field(ge=1, le=512)
    threads_per_core: int = Field(default=1, ge=1, le=8)

    @property
    def physical_cores(self) -> int:
        return self.sockets * self.cores_per_socket


class HostVars(BaseModel):
    """The ``sizing_*`` variables of one host, after group and host merging."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    platform: Platform = Platform.BAREMETAL
    address: str | None = Field(
        default=None,
        description="Address the clients load; default ansible_host, or 127.0.0.1 locally.",
    )
    cpu: CpuSpec | None = None
    price_usd: float | None = Field(default=None, ge=0)
    cost_ref: str | None = None
    nic_gbps: float | None = Field(default=None, gt=0)
    client_cpus: str | None = Field(
        default=None, description="cpulist the load generator may use on a client host"
    )
    # Settings handed through to playbooks/nginx.yml (validated here, used there).
    http_port: int = Field(default=8080, ge=1, le=65535)
    https_port: int = Field(default=8443, ge=1, le=65535)
    listen_address: str | None = None
    become: bool | None = None
    conf_dir: str | None = None
    www_root: str | None = None
    log_dir: str | None = None
    pid_file: str | None = None
    nginx_worker_connections: int | None = Field(default=None, ge=16)
    nginx_rlimit_nofile: int | None = Field(default=None, ge=64)
    tls_log: bool | None = None
    fault_locations: bool | None = Field(
        default=None, description="test-only nginx locations that answer 503 (fault tests)"
    )
    tool_dir: str | None = None  # where loadgen.py, wrk_report.lua and vegeta go
    # The upstream nginx of the proxy and api-jwt profiles (playbooks/upstream.yml).
    upstream_port: int | None = Field(default=None, ge=1, le=65535)
    upstream_listen_address: str | None = None
    upstream_conf_dir: str | None = None
    upstream_www_root: str | None = None
    upstream_log_dir: str | None = None
    upstream_pid_file: str | None = None
    # Hypervisor guests (libvirt, vsphere): validated by their platform adapters.
    vm: dict[str, Any] | None = None
    hypervisor: dict[str, Any] | None = None


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
        return self.variables.get("ansible_connection") == "local"

    @property
    def address(self) -> str:
        """Where clients send load for this host."""
        if self.sizing.address:
            return self.sizing.address
        if self.is_local:
            return "127.0.0.1"
        return str(self.variables.get("ansible_host", self.name))


@dataclass(frozen=True)
class Inventory:
    """A validated inventory."""

    path: Path
    hosts: dict[str, Host]

    @property
    def servers(self) -> list[Host]:
        return [h for h in self.hosts.values() if "server" in h.roles]

    @property
    def clients(self) -> list[Host]:
        return [h for h in self.hosts.values() if "client" in h.roles]

    @property
    def upstreams(self) -> list[Host]:
        return [h for h in self.hosts.values() if "upstream" in h.roles]


# -- strict YAML ----------------------------------------------------------------------


class _InventoryLoader(StrictLoader):
    """The strict loader, plus Ansible's ``!vault`` tag."""


def _construct_vault(loader: Any, node: yaml.Node) -> str:
    """An inline ansible-vault value (``!vault |``): Ansible decrypts it, sizing never
    needs it, so it stays an opaque placeholder here."""
    return "<vault-encrypted>"


_InventoryLoader.add_constructor("!vault", _construct_vault)


@dataclass
class _Group:
    name: str
    vars: dict[str, Any] = field(default_factory=dict)
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)


def load_inventory(path: Path | str) -> Inventory:
    """Read and validate an inventory file, or raise :class:`InputError`."""
    path = Path(path)
    shown = str(path)
    data = read_yaml(path, "inventory", _InventoryLoader)
    groups = _parse_groups(shown, data)
    return _build(path, groups)


def _parse_groups(shown: str, data: Any) -> dict[str, _Group]:
    problems: list[str] = []
    groups: dict[str, _Group] = {"all": _Group("all")}
    if data is None:
        raise InputError(shown, ["empty inventory; expected an 'all:' mapping"])
    if not isinstance(data, dict):
        raise InputError(shown, ["expected a mapping of groups at the top (all: ...)"])

    def walk(name: str, body: Any, parent: str | None, where: str) -> None:
        group = groups.setdefault(name, _Group(name))
        if parent is not None and parent not in group.parents:
            group.parents.append(parent)
            groups[parent].children.append(name)
        if body is None:
            return
        if not isinstance(body, dict):
            problems.append(f"{where}: expected a mapping with hosts, vars or children")
            return
        for key in body:
            if key not in ("hosts", "vars", "children"):
                problems.append(f"{where}.{key}: unknown key (expected hosts, vars, children)")
        gvars = body.get("vars") or {}
        if not isinstance(gvars, dict):
            problems.append(f"{where}.vars: expected a mapping")
        else:
            group.vars.update(gvars)
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, dict):
            problems.append(f"{where}.hosts: expected a mapping of host names")
        else:
            for hname, hvars in hosts.items():
                if hvars is None:
                    hvars = {}
                if not isinstance(hvars, dict):
                    problems.append(f"{where}.hosts.{hname}: expected a mapping of variables")
                    continue
                if hname in group.hosts:
                    problems.append(f"{where}.hosts.{hname}: duplicate host")
                group.hosts[str(hname)] = hvars
        children = body.get("children") or {}
        if not isinstance(children, dict):
            problems.append(f"{where}.children: expected a mapping of groups")
        else:
            for cname, cbody in children.items():
                walk(str(cname), cbody, name, f"{where}.children.{cname}")

    for top, body in data.items():
        if top == "all":
            walk("all", body, None, "all")
        else:  # Ansible accepts top-level groups as implicit children of all
            walk(str(top), body, "all", str(top))
    if problems:
        raise InputError(shown, problems)
    return groups


def _depth(groups: dict[str, _Group], name: str) -> int:
    parents = groups[name].parents
    return 0 if not parents else 1 + max(_depth(groups, p) for p in parents)


def _ancestors(groups: dict[str, _Group], name: str) -> set[str]:
    out = {name}
    for p in groups[name].parents:
        out |= _ancestors(groups, p)
    return out


def _build(path: Path, groups: dict[str, _Group]) -> Inventory:
    shown = str(path)
    host_groups: dict[str, set[str]] = {}
    host_vars: dict[str, dict[str, Any]] = {}
    for g in groups.values():
        for hname, hv in g.hosts.items():
            host_groups.setdefault(hname, set()).update(_ancestors(groups, g.name))
            host_vars.setdefault(hname, {}).update(hv)
    problems: list[str] = []
    hosts: dict[str, Host] = {}
    for hname in sorted(host_groups):
        member = host_groups[hname] | {"all"}
        merged: dict[str, Any] = {}
        for gname in sorted(member, key=lambda n: (_depth(groups, n), n)):
            merged.update(groups[gname].vars)
        merged.update(host_vars[hname])
        sizing_raw = {k[len("sizing_") :]: v for k, v in merged.items() if k.startswith("sizing_")}
        try:
            host_sizing = HostVars.model_validate(sizing_raw)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                field_name = f"sizing_{loc}" if loc else "sizing_*"
                msg = err["msg"]
                if err["type"] == "extra_forbidden":
                    msg = "unknown variable"
                elif err["type"] == "enum":
                    got = err.get("input")
                    msg = f"unknown platform {got!r} (expected baremetal, libvirt, vsphere)"
                problems.append(f"host {hname}: {field_name}: {msg}")
            continue
        roles = frozenset(ROLE_GROUPS[g] for g in member if g in ROLE_GROUPS)
        hosts[hname] = Host(
            name=hname,
            roles=roles,
            groups=tuple(sorted(member)),
            sizing=host_sizing,
            variables=merged,
        )
    if not problems:
        if not any("server" in h.roles for h in hosts.values()):
            problems.append("no server host: put at least one host in the 'servers' group")
        elif not any("client" in h.roles for h in hosts.values()):
            problems.append("no client host: put at least one host in the 'clients' group")
        seen: dict[tuple[str, Any], str] = {}
        for h in hosts.values():
            if "server" not in h.roles or h.is_local:
                continue
            ident = (h.address, h.variables.get("ansible_port", 22))
            if ident in seen:
                problems.append(
                    f"host {h.name}: duplicate host: same address {h.address} as {seen[ident]}"
                )
            seen[ident] = h.name
    if problems:
        raise InputError(shown, problems)
    return Inventory(path=path, hosts=hosts)
