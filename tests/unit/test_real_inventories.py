"""Real-world inventories (tests/data/inventories/real, sources in its README), read by
sizing and by Ansible's own tools, offline.

Each inventory is read in a process without a network (``unshare -n``): by sizing
(roles, load address, connection of every host it uses) and by ``ansible-inventory
--list`` (the groups) and ``ansible -m debug`` (the templated, decrypted ``ansible_host``
or ``ansible_ssh_host`` and ``ansible_connection``, as a play sees them); the two views
must agree. ``debug`` runs on the controller and contacts no host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.offline import check_offline, unshare_n

REAL = Path(__file__).parent.parent / "data" / "inventories" / "real"
BIN = Path(sys.executable).parent
PASSWORD = REAL / "vault-password.txt"
CASES = [
    "kubespray/inventory.ini",
    "ansible-for-devops/inventory",
    "homelab/hosts",
    "vagrant/vagrant_ansible_inventory",
    "ranges/hosts.ini",
    "inventory-dir",
    "ansible-examples-yaml/hosts.yaml",
    "openshift-ansible/40_basic_inventory.ini",
    "lamp-infrastructure/inventory",
    "kolla-multinode/multinode",
    "fedora-dir",  # INI files whose groups span files
]
ROLE_GROUPS = {"servers": "server", "clients": "client", "upstreams": "upstream"}

_SIZING_VIEW = """
import json, sys
from sizing.inventory import load_inventory
inv = load_inventory(sys.argv[1])
print(json.dumps({
    "hosts": {h.name: {"roles": sorted(h.roles), "address": h.address,
                       "connection": h.connection} for h in inv.hosts.values()},
    "ignored": sorted(inv.ignored),
}))
"""
# What a play sees: ansible_ssh_host wins over ansible_host (Ansible's ssh connection
# reads both, the last one found winning), the host's name when neither is set. One task on
# the controller reads every host of sizing's groups through ``hostvars``, which Ansible
# templates (and decrypts) in that host's own context: one fork, not one per host.
_DEBUG_ARGS = json.dumps(
    {
        "msg": "{% set out = {} %}"
        "{% for h in (groups.get('servers', []) + groups.get('clients', [])"
        " + groups.get('upstreams', [])) | unique %}{% set v = hostvars[h] %}"
        "{% set _ = out.update({h: {"
        "'host': v.ansible_ssh_host | default(v.ansible_host) | default(h),"
        " 'connection': v.ansible_connection | default('ssh'),"
        " 'sizing_address': v.sizing_address | default('')}}) %}"
        "{% endfor %}{{ out | to_json }}"
    }
)


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_VAULT_PASSWORD_FILE": str(PASSWORD),
        "ANSIBLE_DEPRECATION_WARNINGS": "False",
        "ANSIBLE_NOCOLOR": "1",
    }


def _offline(argv: list[str]) -> str:
    proc = subprocess.run(
        [unshare_n(), "-n", *argv], capture_output=True, text=True, env=_env(), timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _members(listing: dict[str, Any], group: str) -> set[str]:
    """The hosts of a group and of its children, from ``ansible-inventory --list``."""
    body = listing.get(group, {})
    hosts = set(body.get("hosts", []))
    for child in body.get("children", []):
        hosts |= _members(listing, child)
    return hosts


def _played(path: Path) -> dict[str, dict[str, str]]:
    """``ansible -m debug`` over the hosts in sizing's groups: their address and
    connection, templated and decrypted by Ansible."""
    out = _offline(
        [
            str(BIN / "ansible"),
            "localhost",
            "-i",
            str(path),
            "-o",
            "-m",
            "ansible.builtin.debug",
            "-a",
            _DEBUG_ARGS,
        ]
    )
    for line in out.splitlines():
        name, sep, rest = line.partition(" | SUCCESS => ")
        if sep and name == "localhost":
            seen: dict[str, dict[str, str]] = json.loads(json.loads(rest)["msg"])
            return seen
    raise AssertionError(f"ansible printed no result for localhost:\n{out}")


@pytest.mark.parametrize("case", CASES)
def test_sizing_sees_each_host_as_ansible_does(case: str) -> None:
    path = REAL / case
    env_code = f"import os; os.environ['ANSIBLE_VAULT_PASSWORD_FILE'] = {str(PASSWORD)!r}\n"
    ours = json.loads(check_offline(env_code + _SIZING_VIEW, str(path)))
    listing = json.loads(_offline([str(BIN / "ansible-inventory"), "-i", str(path), "--list"]))
    roles: dict[str, set[str]] = {}
    for group, role in ROLE_GROUPS.items():
        for host in _members(listing, group):
            roles.setdefault(host, set()).add(role)
    every = set(listing["_meta"]["hostvars"]) | _members(listing, "all")
    assert set(ours["hosts"]) == set(roles), case  # no hypervisor among these
    assert set(ours["ignored"]) == every - set(roles), case
    played = _played(path)
    assert set(played) == set(roles), case
    for name, mine in ours["hosts"].items():
        theirs = played[name]
        assert set(mine["roles"]) == roles[name], (case, name)
        assert mine["connection"] == theirs["connection"], (case, name)
        expected = theirs["sizing_address"] or (
            "127.0.0.1" if theirs["connection"] == "local" else theirs["host"]
        )
        assert mine["address"] == expected, (case, name)


def test_the_templated_and_vaulted_addresses_are_resolved() -> None:
    """The cases the comparison must cover are there (it cannot pass on plain files)."""
    env_code = f"import os; os.environ['ANSIBLE_VAULT_PASSWORD_FILE'] = {str(PASSWORD)!r}\n"
    homelab = json.loads(check_offline(env_code + _SIZING_VIEW, str(REAL / "homelab/hosts")))
    assert homelab["hosts"]["web1"]["address"] == "192.0.2.31"  # vault, through a template
    assert homelab["hosts"]["web2"]["address"] == "web2.internal.example.com"
    assert homelab["hosts"]["web3"]["address"] == "2001:db8::30"
    assert homelab["hosts"]["load1"]["connection"] == "ssh"  # a templated connection
    assert homelab["ignored"] == ["db1", "pve1"]  # db1's address cannot be resolved
    vagrant = json.loads(
        check_offline(_SIZING_VIEW, str(REAL / "vagrant/vagrant_ansible_inventory"))
    )
    assert vagrant["hosts"]["load1"]["address"] == "127.0.0.1"  # ansible_ssh_host


_VARIABLES = """
import json, sys
from sizing.inventory import load_inventory
inv = load_inventory(sys.argv[1])
print(json.dumps({
    "hosts": {h.name: {k: v for k, v in h.variables.items() if type(v) in (str, int, bool)}
              for h in inv.hosts.values()},
    "ignored": sorted(inv.ignored),
}))
"""


def test_the_public_inventories_bring_their_variables() -> None:
    """What the public files add is read as Ansible reads it: YAML ranges and a child
    group's parent vars, INI ``:vars`` with quotes and booleans, a ``group_vars/all/``
    directory beside an INI file."""

    def seen(case: str) -> dict[str, Any]:
        return dict(json.loads(check_offline(_VARIABLES, str(REAL / case))))

    yaml = seen("ansible-examples-yaml/hosts.yaml")
    assert sorted(yaml["hosts"]) == [
        "192.168.1.100",
        "192.168.1.110",
        "alpha.example.org",
        "beta.example.org",
        "www001.example.com",
        "www002.example.com",
    ]
    assert yaml["ignored"][-4:] == [f"www00{i}.example.com" for i in range(3, 7)]
    assert "green.example.com" in yaml["ignored"]  # its ansible_ssh_host is never read
    assert yaml["hosts"]["alpha.example.org"]["testing1"] == "value1"  # webservers < testing
    assert {h["commontoall"] for h in yaml["hosts"].values()} == {"thisvar"}
    worker = seen("openshift-ansible/40_basic_inventory.ini")["hosts"][
        "mycluster-worker-0.example.com"
    ]
    assert worker["ansible_become"] is True and worker["ansible_ssh_user"] == "centos"
    assert worker["openshift_install_config_path"] == "~/install-config-ansible.yml"
    lamp = seen("lamp-infrastructure/inventory")
    assert lamp["hosts"]["192.168.2.3"]["ansible_ssh_user"] == "vagrant"
    assert lamp["ignored"] == ["192.168.2.5", "192.168.2.6", "192.168.2.7"]
    kubespray = seen("kubespray/inventory.ini")["hosts"]
    assert {h["loadbalancer_apiserver_port"] for h in kubespray.values()} == {6443}


# -- what a user is told, each case offline ---------------------------------------------

_REFUSAL = """
import os, sys
from sizing.errors import InputError
from sizing.extravars import parse_extra_vars
from sizing.inventory import load_inventory
try:
    load_inventory(sys.argv[1], extra_vars=parse_extra_vars(sys.argv[2:]))
except InputError as exc:
    print(exc)
else:
    print("accepted")
"""


def _refusal(path: Path, *extra: str, password: bool = False) -> str:
    code = _REFUSAL
    if password:
        code = f"import os; os.environ['ANSIBLE_VAULT_PASSWORD_FILE'] = {str(PASSWORD)!r}\n" + code
    return check_offline(code, str(path), *extra).strip()


def test_a_vaulted_address_without_the_password_is_one_line(tmp_path: Path) -> None:
    """An inline ``!vault`` address names its host and variable; a whole vaulted vars file
    (Ansible cannot read any host's variables without it) names the file."""
    path = REAL / "homelab" / "hosts"
    vault = path.parent / "group_vars" / "all" / "vault"
    hint = "give the vault password with ANSIBLE_VAULT_PASSWORD_FILE or vault_password_file"
    assert _refusal(path) == (
        f"{path}: cannot decrypt the vault-encrypted {vault} (no vault password); {hint} "
        "in ansible.cfg"
    )
    inline = subprocess.run(
        [str(BIN / "ansible-vault"), "encrypt_string", "--name", "ansible_host", "192.0.2.10"],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    ).stdout
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "host_vars" / "web1.yml").write_text(inline)
    inv = tmp_path / "hosts"
    inv.write_text("[servers]\nweb1\n[clients]\nload1 ansible_host=192.0.2.20\n")
    assert _refusal(inv) == (
        f"{inv}: host web1: ansible_host: cannot decrypt the ansible-vault value (no vault "
        f"password); {hint} in ansible.cfg"
    )


def test_a_vaulted_address_is_validated_after_decryption(tmp_path: Path) -> None:
    inline = subprocess.run(
        [str(BIN / "ansible-vault"), "encrypt_string", "--name", "ansible_host", "evil;host {"],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    ).stdout
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "host_vars" / "web1.yml").write_text(inline)
    inv = tmp_path / "hosts"
    inv.write_text("[servers]\nweb1\n[clients]\nload1 ansible_host=192.0.2.20\n")
    text = _refusal(inv, password=True)
    assert text.startswith(f"{inv}: host web1: ansible_host: ")
    assert "evil" in text and "accepted" not in text


def test_vagrant_servers_behind_port_forwards_are_one_address(tmp_path: Path) -> None:
    """As Vagrant writes it: two servers at 127.0.0.1 (SSH ports 2222 and 2200) are the
    clients' one loopback, not two machines, until each gets a sizing_address: ``--plan``
    says so and exits 4. Two servers at one non-loopback address and port are refused as
    the inventory is read."""
    src = (REAL / "vagrant" / "vagrant_ansible_inventory").read_text()
    inv = tmp_path / "vagrant_ansible_inventory"
    inv.write_text(
        src.replace(" sizing_address=192.168.56.11", "").replace(
            " sizing_address=192.168.56.12", ""
        )
    )
    code, _, out = check_offline(_PLAN, str(inv), str(tmp_path / "x.sqlite")).partition("\n")
    assert code == "4"
    assert json.loads(out)["preflight"] == [
        "web1 and web2 are the same machine (this machine (loopback)), loaded at port 8080: "
        "name it once in the inventory, or two servers would share its CPUs and its ports"
    ]
    inv.write_text(src.replace("192.168.56.12", "192.168.56.11"))
    assert _refusal(inv) == (
        f"{inv}: host web2: duplicate host: clients would load it at 192.168.56.11 port 8080, "
        "as web1; give each server the address its clients reach it at (sizing_address)"
    )


def test_a_network_device_is_not_a_server(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        "[servers]\nrouter1 ansible_host=192.0.2.1 ansible_connection=network_cli\n"
        "web1 ansible_host=192.0.2.10\n[clients]\nload1 ansible_host=192.0.2.20\n"
    )
    assert _refusal(inv) == (
        f"{inv}: host router1: ansible_connection network_cli: a network API, no shell: not a"
        " server"
    )


def test_a_bad_extra_var_is_one_line_about_e() -> None:
    path = REAL / "ranges" / "hosts.ini"
    assert _refusal(path, "-e", "sizing_cpu=abc") == (
        f"{path}: -e sizing_cpu: Input should be a valid dictionary or instance of CpuSpec"
    )


_PLAN = """
import sys
from typer.testing import CliRunner
from sizing.cli import app
res = CliRunner().invoke(app, ["run", "-i", sys.argv[1], "--cores", "1", "--profile", "rps",
                               "--plan", "--json", "--db", sys.argv[2]])
print(res.exit_code)
print(res.stdout)
"""


@pytest.mark.parametrize("local", [True, False])
def test_a_remote_client_is_never_aimed_at_its_own_loopback(tmp_path: Path, local: bool) -> None:
    """A server over ``ansible_connection: local`` (or at a loopback ``ansible_host``) and
    a client reached over SSH: ``--plan`` refuses, naming the fix; with a sizing_address
    the clients reach, the plan is clean."""
    server = "ansible_connection: local" if local else "ansible_host: 127.0.0.1"
    inv = tmp_path / "inv.yml"
    text = (
        "all:\n  children:\n    servers:\n      hosts:\n        web:\n"
        f"          {server}\n"
        "          sizing_cpu: {sockets: 1, cores_per_socket: 2}\n"
        "    clients:\n      hosts:\n        load1:\n          ansible_host: 192.0.2.20\n"
        "          sizing_cpu: {sockets: 1, cores_per_socket: 4}\n"
    )
    inv.write_text(text)
    code, _, out = check_offline(_PLAN, str(inv), str(tmp_path / "x.sqlite")).partition("\n")
    doc = json.loads(out)
    assert code == "4"
    why = "ansible_connection: local" if local else "ansible_host 127.0.0.1"
    assert doc["preflight"] == [
        f"web: clients load it at 127.0.0.1 ({why}), but client load1 (over ssh, at "
        "192.0.2.20) would load its own loopback; give web an address the clients reach "
        "(sizing_address), or load it from a client on the same machine"
    ]
    inv.write_text(text.replace(server, f"{server}\n          sizing_address: 192.0.2.10"))
    code, _, out = check_offline(_PLAN, str(inv), str(tmp_path / "x.sqlite")).partition("\n")
    assert code == "0" and json.loads(out)["preflight"] == []
