"""Inventories: Ansible inventories with ``sizing_*`` variables.

Ansible reads them (:mod:`sizing.inventory.sources`, :mod:`sizing.inventory.resolve`): its
InventoryManager takes a file (YAML, with or without a suffix, INI, an inventory plugin's
configuration) or a directory of them (groups defined in one file, used in another), or
several (repeated ``-i``, merged in order); it expands host ranges (``web[01:02]``), reads
``group_vars/`` and ``host_vars/``, runs the inventory plugins sizing reads (``constructed``,
vCenter's, libvirt's), decrypts ansible-vault values with Ansible's own vault secrets
(``ANSIBLE_VAULT_PASSWORD_FILE`` or ``vault_password_file`` in ansible.cfg) and templates
the variables sizing reads (``ansible_host: '{{ ... }}'``). Sizing reads no file itself: its
checks run on what Ansible loaded. What Ansible warns about (a duplicate YAML key, a file
of a directory no plugin could read) is a warning; a file named by ``-i`` that no plugin
could read is refused in one line. Only the hosts sizing uses have their variables read
and validated with pydantic, each problem one ``file: host X: field: message`` line; a host
outside its groups is listed as ignored, never a reason to refuse (a vaulted ``host_vars``
file of such a host needs no password). ansible-core is imported only when an inventory is
read, so commands that read none start fast.

Roles come from group membership: hosts in ``servers`` are measured, hosts in ``clients``
generate load, hosts in ``upstreams`` serve behind a proxy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sizing.errors import InputError
from sizing.inventory.model import (
    CONTROL,
    ROLE_GROUPS,
    CpuSpec,
    Host,
    HostVars,
    Inventory,
    check_address,
    is_loopback,
    short_connection,
)
from sizing.inventory.plugins import derive_plugin_vars
from sizing.model import Platform

__all__ = [
    "CpuSpec",
    "Host",
    "HostVars",
    "Inventory",
    "build_inventory",
    "load_inventory",
]


def load_inventory(
    path: Path | str | Sequence[Path | str],
    *,
    limit: str | None = None,
    extra_vars: Mapping[str, Any] | None = None,
) -> Inventory:
    """Read an inventory with Ansible and validate it, or raise :class:`InputError`.

    ``path``: a file (YAML with or without a suffix, INI, an inventory plugin's
    configuration) or a directory of them, as ``ansible -i`` takes it; or several, merged
    in order as repeated ``-i`` are. Ansible parses the files, ``group_vars/`` and
    ``host_vars/`` beside them, runs the inventory plugins sizing reads (constructed,
    vCenter, libvirt: :mod:`sizing.inventory.sources`), decrypts vault values with the
    secrets its configuration names and templates the variables sizing reads.
    ``limit``: Ansible host patterns (``--limit``), resolved by Ansible's InventoryManager;
    only the hosts they match are kept. ``extra_vars`` (``-e``) override every host's
    variables, as in ansible-playbook, before the ``sizing_*`` ones are validated.
    """
    from sizing.inventory.resolve import resolve

    paths = [Path(p) for p in ([path] if isinstance(path, str | Path) else path)]
    for p in paths:
        if not p.exists():
            raise InputError(str(p), ["no such inventory file"])
    resolved = resolve(paths, limit, extra_vars or {})
    if limit and not resolved.hosts:
        raise InputError(str(paths[0]), [f"--limit {limit}: matches no host of this inventory"])
    derive_plugin_vars(resolved)
    inv = build_inventory(
        paths[0], resolved.hosts, problems=resolved.problems, extra_vars=extra_vars or {}
    )
    return replace(inv, sources=tuple(paths), warnings=tuple(resolved.warnings))


def _shown(name: str) -> str:
    """A host name as it can be printed on one line (control characters escaped)."""
    return name if not CONTROL.search(name) else repr(name)


# The connections that reach a device's API or a Windows host, not a POSIX shell: nginx
# cannot be installed there and no load generator can run there.
API_CONNECTIONS = ("network_cli", "httpapi", "netconf")
WINDOWS_CONNECTIONS = ("winrm", "psrp")


def _connection_problems(
    hname: str,
    variables: Mapping[str, Any],
    roles: frozenset[str],
    extra_vars: Mapping[str, Any],
) -> list[str]:
    """``ansible_host`` (or its older alias ``ansible_ssh_host``) and the ports: the address
    becomes the URL clients load and an upstream's address in nginx.conf. A network
    device's API connection cannot be a server or a client. A variable given with ``-e`` is
    said once, about ``-e`` and without its value (a ``-e`` may be a secret); one from the
    inventory names the host and shows the value, as the file has it."""
    problems: list[tuple[str, str, str]] = []  # (variable, its line, the line for -e)
    for key in ("ansible_host", "ansible_ssh_host"):
        addr = variables.get(key)
        if isinstance(addr, str):
            try:
                check_address(addr)
            except ValueError as exc:
                problems.append((key, f"{key}: {exc}", "not an IP address or a host name"))
        elif addr is not None:
            why = f"expected an address, got {type(addr).__name__}"
            problems.append((key, f"{key}: {why}", why))
    for key in ("ansible_port", "ansible_ssh_port"):
        port = variables.get(key)
        if port is not None and not (
            (isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535)
            or (isinstance(port, str) and port.isdigit() and 1 <= int(port) <= 65535)
        ):
            why = "not a port (1-65535)"
            problems.append((key, f"{key}: {port!r} is {why}", why))
    conn = variables.get("ansible_connection")
    short = short_connection(conn) if isinstance(conn, str) else None
    if short in API_CONNECTIONS + WINDOWS_CONNECTIONS and roles & {"server", "client"}:
        role = "server" if "server" in roles else "client"
        what = "a Windows host" if short in WINDOWS_CONNECTIONS else "a network API"
        # nginx and the load generators run over a POSIX shell
        bare = f"{short}: {what}, no shell: neither a server nor a client"
        full = f"ansible_connection {conn}: {what}, no shell: not a {role}"
        problems.append(("ansible_connection", full, bare))
    return [
        f"-e {key}: {bare}" if key in extra_vars else f"host {_shown(hname)}: {full}"
        for key, full, bare in problems
    ]


def _sizing_problems(hname: str, exc: ValidationError, extra_vars: Mapping[str, Any]) -> list[str]:
    """One line per pydantic error; an error in a ``-e`` value is about ``-e``, not the
    host (the caller keeps one such line for every host it repeats on)."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown variable"
        elif err["type"] == "enum":
            known = ", ".join(p.value for p in Platform)
            msg = f"unknown platform {err.get('input')!r} (expected {known})"
        elif err["type"] == "finite_number":
            msg = "must be a finite number (not .inf or .nan)"
        top = f"sizing_{err['loc'][0]}" if err["loc"] else ""
        if top in extra_vars:
            # the validators quote the value they refuse: a -e value may be a secret
            given = err.get("input")
            if isinstance(given, str) and given:
                msg = msg.replace(f" {given!r}", "").replace(f"{given!r} ", "the value ")
                msg = msg.replace(given, "the value")
            out.append(f"-e sizing_{loc}: {msg}")
        elif loc:
            out.append(f"host {hname}: sizing_{loc}: {msg}")
        else:  # a model-level problem (equal ports) names its fields in its message
            out.append(f"host {hname}: {msg}")
    return out


def _used(resolved: Mapping[str, tuple[set[str], dict[str, Any]]]) -> set[str]:
    """The hosts sizing uses: in a role group, or the hypervisor a used guest names."""
    used = {n for n, (groups, _) in resolved.items() if groups & ROLE_GROUPS.keys()}
    named = {
        str(vm.get("hypervisor"))
        for n in used
        if isinstance(vm := resolved[n][1].get("sizing_vm"), dict)
    }
    return used | (named & resolved.keys())


def build_inventory(
    path: Path,
    resolved: dict[str, tuple[set[str], dict[str, Any]]],
    *,
    problems: Mapping[str, list[str]] | None = None,
    extra_vars: Mapping[str, Any] | None = None,
) -> Inventory:
    """Validate the hosts sizing uses (their ``sizing_*`` and connection variables, as
    Ansible resolved them) into an :class:`Inventory`; every other host is listed as
    ignored, never validated. ``problems``: per host, the variables that could not be
    resolved."""
    shown = str(path)
    lines: list[str] = []
    hosts: dict[str, Host] = {}
    used = _used(resolved)
    ignored = {n: tuple(sorted(g)) for n, (g, _) in resolved.items() if n not in used}
    for hname in sorted(used):
        member, merged = resolved[hname]
        if CONTROL.search(hname):
            lines.append(f"host {_shown(hname)}: control characters in the host name")
            continue
        lines += [f"host {_shown(hname)}: {p}" for p in (problems or {}).get(hname, [])]
        sizing_raw = {k[len("sizing_") :]: v for k, v in merged.items() if k.startswith("sizing_")}
        try:
            host_sizing = HostVars.model_validate(sizing_raw)
        except ValidationError as exc:
            lines += [p for p in _sizing_problems(hname, exc, extra_vars or {}) if p not in lines]
            continue
        roles = frozenset(ROLE_GROUPS[g] for g in member if g in ROLE_GROUPS)
        conn = _connection_problems(hname, merged, roles, extra_vars or {})
        lines += [p for p in conn if p not in lines]
        hosts[hname] = Host(
            name=hname,
            roles=roles,
            groups=tuple(sorted(member)),
            sizing=host_sizing,
            variables=merged,
        )
    if not lines:
        lines = _inventory_problems(hosts)
    if lines:
        raise InputError(shown, lines)
    return Inventory(path=path, hosts=hosts, ignored=ignored)


def _inventory_problems(hosts: Mapping[str, Host]) -> list[str]:
    """A server and a client at least, and no machine named twice as a server: two
    servers are one machine when clients load them at the same address and port (their
    SSH endpoints may differ, as Vagrant's port forwards do)."""
    if not any("server" in h.roles for h in hosts.values()):
        return ["no server host: put at least one host in the 'servers' group"]
    if not any("client" in h.roles for h in hosts.values()):
        return ["no client host: put at least one host in the 'clients' group"]
    lines = []
    seen: dict[tuple[str, int], str] = {}
    for h in hosts.values():
        # loopback servers: said by --plan and the pre-flight with the other problems
        # (sizing.plan.preflight.same_address, check_reach)
        if "server" not in h.roles or is_loopback(h.address):
            continue
        ident = (h.address.lower(), h.sizing.http_port)
        if ident in seen:
            lines.append(
                f"host {h.name}: duplicate host: clients would load it at {h.address} port "
                f"{h.sizing.http_port}, as {seen[ident]}; give each server the address its "
                "clients reach it at (sizing_address)"
            )
        seen[ident] = h.name
    return lines
