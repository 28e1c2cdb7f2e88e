"""Reading an inventory through Ansible: its loaders pick the format (a directory, INI, YAML
with or without a suffix), its vault secrets decrypt, and its templating resolves the
variables sizing uses, host by host, as a play would see them.

Only the hosts sizing uses (the ``servers``, ``clients`` and ``upstreams`` groups, and the
hypervisors their guests name) are templated: a host outside them is never a reason to
refuse an inventory. ansible-core is imported here only when an inventory is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing.errors import InputError
from sizing.inventory.model import ROLE_GROUPS
from sizing.inventory.readers import ansible_loader, quick_vars
from sizing.inventory.sources import kept_display, load_sources

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader

__all__ = ["Resolved", "VAULT_HINT", "first_line", "resolve"]

# The connection variables sizing reads, with the older ssh aliases Vagrant still writes.
CONNECTION_VARS = (
    "ansible_host",
    "ansible_ssh_host",
    "ansible_port",
    "ansible_ssh_port",
    "ansible_connection",
    "ansible_user",
    "ansible_ssh_user",
)
VAULT_HINT = (
    "give the vault password with ANSIBLE_VAULT_PASSWORD_FILE or vault_password_file in ansible.cfg"
)


@dataclass
class Resolved:
    """Each host's groups and variables (the used ones templated), and per host the
    variables that could not be resolved, one line each."""

    hosts: dict[str, tuple[set[str], dict[str, Any]]] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # Ansible's, one line each
    plugins: dict[str, str] = field(default_factory=dict)  # host -> the plugin that added it
    plugin_configs: dict[str, Any] = field(default_factory=dict)  # plugin -> configuration


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Ansible's carry context after it)."""
    text = str(getattr(exc, "message", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def setup_vault(loader: DataLoader) -> None:
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
        raise InputError(str(where), [f"vault password: {first_line(exc)}"]) from exc
    # EncryptedString values decrypt through this process-wide context when read.
    current = VaultSecretsContext.current(optional=True)
    if current is None:
        VaultSecretsContext.initialize(VaultSecretsContext(secrets))
    else:
        current.secrets = secrets


def resolve(
    sources: Sequence[Path],
    limit: str | None = None,
    extra_vars: Mapping[str, Any] | None = None,
) -> Resolved:
    """Each host's groups and variables, as ``ansible-inventory -i A -i B --list`` has them
    (``--limit`` and ``-e`` applied as ansible-playbook applies them), with the variables
    sizing reads templated for the hosts it uses. Only those hosts' variables are read: a
    vaulted ``host_vars`` file of a host sizing ignores needs no password."""
    from ansible.errors import AnsibleError
    from ansible.vars.manager import VariableManager

    shown = str(sources[0])
    loader = ansible_loader()()
    setup_vault(loader)
    try:
        loaded = load_sources(loader, sources)
        manager = loaded.manager
        variables = VariableManager(loader=loader, inventory=manager)
        if limit:
            manager.subset(limit)
        warnings = list(loaded.warnings)
        with quick_vars(), kept_display(warnings, lambda _msg, _exc: None):
            out = _read_hosts(loader, manager.get_hosts(), variables, extra_vars or {})
        for p in sources:  # the files as the user named them
            warnings = [w.replace(str(p.resolve()), str(p)) for w in warnings]
        out.warnings = warnings
        out.plugins = {h: o.plugin for o in loaded.outcomes if o.plugin for h in o.hosts}
        out.plugin_configs = {o.plugin: _native(o.config) for o in loaded.outcomes if o.plugin}
        return out
    except AnsibleError as exc:
        if "vault password" in first_line(exc).lower() or "vault secrets" in str(exc).lower():
            files = ", ".join(str(f) for p in sources for f in _vault_files(p)) or "a vars file"
            raise InputError(
                shown,
                [f"cannot decrypt the vault-encrypted {files} (no vault password); {VAULT_HINT}"],
            ) from exc
        raise InputError(shown, [first_line(exc)]) from exc
    except RecursionError as exc:
        raise InputError(shown, ["groups or values nested too deep for Ansible"]) from exc
    except (TypeError, ValueError, KeyError, AttributeError, UnicodeError) as exc:
        # Ansible's own parsing failing on an input it does not expect: still the file's
        # problem, named in one line rather than a traceback
        raise InputError(
            shown, [f"Ansible cannot read this inventory: {type(exc).__name__}: {exc}"]
        ) from exc


def _vault_files(path: Path) -> list[Path]:
    """The whole-file vaults of the ``group_vars/`` and ``host_vars/`` Ansible reads."""
    base = path if path.is_dir() else path.parent
    found = []
    for sub in ("group_vars", "host_vars"):
        for f in sorted((base / sub).rglob("*")) if (base / sub).is_dir() else []:
            try:
                if f.is_file() and f.read_bytes()[:14] == b"$ANSIBLE_VAULT":
                    found.append(f)
            except OSError:
                continue
    return found


def _read_hosts(
    loader: DataLoader, hosts: list[Any], variables: Any, extra_vars: Mapping[str, Any]
) -> Resolved:
    """Every host's groups; the variables of the hosts sizing uses (in a role group, or
    the hypervisor a used guest names), templated where they need it."""
    out = Resolved()
    by_name = {}
    for host in hosts:
        by_name[host.name] = host
        out.hosts[host.name] = ({g.name for g in host.get_groups()} | {"all"}, {})
    used = [n for n, (g, _) in out.hosts.items() if g & ROLE_GROUPS.keys()]
    every = {n: _host_vars(by_name[n], variables, extra_vars, out) for n in used}
    for name in used:
        _template_host(loader, name, every[name], out)
    # the hypervisors the used guests live on are used too (libvirt's sizing_vm)
    named = {
        str(vm.get("hypervisor"))
        for n in used
        if isinstance(vm := out.hosts[n][1].get("sizing_vm"), dict)
    }
    for name in sorted(named & out.hosts.keys() - set(used)):
        every[name] = _host_vars(by_name[name], variables, extra_vars, out)
        _template_host(loader, name, every[name], out)
    return out


def _host_vars(
    host: Any, variables: Any, extra_vars: Mapping[str, Any], out: Resolved
) -> dict[str, Any]:
    """One host's variables as a play sees them (magic variables included, returned), and
    the plain ones in ``out`` (what ``ansible-inventory --list`` shows)."""
    from ansible import constants as C

    full = variables.get_vars(host=host, include_hostvars=False, stage="all")
    full.update(extra_vars)  # extra vars win over everything, as in Ansible
    shown = {k: v for k, v in full.items() if k not in C.INTERNAL_STATIC_VARS}
    for k in list(shown):
        why = _oversized(shown[k])
        if why:  # YAML aliases multiply a value; Ansible keeps them as references
            out.problems.setdefault(host.name, []).append(f"{k}: {why}")
            del shown[k], full[k]
    out.hosts[host.name][1].update({str(k): _native(v) for k, v in shown.items()})
    return dict(full)


MAX_DEPTH = 64  # a value within values
MAX_NODES = 200_000  # values in one variable, an alias counted each time it is used


def _oversized(value: Any) -> str | None:
    """Why a variable is too big to read (too deep, or too many values through aliases),
    counted without recursion; None for the others."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 0
    while stack:
        v, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return f"more than {MAX_NODES} values (YAML aliases?)"
        if depth > MAX_DEPTH:
            return f"values nested deeper than {MAX_DEPTH} levels"
        if isinstance(v, Mapping):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list | tuple):
            stack.extend((x, depth + 1) for x in v)
    return None


def _template_host(loader: DataLoader, name: str, full: dict[str, Any], out: Resolved) -> None:
    """Template the connection and ``sizing_*`` variables of one host in place; a value
    that cannot be resolved (undefined, or vaulted without the password) is one line."""
    from ansible.errors import AnsibleError
    from ansible.template import Templar

    templar: Templar | None = None  # built only for a host that has something to resolve
    shown = out.hosts[name][1]
    for key in [k for k in shown if k in CONNECTION_VARS or k.startswith("sizing_")]:
        if not _needs_templar(full[key]):
            continue
        templar = templar or Templar(loader=loader, variables=full)
        try:
            shown[key] = _native(templar.template(full[key]), reveal=True)
        except AnsibleError as exc:
            out.problems.setdefault(name, []).append(f"{key}: {_why(exc)}")
            shown.pop(key)


def _needs_templar(value: Any) -> bool:
    """A value with a template or a vault value in it (most have neither: reading them as
    they are keeps a 3,000-host inventory fast)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v).__name__ == "EncryptedString":
            return True
        if isinstance(v, str):
            if "{{" in v or "{%" in v or "{#" in v:
                return True
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return False


def _why(exc: BaseException) -> str:
    """Why a value could not be resolved, in one line: the undefined variable it names, or
    a missing vault password and how to give it."""
    from ansible.errors import AnsibleUndefinedVariable

    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__)
    for e in chain:
        if isinstance(e, AnsibleUndefinedVariable):
            found = _UNDEFINED.search(first_line(e))
            name = found.group(1) if found else first_line(e)
            return f"undefined variable {name!r}"
    if any(type(e).__name__.startswith("AnsibleVault") for e in chain) or any(
        "vault secrets" in first_line(e).lower() or "decrypt" in first_line(e).lower()
        for e in chain
    ):
        return f"cannot decrypt the ansible-vault value (no vault password); {VAULT_HINT}"
    return f"cannot be resolved: {first_line(exc).removeprefix('Error rendering template: ')}"


_UNDEFINED = re.compile(r"'([^']+)' is undefined")


def _native(value: Any, *, reveal: bool = False) -> Any:
    """Plain Python values instead of Ansible's tagged ones. Vault values stay encrypted
    unless ``reveal`` (a templated value: Ansible has already decrypted what it used)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if type(value).__name__ == "EncryptedString" and not reveal:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {_native(k): _native(v, reveal=reveal) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_native(v, reveal=reveal) for v in value]
    return value
