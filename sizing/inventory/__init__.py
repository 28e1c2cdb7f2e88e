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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from sizing.errors import InputError

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader

from sizing.inventory.model import (
    CONTROL,
    ROLE_GROUPS,
    YAML_SUFFIXES,
    CpuSpec,
    Host,
    HostVars,
    Inventory,
    check_address,
)
from sizing.inventory.shape import check_text, check_vars_dirs, check_yaml_inventory

__all__ = [
    "CpuSpec",
    "Host",
    "HostVars",
    "Inventory",
    "build_inventory",
    "load_inventory",
]


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
        check_yaml_inventory(path)
    else:
        check_text(path)
    check_vars_dirs(path.parent)
    resolved = _resolve(path, limit, extra_vars or {})
    if limit and not resolved:
        raise InputError(shown, [f"--limit {limit}: matches no host of this inventory"])
    return build_inventory(path, resolved)


# -- strict checks before Ansible reads the files -------------------------------------


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
    return name if not CONTROL.search(name) else repr(name)


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


def build_inventory(path: Path, resolved: dict[str, tuple[set[str], dict[str, Any]]]) -> Inventory:
    from ansible.errors import AnsibleError

    shown = str(path)
    problems: list[str] = []
    hosts: dict[str, Host] = {}
    for hname in sorted(resolved):
        member, merged = resolved[hname]
        if CONTROL.search(hname):
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
