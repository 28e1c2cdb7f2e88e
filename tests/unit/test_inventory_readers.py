"""Ansible's readers without their avoidable costs (sizing.inventory.readers) read what
Ansible's own read: every host's groups and variables equal, host by host, on the real
inventories (vault, templating, group_vars/host_vars directories, INI, an inventory
directory); a YAML inventory is parsed by Ansible once and not copied.

Each check runs in a child Python without a network (``unshare -n``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.offline import check_offline

DATA = Path(__file__).parent.parent / "data" / "inventories"
REAL = DATA / "real"
CASES = [
    REAL / "kubespray/inventory.ini",
    REAL / "ansible-for-devops/inventory",
    REAL / "homelab/hosts",
    REAL / "vagrant/vagrant_ansible_inventory",
    REAL / "ranges/hosts.ini",
    REAL / "inventory-dir",
    REAL / "ansible-examples-yaml/hosts.yaml",
    REAL / "openshift-ansible/40_basic_inventory.ini",
    REAL / "lamp-infrastructure/inventory",
    DATA / "vars_dirs/hosts.yml",
]

_SAME_VARS = """
import contextlib, os, sys
os.environ["ANSIBLE_VAULT_PASSWORD_FILE"] = sys.argv[2]
import ansible.vars.manager as vm
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.manager import VariableManager
from sizing.inventory.readers import ansible_loader, quick_vars
from sizing.inventory.resolve import setup_vault

def view(loader_cls, manager_cls, block):
    loader = loader_cls()
    setup_vault(loader)
    manager = manager_cls(loader=loader, sources=[sys.argv[1]])
    variables = VariableManager(loader=loader, inventory=manager)
    with block:
        return {
            h.name: (
                sorted(g.name for g in h.get_groups()),
                variables.get_vars(host=h, include_hostvars=False, stage="all"),
            )
            for h in manager.get_hosts()
        }

originals = (vm.clean_facts, vm.get_vars_from_inventory_sources, vm.get_vars_from_path)
plain = view(DataLoader, InventoryManager, contextlib.nullcontext())
quick = view(ansible_loader(), InventoryManager, quick_vars())
assert (vm.clean_facts, vm.get_vars_from_inventory_sources, vm.get_vars_from_path) == originals
assert plain and sorted(plain) == sorted(quick), (sorted(plain), sorted(quick))
for name, (groups, variables) in plain.items():
    assert quick[name][0] == groups, name
    assert quick[name][1].keys() == variables.keys(), name
    for key, value in variables.items():
        if key == "groups":  # Ansible's own order of a group's hosts varies run to run
            value, quick[name][1][key] = (
                {g: sorted(hs) for g, hs in v.items()} for v in (value, quick[name][1][key])
            )
        assert quick[name][1][key] == value, (name, key)
print(len(plain))
"""


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(DATA)))
def test_the_quick_readers_see_every_host_as_ansible_does(path: Path) -> None:
    hosts = check_offline(_SAME_VARS, str(path), str(REAL / "vault-password.txt"))
    assert int(hosts) > 0


_PARSED_ONCE = """
import sys
import ansible.parsing.dataloader as dl
from sizing.inventory import load_inventory

parsed, copied = [], []
real_from_yaml, real_copy = dl.from_yaml, dl.copy

def from_yaml(data, file_name=None, **kw):
    parsed.append(file_name)
    return real_from_yaml(data, file_name=file_name, **kw)

class Copy:
    @staticmethod
    def deepcopy(value, memo=None):
        copied.append(type(value).__name__)
        return real_copy.deepcopy(value, memo)

dl.from_yaml, dl.copy = from_yaml, Copy
inv = load_inventory(sys.argv[1])
assert len(inv.servers) == 2 and len(inv.clients) == 2, inv
assert parsed == [sys.argv[1]], parsed
assert copied == [], copied
"""


def test_a_yaml_inventory_is_parsed_once_and_not_copied(tmp_path: Path) -> None:
    """Ansible's ``auto`` plugin parsed the whole file again only to find no ``plugin:``
    key, and each parse was deep-copied: two thirds of reading a large inventory."""
    path = tmp_path / "lab.yml"
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n"
        "        web1: {ansible_host: 192.0.2.1}\n        web2: {ansible_host: 192.0.2.2}\n"
        "    clients:\n      hosts:\n"
        "        load1: {ansible_host: 198.51.100.1}\n        load2: {ansible_host: 198.51.100.2}\n"
    )
    check_offline(_PARSED_ONCE, str(path))


def test_an_inventory_plugin_configuration_is_read_by_its_plugin(tmp_path: Path) -> None:
    """``auto`` is kept (a plugin configuration is read through it) and still parses each
    YAML file once: the yaml plugin gets auto's parse."""
    from sizing.inventory import load_inventory

    (tmp_path / "10-hosts.yml").write_text(
        "all:\n  hosts:\n    web1: {ansible_host: 192.0.2.1, tier: web}\n"
        "    load1: {ansible_host: 192.0.2.2, tier: load}\n"
    )
    (tmp_path / "20-groups.yml").write_text(
        "plugin: ansible.builtin.constructed\nstrict: true\n"
        "groups:\n  servers: tier == 'web'\n  clients: tier == 'load'\n"
    )
    inv = load_inventory(tmp_path)
    assert [h.name for h in inv.servers] == ["web1"]
    assert [h.name for h in inv.clients] == ["load1"]
