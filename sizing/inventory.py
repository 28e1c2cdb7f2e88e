"""Inventories: Ansible inventories (YAML or INI) with ``sizing_*`` variables.

Ansible reads them: ansible-core's ``InventoryManager`` and ``VariableManager`` give the
hosts (ranges such as ``web[01:02]`` expanded), the groups and the merged variables,
``group_vars/`` and ``host_vars/`` beside the file included, ansible-vault values decrypted
with Ansible's own vault secrets (``ANSIBLE_VAULT_PASSWORD_FILE`` or ``vault_password_file``
in ansible.cfg, a password file or an executable script). The variables are the ones
``ansible-inventory --list`` shows. Before Ansible sees a YAML file, sizing's strict reader
checks it (duplicate keys with their lines, unknown keys in a group); an INI file is
checked by Ansible's INI parser. The ``sizing_*`` variables Ansible resolves are then
validated with pydantic; every problem becomes one ``file: host X: field: message`` line.
ansible-core is imported only here, when an inventory is read, so commands that read none
start fast.

Roles come from group membership: hosts in ``servers`` are measured, hosts in ``clients``
generate load, hosts in ``upstreams`` serve behind a proxy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizing.errors import InputError
from sizing.model import Platform
from sizing.yamlfile import StrictLoader, read_yaml

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader

ROLE_GROUPS = {"servers": "server", "clients": "client", "upstreams": "upstream"}
YAML_SUFFIXES = (".yml", ".yaml", ".json")  # Ansible's YAML_FILENAME_EXTENSIONS


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


def load_inventory(path: Path | str) -> Inventory:
    """Read an inventory with Ansible and validate it, or raise :class:`InputError`.

    Nothing is contacted: Ansible only parses the file, ``group_vars/`` and ``host_vars/``
    beside it, and decrypts vault values with the secrets its configuration names.
    """
    path = Path(path)
    shown = str(path)
    if not path.exists():
        raise InputError(shown, ["no such inventory file"])
    if path.is_dir():
        raise InputError(shown, ["is a directory; give an inventory file (YAML or INI)"])
    if path.suffix.lower() in YAML_SUFFIXES:
        _check_yaml_inventory(path)
    _check_vars_dirs(path.parent)
    return _build(path, _resolve(path))


# -- strict checks before Ansible reads the files -------------------------------------


class _InventoryLoader(StrictLoader):
    """The strict loader, plus Ansible's ``!vault`` tag (for the pre-check only)."""


def _construct_vault(loader: Any, node: yaml.Node) -> str:
    """An inline ansible-vault value (``!vault |``): Ansible decrypts it; the strict
    pre-check only needs to know that it is a scalar."""
    return "<vault-encrypted>"


_InventoryLoader.add_constructor("!vault", _construct_vault)


def _check_yaml_inventory(path: Path) -> None:
    """Strict YAML (duplicate keys, syntax with its line) and the inventory's shape.

    Ansible's YAML plugin keeps the last of two duplicate keys and skips unknown keys with
    a warning; a sizing inventory is refused instead, with every problem named.
    """
    shown = str(path)
    data = read_yaml(path, "inventory", _InventoryLoader)
    if data is None:
        raise InputError(shown, ["empty inventory; expected an 'all:' mapping"])
    if not isinstance(data, dict):
        raise InputError(shown, ["expected a mapping of groups at the top (all: ...)"])
    problems: list[str] = []

    def walk(body: Any, where: str) -> None:
        if body is None:
            return
        if not isinstance(body, dict):
            problems.append(f"{where}: expected a mapping with hosts, vars or children")
            return
        for key in body:
            if key not in ("hosts", "vars", "children"):
                problems.append(f"{where}.{key}: unknown key (expected hosts, vars, children)")
        if not isinstance(body.get("vars") or {}, dict):
            problems.append(f"{where}.vars: expected a mapping")
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, dict):
            problems.append(f"{where}.hosts: expected a mapping of host names")
        else:
            for hname, hvars in hosts.items():
                if hvars is not None and not isinstance(hvars, dict):
                    problems.append(f"{where}.hosts.{hname}: expected a mapping of variables")
        children = body.get("children") or {}
        if not isinstance(children, dict):
            problems.append(f"{where}.children: expected a mapping of groups")
        else:
            for cname, cbody in children.items():
                walk(cbody, f"{where}.children.{cname}")

    for top, body in data.items():
        walk(body, str(top))  # Ansible takes other top-level groups as children of all
    if problems:
        raise InputError(shown, problems)


def _check_vars_dirs(base: Path) -> None:
    """The YAML files of ``group_vars/`` and ``host_vars/`` beside the inventory, strictly.

    Whole-file vault files (``$ANSIBLE_VAULT;...``) are left to Ansible, which decrypts them.
    """
    for sub in ("group_vars", "host_vars"):
        top = base / sub
        if not top.is_dir():
            continue
        for f in sorted(top.rglob("*")):
            rel = f.relative_to(top)
            if not f.is_file() or any(part.startswith(".") for part in rel.parts):
                continue
            if f.suffix.lower() not in ("", *YAML_SUFFIXES):
                continue
            try:
                if f.read_bytes().lstrip().startswith(b"$ANSIBLE_VAULT"):
                    continue
            except OSError as exc:
                raise InputError(str(f), [f"cannot read: {exc}"]) from exc
            data = read_yaml(f, "variables", _InventoryLoader)
            if data is not None and not isinstance(data, dict):
                raise InputError(str(f), ["expected a mapping of variables"])


# -- Ansible's reading -----------------------------------------------------------------


def _setup_vault(loader: DataLoader) -> None:
    """Ansible's own vault secrets, as ``ansible-inventory`` sets them up.

    The password file (or executable script) comes from ``ANSIBLE_VAULT_PASSWORD_FILE`` or
    ansible.cfg's ``vault_password_file``, the identities from ``vault_identity_list``.
    Never prompts. Read afresh on every call: the environment may have changed since
    ansible's constants were computed at import.
    """
    from ansible import constants as C
    from ansible.cli import CLI
    from ansible.errors import AnsibleError
    from ansible.parsing.vault import VaultSecretsContext

    password_file = C.config.get_config_value("DEFAULT_VAULT_PASSWORD_FILE")
    files = (
        [password_file] if password_file and password_file != C.DEFAULT_VAULT_PASSWORD_FILE else []
    )
    ids = list(C.config.get_config_value("DEFAULT_VAULT_IDENTITY_LIST") or [])
    try:
        secrets = CLI.setup_vault_secrets(
            loader,
            vault_ids=ids,
            vault_password_files=files,
            ask_vault_pass=False,
            auto_prompt=False,
            initialize_context=False,
        )
    except AnsibleError as exc:
        where = password_file or "vault password"
        raise InputError(str(where), [f"vault password: {_first_line(exc)}"]) from exc
    # EncryptedString values decrypt through this process-wide context when read.
    current = VaultSecretsContext.current(optional=True)
    if current is None:
        VaultSecretsContext.initialize(VaultSecretsContext(secrets))
    else:
        current.secrets = secrets


def _first_line(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_ini(loader: DataLoader, source: str, shown: str) -> None:
    """Parse an INI inventory with Ansible's INI plugin alone, for one clear error line.

    InventoryManager would only warn and go on with an empty inventory.
    """
    from ansible.errors import AnsibleError
    from ansible.inventory.data import InventoryData
    from ansible.plugins.loader import inventory_loader

    plugin = inventory_loader.get("ini")
    try:
        plugin.parse(InventoryData(), loader, source, cache=False)
    except AnsibleError as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, AnsibleError) else exc
        message = _first_line(cause).removeprefix("Failed to parse inventory: ")
        raise InputError(shown, [f"INI syntax: {message}"]) from exc


def _resolve(path: Path) -> dict[str, tuple[set[str], dict[str, Any]]]:
    """Each host's groups and variables, as ``ansible-inventory -i PATH --list`` has them."""
    from ansible import constants as C
    from ansible.errors import AnsibleError
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    shown = str(path)
    source = str(path.resolve())
    loader = DataLoader()
    _setup_vault(loader)
    if path.suffix.lower() not in YAML_SUFFIXES and path.suffix.lower() != ".toml":
        _check_ini(loader, source, shown)
    out: dict[str, tuple[set[str], dict[str, Any]]] = {}
    try:
        manager = InventoryManager(loader=loader, sources=[source])
        variables = VariableManager(loader=loader, inventory=manager)
        for host in manager.get_hosts():
            hostvars = variables.get_vars(host=host, include_hostvars=False, stage="all")
            for internal in C.INTERNAL_STATIC_VARS:
                hostvars.pop(internal, None)
            groups = {g.name for g in host.get_groups()} | {"all"}
            out[host.name] = (groups, {str(k): _native(v) for k, v in hostvars.items()})
    except AnsibleError as exc:
        raise InputError(shown, [_first_line(exc)]) from exc
    return out


def _native(value: Any) -> Any:
    """Plain Python values instead of Ansible's tagged ones; vault values stay encrypted
    (they decrypt when read as text; ``sizing_*`` ones are decrypted at validation)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {_native(k): _native(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_native(v) for v in value]
    return value


def _reveal(value: Any) -> Any:
    """A ``sizing_*`` value with every vault-encrypted string decrypted."""
    from ansible.parsing.vault import EncryptedString

    if isinstance(value, EncryptedString):
        return str(value)
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    return value


def _build(path: Path, resolved: dict[str, tuple[set[str], dict[str, Any]]]) -> Inventory:
    from ansible.errors import AnsibleError

    shown = str(path)
    problems: list[str] = []
    hosts: dict[str, Host] = {}
    for hname in sorted(resolved):
        member, merged = resolved[hname]
        sizing_raw: dict[str, Any] = {}
        for key, value in merged.items():
            if not key.startswith("sizing_"):
                continue
            try:
                merged[key] = sizing_raw[key[len("sizing_") :]] = _reveal(value)
            except AnsibleError as exc:
                problems.append(
                    f"host {hname}: {key}: cannot decrypt the ansible-vault value "
                    f"({_first_line(exc)}); give the vault password with "
                    "ANSIBLE_VAULT_PASSWORD_FILE or vault_password_file in ansible.cfg"
                )
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
