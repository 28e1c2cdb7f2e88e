"""Inventories as Ansible reads them (issue 47): sizing reads no file itself, so what Ansible
reads sizing reads: a directory whose INI groups span files, a ``constructed`` plugin
configuration, repeated ``-i``; what Ansible only warns about is a warning; what cannot be
measured (a cloud's inventory plugin, Windows and network-device connections) is refused in
one line; every line of ``inventory check`` and ``run --plan`` fits 100 columns.

Each case runs in a child Python without a network (``unshare -n``): the inventories name
documentation addresses (192.0.2.x, *.example) that are never to be contacted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.offline import check_offline, unshare_n

DATA = Path(__file__).parent.parent / "data" / "inventories"
REAL = DATA / "real"
PASSWORD = REAL / "vault-password.txt"
BIN = Path(sys.executable).parent

# `sizing ARGV...` in-process, offline; prints the exit code, then stdout, then stderr
_CLI = """
import sys
from typer.testing import CliRunner
from sizing.cli import app
res = CliRunner().invoke(app, sys.argv[1:])
print(res.exit_code)
print(res.stdout, end="")
print("--stderr--")
print(res.stderr, end="")
"""


def sizing(*argv: str, password: bool = False) -> tuple[int, str, str]:
    code = _CLI
    if password:
        code = f"import os; os.environ['ANSIBLE_VAULT_PASSWORD_FILE'] = {str(PASSWORD)!r}\n" + code
    got = check_offline(code, *argv)
    first, _, rest = got.partition("\n")
    out, _, err = rest.partition("--stderr--\n")
    return int(first), out, err


def listing(*paths: Path) -> dict[str, object]:
    argv = [str(BIN / "ansible-inventory")]
    for p in paths:
        argv += ["-i", str(p)]
    proc = subprocess.run(
        [unshare_n(), "-n", *argv, "--list"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "ANSIBLE_DEPRECATION_WARNINGS": "False"},
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def _members(doc: dict[str, object], group: str) -> set[str]:
    body = doc.get(group) or {}
    assert isinstance(body, dict)
    hosts = set(body.get("hosts", []))
    for child in body.get("children", []):
        hosts |= _members(doc, child)
    return hosts


def _check_json(*paths: Path) -> dict[str, object]:
    argv = ["inventory", "check", "--json"]
    for p in paths:
        argv += ["-i", str(p)]
    code, out, err = sizing(*argv)
    assert code == 0, err
    return dict(json.loads(out))


def _same_as_ansible(*paths: Path) -> dict[str, object]:
    """sizing's servers, clients and ignored hosts are Ansible's."""
    ours = _check_json(*paths)
    theirs = listing(*paths)
    hosts = ours["hosts"]
    assert isinstance(hosts, list)
    servers = {h["name"] for h in hosts if "server" in h["roles"]}
    clients = {h["name"] for h in hosts if "client" in h["roles"]}
    assert servers == _members(theirs, "servers")
    assert clients == _members(theirs, "clients")
    ignored = ours["ignored"]
    assert isinstance(ignored, list)
    assert {i["name"] for i in ignored} == _members(theirs, "all") - servers - clients
    return ours


def test_a_directory_whose_ini_groups_span_files(tmp_path: Path) -> None:
    """The docs' servers/clients file beside the user's own hosts file: its groups name
    groups of the other file (sizing once refused it: "Section [servers:children] includes
    undefined group 'web'")."""
    (tmp_path / "hosts").write_text(
        "[web]\nweb1 ansible_host=192.0.2.11\nweb2 ansible_host=192.0.2.12\n\n"
        "[load]\nload1 ansible_host=192.0.2.21\n\n[db]\ndb1 ansible_host=192.0.2.31\n"
    )
    (tmp_path / "sizing").write_text("[servers:children]\nweb\n\n[clients:children]\nload\n")
    ours = _same_as_ansible(tmp_path)
    assert [i["name"] for i in ours["ignored"]] == ["db1"]  # type: ignore[index]


def test_the_fedora_like_directory_reads_as_ansible_reads_it() -> None:
    """340 hosts in files whose groups name each other's, a duplicate key in a host_vars
    file of a host sizing ignores (never read), the user's servers/clients file last."""
    ours = _same_as_ansible(REAL / "fedora-dir")
    assert len(ours["hosts"]) == 41  # type: ignore[arg-type]


def test_repeated_i_are_merged_in_order(tmp_path: Path) -> None:
    (tmp_path / "hosts.ini").write_text("[web]\nweb1 ansible_host=192.0.2.11\n[load]\nload1\n")
    (tmp_path / "sizing.ini").write_text(
        "[servers:children]\nweb\n[clients:children]\nload\n[web:vars]\nsizing_http_port=8200\n"
    )
    ours = _same_as_ansible(tmp_path / "hosts.ini", tmp_path / "sizing.ini")
    assert sorted(h["name"] for h in ours["hosts"]) == ["load1", "web1"]  # type: ignore[attr-defined]


def test_a_constructed_configuration_makes_the_groups(tmp_path: Path) -> None:
    (tmp_path / "10-hosts.yml").write_text(
        "all:\n  hosts:\n"
        "    web1: {ansible_host: 192.0.2.11, tier: web}\n"
        "    web2: {ansible_host: 192.0.2.12, tier: web}\n"
        "    load1: {ansible_host: 192.0.2.21, tier: load}\n"
        "    db1: {ansible_host: 192.0.2.31, tier: db}\n"
    )
    (tmp_path / "20-constructed.yml").write_text(
        "plugin: ansible.builtin.constructed\nstrict: true\n"
        "groups:\n  servers: tier == 'web'\n  clients: tier == 'load'\n"
    )
    ours = _same_as_ansible(tmp_path)
    assert sorted(h["name"] for h in ours["hosts"]) == ["load1", "web1", "web2"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("plugin", "expected"),
    [
        (
            "amazon.aws.aws_ec2",
            "inventory plugin amazon.aws.aws_ec2 needs a cloud (sizing reads files, vCenter,"
            " libvirt)",
        ),
        ("no.such.plugin", "inventory plugin no.such.plugin needs a cloud"),
    ],
)
def test_a_plugin_that_cannot_run_offline_is_one_line(
    tmp_path: Path, plugin: str, expected: str
) -> None:
    (tmp_path / "hosts.yml").write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web1: {ansible_host: 192.0.2.1}\n"
        "    clients:\n      hosts:\n        load1: {ansible_host: 192.0.2.2}\n"
    )
    config = tmp_path / "cloud.aws_ec2.yml"
    config.write_text(f"plugin: {plugin}\nregions: [eu-west-1]\n")
    code, out, err = sizing("inventory", "check", str(tmp_path))
    assert code == 3, err
    assert err.startswith(f"error: {config}: {expected}") and err.count("\n") == 1


def test_ansible_tolerance_on_ignored_hosts_never_stops_sizing(tmp_path: Path) -> None:
    """A duplicate YAML key is Ansible's warning (the last value kept); a whole-file vault
    of a host sizing ignores needs no password: its variables are never read."""
    (tmp_path / "hosts.yml").write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web1: {ansible_host: 192.0.2.1}\n"
        "    clients:\n      hosts:\n        load1: {ansible_host: 192.0.2.2}\n"
        "    bastion:\n      hosts:\n        jump1:\n"
        "          ansible_host: 192.0.2.8\n          ansible_host: 192.0.2.9\n"
        "        vaulted1:\n"
    )
    (tmp_path / "host_vars").mkdir()
    secret = tmp_path / "host_vars" / "vaulted1.yml"
    secret.write_text("ansible_become_password: s3cret\n")
    subprocess.run(
        [
            str(BIN / "ansible-vault"),
            "encrypt",
            "--vault-password-file",
            str(PASSWORD),
            str(secret),
        ],
        check=True,
        capture_output=True,
    )
    code, out, err = sizing("inventory", "check", str(tmp_path))
    assert code == 0, err
    warned = err.replace("\n    ", " ")  # Ansible's warnings are wrapped at 100 columns
    where = tmp_path / "hosts.yml"
    assert f"warning: {where}:13: Found duplicate mapping key 'ansible_host'." in warned
    assert "(2 times)" not in warned  # the file is parsed once
    assert "ignored, in none of servers, clients, upstreams: jump1 (bastion), vaulted1" in out


@pytest.mark.parametrize(
    "connection",
    [
        "winrm",
        "psrp",
        "ansible.builtin.winrm",
        "ansible.builtin.psrp",
        "network_cli",
        "ansible.netcommon.network_cli",
        "ansible.netcommon.httpapi",
        "ansible.netcommon.netconf",
    ],
)
def test_windows_and_network_devices_are_refused_in_one_line(
    tmp_path: Path, connection: str
) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        f"[servers]\nwin1 ansible_host=192.0.2.1 ansible_connection={connection}\n"
        "[clients]\nload1 ansible_host=192.0.2.2\n"
    )
    code, _, err = sizing("inventory", "check", str(inv))
    assert code == 3
    what = "a Windows host" if "win" in connection or "psrp" in connection else "a network"
    assert err.startswith(f"error: {inv}: host win1: ansible_connection {connection}: {what}")
    assert len(err.splitlines()) == 1


def test_the_fqcn_local_connection_is_this_machine(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        "[servers]\nweb1 ansible_connection=ansible.builtin.local\n"
        "[clients]\nload1 ansible_connection=local\n"
    )
    doc = _check_json(inv)
    [web1] = [h for h in doc["hosts"] if h["name"] == "web1"]  # type: ignore[union-attr]
    assert web1["connection"] == "local" and web1["address"] == "127.0.0.1"


def test_an_undefined_variable_is_named(tmp_path: Path) -> None:
    """The vault file that defines it is absent, the password is given: the cause is the
    undefined variable, not the vault."""
    inv = tmp_path / "hosts.ini"
    inv.write_text(
        '[servers]\nweb1 ansible_host=192.0.2.1 ansible_user="{{ vault_ansible_user }}"\n'
        "[clients]\nload1 ansible_host=192.0.2.2\n"
    )
    code, _, err = sizing("inventory", "check", str(inv), password=True)
    assert code == 3
    assert err == (
        f"error: {inv}: host web1: ansible_user: undefined variable 'vault_ansible_user'\n"
    )


# -- widths --------------------------------------------------------------------------------


def _wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > 100]


@pytest.mark.parametrize("case", ["kolla-multinode/multinode", "fedora-dir"])
def test_no_line_is_wider_than_100_columns(tmp_path: Path, case: str) -> None:
    path = REAL / case
    code, out, err = sizing("inventory", "check", str(path))
    assert code == 0, err
    assert _wide(out + err) == []
    assert "--verbose lists them" in out
    code, out, err = sizing("inventory", "check", "--verbose", str(path))
    assert code == 0 and _wide(out + err) == []
    db = str(tmp_path / "x.sqlite")
    cpu = '{"sizing_cpu": {"sockets": 2, "cores_per_socket": 8}}'
    code, out, err = sizing(
        "run", "-i", str(path), "--plan", "--cores", "1", "--profile", "rps", "--db", db, "-e", cpu
    )
    assert code == 0 and _wide(out + err) == [], (code, out, err)


def test_a_plan_of_1000_identical_servers_fits_a_screen(tmp_path: Path) -> None:
    lines = ["all:", "  children:", "    servers:", "      vars:"]
    lines += ["        sizing_cpu: {sockets: 1, cores_per_socket: 8}", "      hosts:"]
    lines += [
        f"        web{i:04d}: {{ansible_host: 198.18.{i // 250}.{i % 250 + 1}}}"
        for i in range(1000)
    ]
    lines += [
        "    clients:",
        "      vars:",
        "        sizing_cpu: {sockets: 1, cores_per_socket: 8}",
    ]
    lines += ["      hosts:", "        load1: {ansible_host: 198.19.0.1}"]
    inv = tmp_path / "k1000.yml"
    inv.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "x.sqlite")
    code, out, err = sizing(
        "run", "-i", str(inv), "--plan", "--cores", "1,2", "--profile", "rps", "--db", db
    )
    assert code == 0, err
    assert len(out.splitlines()) <= 24 and _wide(out + err) == [], out
    assert "web0000 ... web0999 (1000 hosts: server), each: declared 1 socket x 8 cores" in out
    assert (
        "web0000, web0001, ... web0999 (1000 hosts), one shape: 2 point(s) to measure each" in out
    )
