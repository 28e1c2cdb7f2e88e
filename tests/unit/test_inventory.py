"""Inventory reading and validation: one precise line per problem, same merge as Ansible."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing import paths
from sizing.errors import ExitStatus, InputError
from sizing.inventory import load_inventory
from sizing.model import Platform

DATA = Path(__file__).parent.parent / "data" / "inventories"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bad_yaml.yml", "YAML syntax: line 6"),
        ("bad_platform.yml", "host web1: sizing_platform: unknown platform 'xen'"),
        (
            "bad_cores_negative.yml",
            "host web1: sizing_cpu.cores_per_socket: Input should be greater than or equal to 1",
        ),
        (
            "bad_cores_text.yml",
            "host web1: sizing_cpu.cores_per_socket: Input should be a valid integer",
        ),
        ("bad_duplicate_host.yml", "duplicate key 'web1'"),
        ("bad_no_server.yml", "no server host"),
        ("bad_unknown_var.yml", "host web1: sizing_prize_usd: unknown variable"),
        ("bad_top_level.yml", "expected a mapping of groups"),
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

    for path in [DATA / "good_groups.yml", paths.INVENTORIES / "lab.yml", paths.DEFAULT_INVENTORY]:
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
    lab = load_inventory(paths.INVENTORIES / "lab.yml")
    assert len(lab.servers) >= 1 and len(lab.clients) >= 2
