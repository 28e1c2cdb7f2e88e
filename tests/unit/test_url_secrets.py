"""No credential-bearing URL or URI is ever echoed (issue 16): every URL and URI field of an
inventory (the vSphere SDK URL, the libvirt URI), through every command that reads one
(``inventory check``, ``run --plan``), in messages, plans and metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sizing.cli import app
from sizing.provision.platforms.urls import redact_url, url_secret

runner = CliRunner()
SECRET = "S3CRETpw"

VSPHERE_URLS = [
    f"http://admin:{SECRET}@vc1.lab/sdk",  # the scheme is wrong too: credentials first
    f"https://admin:{SECRET}@vc1.lab/sdk",
    f"https://{SECRET}@vc1.lab/sdk",  # a user name alone is a credential here
    f"https://vc1.lab/sdk?token={SECRET}",
    f"https://vc1.lab/sdk?api_key={SECRET}&x=1",
    f"ftp://admin:{SECRET}@vc1.lab:99999/sdk",
    f"https://admin:{SECRET}@[::1/sdk",  # unparseable as well
    f"vc1.lab/sdk?password={SECRET}",  # no scheme at all
]
LIBVIRT_URIS = [
    f"qemu+ssh://root:{SECRET}@kvm1/system",
    f"qemu+tls://kvm1/system?password={SECRET}",
    f"qemu+ssh://root:{SECRET}@kvm1:99999/system",
    f"qemu+ssh://root:{SECRET}@[kvm1/system",
    f"root:{SECRET}@kvm1/system",  # no scheme
]


def vsphere_inventory(tmp_path: Path, url: str) -> Path:
    doc = {
        "all": {
            "children": {
                "servers": {
                    "hosts": {
                        "vm1": {
                            "ansible_host": "10.9.9.9",
                            "sizing_platform": "vsphere",
                            "sizing_hypervisor": {
                                "kind": "vsphere",
                                "url": url,
                                "user_env": "U",
                                "password_env": "P",
                            },
                            "sizing_vm": {"name": "vm1", "esxi_host": "esx1"},
                        }
                    }
                },
                "clients": {"hosts": {"load": {"ansible_connection": "local"}}},
            }
        }
    }
    path = tmp_path / "inv.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def libvirt_inventory(tmp_path: Path, uri: str) -> Path:
    doc = {
        "all": {
            "children": {
                "hypervisors": {
                    "hosts": {
                        "kvm1": {"ansible_host": "192.0.2.10", "sizing_hypervisor": {"uri": uri}}
                    }
                },
                "servers": {
                    "hosts": {
                        "vm1": {
                            "ansible_host": "192.0.2.11",
                            "sizing_platform": "libvirt",
                            "sizing_vm": {
                                "domain": "vm1",
                                "hypervisor": "kvm1",
                                "disk": "/images/vm1.qcow2",
                                "bridge": "br0",
                            },
                        }
                    }
                },
                "clients": {"hosts": {"load": {"ansible_connection": "local"}}},
            }
        }
    }
    path = tmp_path / "inv.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


COMMANDS = [
    ["inventory", "check"],
    ["inventory", "check", "--json"],
    ["run", "--plan", "--cores", "1", "--profile", "rps", "-i"],
    ["run", "--plan", "--json", "--cores", "1", "--profile", "rps", "-i"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:3]))
@pytest.mark.parametrize(
    ("kind", "value"),
    [("vsphere", u) for u in VSPHERE_URLS] + [("libvirt", u) for u in LIBVIRT_URIS],
)
def test_a_secret_in_a_url_is_refused_and_never_echoed(
    tmp_path: Path, command: list[str], kind: str, value: str
) -> None:
    make = vsphere_inventory if kind == "vsphere" else libvirt_inventory
    inv = make(tmp_path, value)
    result = runner.invoke(app, [*command, str(inv)], env={"SIZING_DB": str(tmp_path / "r")})
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if command[0] == "run" and kind == "vsphere":
        return  # the offline plan contacts no vCenter, so it does not read its settings
    assert result.exit_code != 0, result.output
    field = "url" if kind == "vsphere" else "uri"
    assert f"sizing_hypervisor.{field}" in result.stderr, result.stderr


@pytest.mark.parametrize("value", VSPHERE_URLS + LIBVIRT_URIS)
def test_redact_url_hides_every_secret(value: str) -> None:
    assert SECRET not in redact_url(value, keep_user=False)
    if not value.startswith(f"https://{SECRET}@"):  # there the secret is the user name
        assert SECRET not in redact_url(value)
    assert url_secret(value) is not None or "@" in value


@pytest.mark.parametrize(
    "value",
    [
        "qemu+ssh://root@kvm1/system?keyfile=/root/.ssh/id&sshauth=privkey",
        "qemu:///system",
        "https://vc1.lab:8989/sdk",
    ],
)
def test_plain_urls_stay_as_they_are(value: str) -> None:
    assert url_secret(value) is None
    assert redact_url(value) == value


def test_libvirt_endpoint_in_inventory_check_is_shown(tmp_path: Path) -> None:
    inv = libvirt_inventory(tmp_path, "qemu+ssh://root@kvm1/system?keyfile=/k")
    result = runner.invoke(app, ["inventory", "check", "--json", str(inv)])
    assert result.exit_code == 0, result.output
    [vm] = [h for h in json.loads(result.stdout)["hosts"] if h["name"] == "vm1"]
    assert vm["hypervisor"]["endpoint"] == "qemu+ssh://root@kvm1/system?keyfile=/k"
