"""Inventory reading and validation: Ansible's reading, one precise line per problem.

sizing's hosts, groups and variables are compared with ``ansible-inventory --list`` run as
a subprocess. The example labs (lab.yml, kvm-lab.yml, esxi-lab.yml) name hosts that must
never be contacted: tests that read them run in a process without a network
(``unshare -n``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sizing import paths
from sizing.errors import ExitStatus, InputError
from sizing.inventory import load_inventory
from sizing.model import Platform
from tests.offline import unshare_n

DATA = Path(__file__).parent.parent / "data" / "inventories"
BIN = Path(sys.executable).parent
LABS = ["lab.yml", "kvm-lab.yml", "esxi-lab.yml"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bad_yaml.yml", "Ansible cannot read it: YAML parsing failed: While parsing a flow"),
        ("bad_platform.yml", "host web1: sizing_platform: unknown platform 'xen'"),
        (
            "bad_cores_negative.yml",
            "host web1: sizing_cpu.cores_per_socket: Input should be greater than or equal to 1",
        ),
        (
            "bad_cores_text.yml",
            "host web1: sizing_cpu.cores_per_socket: Input should be a valid integer",
        ),
        ("bad_no_server.yml", "no server host"),
        ("bad_unknown_var.yml", "host web1: sizing_prize_usd: unknown variable"),
        ("bad_top_level.yml", "YAML inventory has invalid structure, it should be a dictionary"),
        ("bad_ini.ini", "Ansible cannot read it: Expected key=value host variable assignment"),
    ],
)
def test_bad_inventory_names_file_and_field(name: str, expected: str) -> None:
    path = DATA / name
    with pytest.raises(InputError) as info:
        load_inventory(path)
    text = str(info.value)
    assert text.startswith(str(path) + ":")
    assert expected in text
    assert info.value.code == ExitStatus.INPUT


def test_missing_file() -> None:
    with pytest.raises(InputError, match="no such inventory file"):
        load_inventory(DATA / "nope.yml")


def test_group_and_host_variable_precedence() -> None:
    inv = load_inventory(DATA / "good_groups.yml")
    web1, web2, load1 = inv.hosts["web1"], inv.hosts["web2"], inv.hosts["load1"]
    assert web1.sizing.http_port == 8200  # servers group beats its parent lab and all
    assert web2.sizing.http_port == 8300  # host beats groups
    assert load1.sizing.http_port == 8100  # clients inherit lab
    assert web1.sizing.price_usd == 1300
    assert web1.roles == {"server", "client"}
    assert web2.platform is Platform.BAREMETAL
    assert web1.sizing.cpu is not None and web1.sizing.cpu.physical_cores == 16
    assert web1.address == "192.0.2.10"
    assert [h.name for h in inv.servers] == ["web1", "web2"]


def test_same_result_as_ansible_inventory_manager() -> None:
    """Our reader gives the hosts, groups and variables Ansible's own machinery gives."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    # lab.yml is compared in test_example_labs_offline, without a network.
    for path in [DATA / "good_groups.yml", paths.DEFAULT_INVENTORY]:
        loader = DataLoader()
        manager = InventoryManager(loader=loader, sources=[str(path)])
        variables = VariableManager(loader=loader, inventory=manager)
        ours = load_inventory(path)
        assert sorted(ours.hosts) == sorted(h.name for h in manager.get_hosts())
        for host in manager.get_hosts():
            theirs = variables.get_vars(host=host)
            mine = ours.hosts[host.name]
            assert set(mine.groups) == {g.name for g in host.get_groups()} | {"all"}
            for key, value in mine.variables.items():
                if key.startswith("sizing_") or key == "ansible_host":
                    assert theirs[key] == value, (path, host.name, key)


def test_bundled_inventories_are_valid() -> None:
    local = load_inventory(paths.DEFAULT_INVENTORY)
    assert [h.name for h in local.servers] == ["localhost"]
    assert local.hosts["localhost"].is_local
    assert local.hosts["localhost"].address == "127.0.0.1"
    # lab.yml: len(servers) >= 1 and len(clients) >= 2, checked in test_example_labs_offline.


# -- compared with ansible-inventory --------------------------------------------------


def _ansible_inventory(path: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``ansible-inventory -i PATH --list``: {host: (groups, vars)}, vault values decrypted."""
    run_env = {**os.environ, **(env or {})}
    out = subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", str(path), "--list"],
        capture_output=True,
        text=True,
        check=True,
        env=run_env,
        cwd=path.parent,
    )
    listing = json.loads(out.stdout)
    hostvars = listing.pop("_meta")["hostvars"]

    def members(group: str) -> set[str]:
        body = listing.get(group, {})
        found = set(body.get("hosts", []))
        for child in body.get("children", []):
            found |= members(child)
        return found

    groups: dict[str, set[str]] = {}
    for group in listing:
        for host in members(group):
            groups.setdefault(host, {"all"}).add(group)

    def reveal(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"__ansible_vault"}:
            plain = subprocess.run(
                [str(BIN / "ansible-vault"), "decrypt", "--output", "-"],
                input=value["__ansible_vault"],
                capture_output=True,
                text=True,
                check=True,
                env=run_env,
                cwd=path.parent,
            )
            return plain.stdout
        if isinstance(value, dict):
            return {k: reveal(v) for k, v in value.items()}
        return value

    return {
        host: (groups[host], {k: reveal(v) for k, v in hostvars.get(host, {}).items()})
        for host in groups
    }


def _assert_same_as_ansible(path: Path, env: dict[str, str] | None = None) -> None:
    from ansible.parsing.vault import EncryptedString

    theirs = _ansible_inventory(path, env)
    ours = load_inventory(path)
    assert sorted(ours.hosts) == sorted(theirs)
    for name, (groups, variables) in theirs.items():
        host = ours.hosts[name]
        assert set(host.groups) == groups, name
        plain = {
            k: str(v) if isinstance(v, EncryptedString) else v for k, v in host.variables.items()
        }
        assert plain == variables, name


def test_ini_inventory_is_read_as_ansible_reads_it() -> None:
    path = DATA / "ini" / "hosts.ini"
    _assert_same_as_ansible(path)
    inv = load_inventory(path)
    assert [h.name for h in inv.servers] == ["web01", "web02", "web03"]
    assert [h.name for h in inv.clients] == ["load1", "load2"]
    web01, web03 = inv.hosts["web01"], inv.hosts["web03"]
    assert web01.sizing.price_usd == 1300 and web01.sizing.http_port == 8100
    assert web03.sizing.http_port == 8300 and web03.address == "192.0.2.13"
    assert inv.hosts["load2"].sizing.client_cpus == "0-3"
    assert web01.variables["ansible_user"] == "bench"


def test_host_range_is_many_hosts() -> None:
    """The old hand-written reader took ``web[01:03]`` for one host; Ansible, and now
    sizing, expand it to web01, web02, web03."""
    path = DATA / "range.yml"
    _assert_same_as_ansible(path)
    inv = load_inventory(path)
    assert [h.name for h in inv.servers] == ["web01", "web02", "web03"]
    assert all(h.sizing.cpu is not None for h in inv.servers)


def test_group_vars_and_host_vars_beside_the_inventory() -> None:
    path = DATA / "vars_dirs" / "hosts.yml"
    _assert_same_as_ansible(path)
    inv = load_inventory(path)
    web1, web2, load1 = inv.hosts["web1"], inv.hosts["web2"], inv.hosts["load1"]
    assert web1.sizing.http_port == 8200 and web1.sizing.price_usd == 2200
    assert web2.sizing.http_port == 8300 and web2.sizing.nic_gbps == 25
    assert load1.sizing.http_port == 8000 and load1.variables["ansible_user"] == "bench"
    assert web1.sizing.cpu is not None and web1.sizing.cpu.physical_cores == 8


def test_duplicate_key_in_group_vars_is_ansibles_warning(tmp_path: Path) -> None:
    """As Ansible reads it: the last value wins, a warning names the file and line."""
    shutil.copytree(DATA / "vars_dirs", tmp_path / "inv")
    bad = tmp_path / "inv" / "group_vars" / "servers.yml"
    bad.write_text("sizing_http_port: 8200\nsizing_http_port: 8201\n")
    inv = load_inventory(tmp_path / "inv" / "hosts.yml")
    assert 8201 in {h.sizing.http_port for h in inv.servers}
    assert f"{bad}:2: Found duplicate mapping key 'sizing_http_port'." in inv.warnings


def test_a_duplicate_host_is_ansibles_warning() -> None:
    inv = load_inventory(DATA / "bad_duplicate_host.yml")
    assert any("Found duplicate mapping key 'web1'" in w for w in inv.warnings), inv.warnings


def _vault_lab(tmp_path: Path, password: Path) -> Path:
    """An inventory whose sizing_address (inline !vault) and group_vars/servers/vault.yml
    (a whole encrypted file) need the vault password."""
    inv = tmp_path / "inv"
    (inv / "group_vars" / "servers").mkdir(parents=True)
    env = {**os.environ, "ANSIBLE_VAULT_PASSWORD_FILE": str(password)}
    inline = subprocess.run(
        [str(BIN / "ansible-vault"), "encrypt_string", "--name", "sizing_address", "10.9.9.9"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    (inv / "host_vars").mkdir()
    (inv / "host_vars" / "web1.yml").write_text(inline)
    secret = inv / "group_vars" / "servers" / "vault.yml"
    secret.write_text("ansible_become_password: s3cret\nsizing_price_usd: 4200\n")
    subprocess.run(
        [str(BIN / "ansible-vault"), "encrypt", str(secret)],
        check=True,
        env=env,
        capture_output=True,
    )
    (inv / "hosts.ini").write_text(
        "[servers]\nweb1 ansible_host=192.0.2.10\n[clients]\nload1 ansible_host=192.0.2.20\n"
    )
    return inv / "hosts.ini"


def test_vault_with_a_password_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    password = tmp_path / "vault-pass"
    password.write_text("test-password\n")
    path = _vault_lab(tmp_path, password)
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(password))
    _assert_same_as_ansible(path, {"ANSIBLE_VAULT_PASSWORD_FILE": str(password)})
    web1 = load_inventory(path).hosts["web1"]
    assert web1.address == "10.9.9.9"
    assert web1.sizing.price_usd == 4200
    assert str(web1.variables["ansible_become_password"]) == "s3cret"


def test_vault_with_an_executable_password_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    password = tmp_path / "vault-pass"
    password.write_text("test-password\n")
    path = _vault_lab(tmp_path, password)
    script = tmp_path / "vault-pass.sh"
    script.write_text("#!/bin/sh\necho test-password\n")
    script.chmod(0o755)
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(script))
    assert load_inventory(path).hosts["web1"].address == "10.9.9.9"


def test_vault_without_password_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    password = tmp_path / "vault-pass"
    password.write_text("test-password\n")
    path = _vault_lab(tmp_path, password)
    (path.parent / "group_vars" / "servers" / "vault.yml").unlink()  # leave the inline one
    monkeypatch.delenv("ANSIBLE_VAULT_PASSWORD_FILE", raising=False)
    with pytest.raises(InputError) as info:
        load_inventory(path)
    text = str(info.value)
    assert text.startswith(f"{path}: host web1: sizing_address: cannot decrypt")
    assert "ANSIBLE_VAULT_PASSWORD_FILE" in text
    assert info.value.code == ExitStatus.INPUT


def test_importing_the_module_does_not_import_ansible() -> None:
    code = "import sys, sizing.inventory; print(any(m.startswith('ansible') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the example labs, with the network cut off ----------------------------------------

_OFFLINE_READER = textwrap.dedent(
    """
    import json, sys
    from sizing.inventory import load_inventory
    out = {}
    for path in sys.argv[1:]:
        inv = load_inventory(path)
        out[path] = {
            "servers": [h.name for h in inv.servers],
            "clients": [h.name for h in inv.clients],
            "hosts": {
                h.name: {"groups": sorted(h.groups), "variables": h.variables}
                for h in inv.hosts.values()
            },
        }
    print(json.dumps(out, default=str))
    """
)


def _offline(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run argv in a new network namespace with nothing in it (no route anywhere)."""
    return subprocess.run([unshare_n(), "-n", *argv], capture_output=True, text=True, check=True)


def test_example_labs_offline() -> None:
    """The example labs read, validate and agree with ansible-inventory without a network."""
    labs = [str(paths.INVENTORIES / name) for name in LABS]
    ours = json.loads(_offline([sys.executable, "-c", _OFFLINE_READER, *labs]).stdout)
    lab = ours[labs[0]]
    assert len(lab["servers"]) >= 1 and len(lab["clients"]) >= 2
    for path in labs:
        listing = _offline([str(BIN / "ansible-inventory"), "-i", path, "--list"]).stdout
        theirs = json.loads(listing)["_meta"]["hostvars"]
        mine = ours[path]["hosts"]
        assert sorted(mine) == sorted(theirs), path
        for host, variables in theirs.items():
            assert mine[host]["variables"] == variables, (path, host)


def test_declared_prices_and_cpus_per_host() -> None:
    """What a run records for pricing its bases: the inventory's declarations, resolved
    with group vars; hosts that declare nothing are left out."""
    declared = load_inventory(DATA / "good_groups.yml").declared()
    assert declared["web1"] == {
        "sizing_price_usd": 1300.0,
        "sizing_cpu": {
            "sockets": 2,
            "cores_per_socket": 8,
            "threads_per_core": 2,
            "model": "Xeon",
        },
        "sizing_cost_ref": None,
    }
    assert declared["web2"]["sizing_cpu"] is None
    assert declared["load1"]["sizing_price_usd"] == 1300.0  # the lab group's price
    assert set(load_inventory(paths.DEFAULT_INVENTORY).declared()) == set()
