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

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from sizing.errors import InputError
from sizing.model import Platform
from sizing.yamlfile import StrictLoader, read_yaml

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader

ROLE_GROUPS = {"servers": "server", "clients": "client", "upstreams": "upstream"}
YAML_SUFFIXES = (".yml", ".yaml", ".json")  # Ansible's YAML_FILENAME_EXTENSIONS


# -- the strings that reach nginx.conf, URLs and argv ------------------------------------
#
# nginx.conf is rendered from inventory values (playbooks/nginx.yml, upstream.yml): a value
# carrying `;`, `{`, `}`, a quote or a newline would add directives of its own. Every such
# string is checked here, at the edge, so `inventory check` refuses it with its field.

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONF_UNSAFE = re.compile(r"[\s;{}#'\"\\$`]")
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*\.?\Z")
_CPULIST_ITEM = re.compile(r"(\d{1,5})(?:-(\d{1,5}))?\Z")
MAX_CPU_ID = 8191  # the kernel's largest NR_CPUS
MAX_PATH = 1024


def no_control(value: str) -> str:
    """A text without control characters (newline, escape, NUL, ...)."""
    m = _CONTROL.search(value)
    if m:
        raise ValueError(f"control character {m.group()!r} not allowed")
    return value


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


class CpuSpec(BaseModel):
    """What the inventory declares about a host's CPUs (checked against the real host)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: Text | None = None
    sockets: int = Field(default=1, ge=1, le=16)
    cores_per_socket: int = Field(ge=1, le=512)
    threads_per_core: int = Field(default=1, ge=1, le=8)

    @property
    def physical_cores(self) -> int:
        return self.sockets * self.cores_per_socket


class HostVars(BaseModel):
    """The ``sizing_*`` variables of one host, after group and host merging."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)

    platform: Platform = Platform.BAREMETAL
    address: Address | None = Field(
        default=None,
        description="Address the clients load; default ansible_host, or 127.0.0.1 locally.",
    )
    cpu: CpuSpec | None = None
    price_usd: float | None = Field(default=None, ge=0)
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
    # Where loadgen.py, wrk_report.lua and vegeta go: a directory that the connecting user
    # owns with mode 0700 (playbooks/tasks/tool-dir.yml creates it or refuses it).
    tool_dir: AbsPath | None = None
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


def load_inventory(
    path: Path | str,
    *,
    limit: str | None = None,
    extra_vars: Mapping[str, Any] | None = None,
) -> Inventory:
    """Read an inventory with Ansible and validate it, or raise :class:`InputError`.

    Nothing is contacted: Ansible only parses the file, ``group_vars/`` and ``host_vars/``
    beside it, and decrypts vault values with the secrets its configuration names.
    ``limit``: Ansible host patterns (``--limit``), resolved by Ansible's InventoryManager;
    only the hosts they match are kept. ``extra_vars`` (``-e``) override every host's
    variables, as in ansible-playbook, before the ``sizing_*`` ones are validated.
    """
    path = Path(path)
    shown = str(path)
    if not path.exists():
        raise InputError(shown, ["no such inventory file"])
    if path.is_dir():
        raise InputError(shown, ["is a directory; give an inventory file (YAML or INI)"])
    if path.suffix.lower() in YAML_SUFFIXES:
        _check_yaml_inventory(path)
    else:
        _check_text(path)
    _check_vars_dirs(path.parent)
    resolved = _resolve(path, limit, extra_vars or {})
    if limit and not resolved:
        raise InputError(shown, [f"--limit {limit}: matches no host of this inventory"])
    return _build(path, resolved)


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
    problems = _shape_problems(data)
    if problems:
        raise InputError(shown, problems)


MAX_GROUP_DEPTH = 32  # groups within groups
MAX_DEPTH = 64  # any value within values (variables included)
MAX_NODES = 200_000  # values in one file, aliases counted each time they are used


def _key_problem(key: Any, what: str, where: str) -> str | None:
    """A host or group name must be a non-empty string without control characters."""
    if not isinstance(key, str):
        shown = "null" if key is None else f"{key!r} ({type(key).__name__})"
        return f"{where}: {what} name {shown} is not a string; quote it or remove it"
    if not key.strip():
        return f"{where}: empty {what} name"
    if _CONTROL.search(key):
        return f"{where}: {what} name {key!r}: control characters not allowed"
    return None


def _shape_problems(data: dict[Any, Any]) -> list[str]:
    """Every problem of an inventory's shape, without recursion: unknown keys, names
    that are not strings, group cycles, groups nested too deep, values nested too deep
    or too many (YAML aliases can multiply them)."""
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    # (body, where, group name, group depth)
    stack: list[tuple[Any, str, str, int]] = []
    for top, body in reversed(list(data.items())):
        bad = _key_problem(top, "group", "top level")
        if bad:
            problems.append(bad)
            continue
        if top != "all":  # Ansible takes other top-level groups as children of all
            edges.setdefault("all", set()).add(top)
        stack.append((body, str(top), top, 1))
    while stack:
        body, where, group, depth = stack.pop()
        if depth > MAX_GROUP_DEPTH:
            problems.append(f"{where}: groups nested deeper than {MAX_GROUP_DEPTH} levels")
            break
        if body is None:
            continue
        if not isinstance(body, dict):
            problems.append(f"{where}: expected a mapping with hosts, vars or children")
            continue
        for key in body:
            if key not in ("hosts", "vars", "children"):
                problems.append(f"{where}.{key}: unknown key (expected hosts, vars, children)")
        variables = body.get("vars") or {}
        if not isinstance(variables, dict):
            problems.append(f"{where}.vars: expected a mapping")
        else:
            problems.extend(_vars_problems(variables, f"{where}.vars"))
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, dict):
            problems.append(f"{where}.hosts: expected a mapping of host names")
        else:
            for hname, hvars in hosts.items():
                bad = _key_problem(hname, "host", f"{where}.hosts")
                if bad:
                    problems.append(bad)
                elif hvars is not None and not isinstance(hvars, dict):
                    problems.append(f"{where}.hosts.{hname}: expected a mapping of variables")
                elif hvars:
                    problems.extend(_vars_problems(hvars, f"{where}.hosts.{hname}"))
        children = body.get("children") or {}
        if not isinstance(children, dict):
            problems.append(f"{where}.children: expected a mapping of groups")
            continue
        for cname, cbody in reversed(list(children.items())):
            bad = _key_problem(cname, "group", f"{where}.children")
            if bad:
                problems.append(bad)
                continue
            edges.setdefault(group, set()).add(cname)
            stack.append((cbody, f"{where}.children.{cname}", cname, depth + 1))
        if len(problems) > 50:
            break
    cycle = _find_cycle(edges)
    if cycle:
        problems.append("group cycle: " + " -> ".join(cycle) + " (a group cannot contain itself)")
    return problems


def _vars_problems(variables: dict[Any, Any], where: str) -> list[str]:
    """Variable names are strings; values are nested at most MAX_DEPTH levels deep and
    number at most MAX_NODES (counted without recursion)."""
    problems = [
        f"{where}: variable name {k!r} is not a string" for k in variables if not isinstance(k, str)
    ]
    stack: list[tuple[Any, int]] = [(variables, 0)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            problems.append(f"{where}: more than {MAX_NODES} values (YAML aliases?)")
            break
        if depth > MAX_DEPTH:
            problems.append(f"{where}: values nested deeper than {MAX_DEPTH} levels")
            break
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return problems


def _find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle in the group graph (parent -> children), as a list of names, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in sorted(edges):
        if state.get(root):
            continue
        path: list[str] = [root]
        iters = [iter(sorted(edges.get(root, ())))]
        state[root] = 1
        while iters:
            child = next(iters[-1], None)
            if child is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            if state.get(child) == 1:
                return path[path.index(child) :] + [child]
            if not state.get(child):
                state[child] = 1
                path.append(child)
                iters.append(iter(sorted(edges.get(child, ()))))
    return None


def _check_text(path: Path) -> None:
    """An INI inventory is UTF-8 text (Ansible would read other bytes as odd host names)."""
    try:
        path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError(str(path), [f"cannot read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), [f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"]
        ) from exc


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
            if data:
                problems = _vars_problems(data, "variables")
                if problems:
                    raise InputError(str(f), problems)


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


def _resolve(
    path: Path, limit: str | None = None, extra_vars: Mapping[str, Any] | None = None
) -> dict[str, tuple[set[str], dict[str, Any]]]:
    """Each host's groups and variables, as ``ansible-inventory -i PATH --list`` has them
    (``--limit`` and ``-e`` applied as ansible-playbook applies them)."""
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
        if limit:
            manager.subset(limit)
        for host in manager.get_hosts():
            hostvars = variables.get_vars(host=host, include_hostvars=False, stage="all")
            for internal in C.INTERNAL_STATIC_VARS:
                hostvars.pop(internal, None)
            groups = {g.name for g in host.get_groups()} | {"all"}
            hostvars.update(extra_vars or {})  # extra vars win over everything, as in Ansible
            out[host.name] = (groups, {str(k): _native(v) for k, v in hostvars.items()})
    except AnsibleError as exc:
        raise InputError(shown, [_first_line(exc)]) from exc
    except RecursionError as exc:
        raise InputError(shown, ["groups or values nested too deep for Ansible"]) from exc
    except (TypeError, ValueError, KeyError, AttributeError, UnicodeError) as exc:
        # Ansible's own parsing failing on an input it does not expect: still the file's
        # problem, named in one line rather than a traceback
        raise InputError(
            shown, [f"Ansible cannot read this inventory: {type(exc).__name__}: {exc}"]
        ) from exc
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


def _shown(name: str) -> str:
    """A host name as it can be printed on one line (control characters escaped)."""
    return name if not _CONTROL.search(name) else repr(name)


def _connection_problems(variables: Mapping[str, Any]) -> list[str]:
    """``ansible_host`` and ``ansible_port``: the address becomes the URL clients load and
    an upstream's address in nginx.conf."""
    problems = []
    addr = variables.get("ansible_host")
    if isinstance(addr, str):
        try:
            check_address(addr)
        except ValueError as exc:
            problems.append(f"ansible_host: {exc}")
    elif addr is not None and type(addr).__name__ != "EncryptedString":
        problems.append(f"ansible_host: expected an address, got {type(addr).__name__}")
    port = variables.get("ansible_port")
    if port is not None and not (
        (isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535)
        or (isinstance(port, str) and port.isdigit() and 1 <= int(port) <= 65535)
    ):
        problems.append(f"ansible_port: {port!r} is not a port (1-65535)")
    return problems


def _build(path: Path, resolved: dict[str, tuple[set[str], dict[str, Any]]]) -> Inventory:
    from ansible.errors import AnsibleError

    shown = str(path)
    problems: list[str] = []
    hosts: dict[str, Host] = {}
    for hname in sorted(resolved):
        member, merged = resolved[hname]
        if _CONTROL.search(hname):
            problems.append(f"host {_shown(hname)}: control characters in the host name")
            continue
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
                msg = str(err["msg"]).removeprefix("Value error, ")
                if err["type"] == "extra_forbidden":
                    msg = "unknown variable"
                elif err["type"] == "enum":
                    got = err.get("input")
                    msg = f"unknown platform {got!r} (expected baremetal, libvirt, vsphere)"
                elif err["type"] == "finite_number":
                    msg = "must be a finite number (not .inf or .nan)"
                # a model-level problem (equal ports) names its fields in its message
                problems.append(
                    f"host {hname}: sizing_{loc}: {msg}" if loc else f"host {hname}: {msg}"
                )
            continue
        problems.extend(f"host {_shown(hname)}: {p}" for p in _connection_problems(merged))
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
