"""sizing_hypervisor / sizing_vm validation and where vSphere credentials come from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sizing.errors import InputError, SizingError
from sizing.inventory import Host, HostVars
from sizing.provision.platforms.vsphere_settings import (
    VAULT_PASSWORD_ENV,
    HypervisorSettings,
    load_settings,
    read_credentials,
)
from tests.offline import check_offline

GOOD_HYP: dict[str, Any] = {
    "kind": "vsphere",
    "url": "https://vc1.lab/sdk",
    "user_env": "VSPHERE_USER",
    "password_env": "VSPHERE_PASSWORD",
}


def host(hypervisor: dict[str, Any] | None = None, vm: dict[str, Any] | None = None) -> Host:
    hv = HostVars.model_validate({"platform": "vsphere", "hypervisor": hypervisor, "vm": vm})
    return Host("vm1", frozenset({"server"}), ("all", "servers"), hv, {"ansible_host": "10.9.9.9"})


def problems(h: Host) -> list[str]:
    with pytest.raises(InputError) as exc:
        load_settings(h)
    return exc.value.problems


def test_good_settings_and_defaults() -> None:
    hyp, vm = load_settings(host(GOOD_HYP, {"name": "nginx-vm1", "esxi_host": "esx1.lab"}))
    assert (hyp.host, hyp.port, hyp.path) == ("vc1.lab", 443, "/sdk")
    assert hyp.verify_tls is True
    assert hyp.credentials_source == "$VSPHERE_USER / $VSPHERE_PASSWORD"
    assert vm.name == "nginx-vm1"
    assert vm.latency_sensitivity == "high"
    assert vm.reserve is True


def test_port_from_url() -> None:
    hyp = HypervisorSettings.model_validate({**GOOD_HYP, "url": "https://127.0.0.1:8989/sdk"})
    assert (hyp.host, hyp.port) == ("127.0.0.1", 8989)


def test_missing_hypervisor_is_one_line() -> None:
    [line] = problems(host(None))
    assert line.startswith("host vm1: sizing_hypervisor: missing")


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("http://vc1.lab/sdk", "must start with https://"),
        ("https:///sdk", "names no host"),
        ("https://u:p@vc1.lab/sdk", "must not carry credentials"),
    ],
)
def test_bad_url(url: str, needle: str) -> None:
    [line] = problems(host({**GOOD_HYP, "url": url}))
    assert line.startswith("host vm1: sizing_hypervisor.url: ")
    assert needle in line


@pytest.mark.parametrize("key", ["password", "user", "Password"])
def test_plain_credentials_are_refused(key: str) -> None:
    [line] = problems(host({**GOOD_HYP, key: "secret"}))
    assert "never write credentials into an inventory" in line
    assert "secret" not in line


def test_a_credential_source_is_required() -> None:
    [line] = problems(host({"kind": "vsphere", "url": "https://vc1.lab/sdk"}))
    assert "set user_env and password_env" in line


def test_env_and_vault_file_exclude_each_other() -> None:
    [line] = problems(host({**GOOD_HYP, "credentials_file": "x.vault"}))
    assert "not both" in line


def test_unknown_keys_in_both() -> None:
    lines = problems(host({**GOOD_HYP, "kind": "esxi", "colour": 1}, {"cpus": 4}))
    assert any(p.startswith("host vm1: sizing_hypervisor.kind: ") for p in lines)
    assert "host vm1: sizing_hypervisor.colour: unknown setting" in lines
    assert "host vm1: sizing_vm.cpus: unknown setting" in lines


def test_credentials_from_env() -> None:
    hyp, _ = load_settings(host(GOOD_HYP))
    env = {"VSPHERE_USER": "administrator@vsphere.local", "VSPHERE_PASSWORD": "pw"}
    assert read_credentials(hyp, env) == ("administrator@vsphere.local", "pw")


def test_missing_env_names_the_variable_not_a_value() -> None:
    hyp, _ = load_settings(host(GOOD_HYP))
    with pytest.raises(SizingError) as exc:
        read_credentials(hyp, {"VSPHERE_USER": "someone"})
    assert str(exc.value) == (
        "https://vc1.lab/sdk: credentials: environment variable VSPHERE_PASSWORD is not set"
    )


def _vault_file(tmp_path: Path, text: str, password: bytes) -> Path:
    from ansible.parsing.vault import VaultLib, VaultSecret

    blob = VaultLib([("default", VaultSecret(password))]).encrypt(text)
    path = tmp_path / "vc1.vault.yml"
    path.write_bytes(blob)
    return path


def test_credentials_from_an_ansible_vault_file(tmp_path: Path) -> None:
    vault = _vault_file(tmp_path, "user: admin\npassword: s3cret\n", b"vault-pw")
    pw_file = tmp_path / "vault-pass"
    pw_file.write_text("vault-pw\n")
    hyp = HypervisorSettings.model_validate(
        {"kind": "vsphere", "url": "https://vc1.lab/sdk", "credentials_file": str(vault)}
    )
    assert read_credentials(hyp, {VAULT_PASSWORD_ENV: str(pw_file)}) == ("admin", "s3cret")
    assert hyp.credentials_source == f"ansible-vault file {vault}"

    pw_file.write_text("wrong\n")
    with pytest.raises(SizingError, match="the vault password does not decrypt it"):
        read_credentials(hyp, {VAULT_PASSWORD_ENV: str(pw_file)})
    with pytest.raises(SizingError, match=f"set {VAULT_PASSWORD_ENV}"):
        read_credentials(hyp, {})


def test_a_plain_credentials_file_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "creds.yml"
    plain.write_text("user: admin\npassword: s3cret\n")
    hyp = HypervisorSettings.model_validate(
        {"kind": "vsphere", "url": "https://vc1.lab/sdk", "credentials_file": str(plain)}
    )
    with pytest.raises(InputError, match="not encrypted; run: ansible-vault encrypt"):
        read_credentials(hyp, {})


def test_example_inventory_validates() -> None:
    check_offline(  # the example lab: read without a network (tests/offline.py)
        """
        import sys
        from sizing.inventory import load_inventory
        from sizing.provision.platforms.vsphere_settings import load_settings
        inv = load_inventory(sys.argv[1])
        guests = [h for h in inv.servers if str(h.platform) == "vsphere"]
        assert guests
        for h in guests:
            hyp, vm = load_settings(h)
            assert hyp.credentials_file or (hyp.user_env and hyp.password_env)
            assert vm.esxi_host
        """,
        str(Path(__file__).resolve().parents[2] / "inventories" / "esxi-lab.yml"),
    )
