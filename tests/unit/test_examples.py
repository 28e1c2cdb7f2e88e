"""Issue 62: the files the docs' commands read exist in the repository, are synthetic, and
are what examples/generate.py writes (the demand file as this sizing's `sizing demand`
writes it), so a page's example cannot drift from the file it names."""

from __future__ import annotations

import re
import subprocess
import sys

from sizing.paths import ROOT
from tests.offline import check_offline
from tests.unit.test_docs import ALL

EXAMPLES = ROOT / "examples"


def test_the_example_files_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_the_example_logs_hold_no_routable_address() -> None:
    # synthetic: every client address is in RFC 5737's documentation ranges
    for name in ("access.log", "access-rich.log"):
        addrs = {line.split(" ", 1)[0] for line in (EXAMPLES / name).read_text().splitlines()}
        assert addrs and all(re.fullmatch(r"(198\.51\.100|203\.0\.113)\.\d+", a) for a in addrs)


def test_every_file_a_documented_command_names_exists() -> None:
    named = {w for e in ALL for w in re.findall(r"\b(?:examples|profiles)/[\w./-]+", e.command)}
    assert named, "no page names an example file"
    assert sorted(w for w in named if not (ROOT / w).exists()) == []


def test_the_shipped_vcenter_inventory_without_a_vcenter_is_one_line() -> None:
    """docs/inventories.md's ``examples/inventories/vc`` read with no vSphere simulator to
    answer (offline: unshare -n): one line naming the plugin's file, exit 3, no traceback."""
    out = check_offline(
        """
        import os, sys
        os.chdir(sys.argv[1])
        from typer.testing import CliRunner
        from sizing.cli import app
        env = {"VMWARE_USER": "user", "VMWARE_PASSWORD": "pass"}
        res = CliRunner().invoke(app, ["inventory", "check", "examples/inventories/vc"], env=env)
        print(res.exit_code)
        print(res.stderr, end="")
        """,
        str(ROOT),
    )
    code, _, err = out.partition("\n")
    assert code == "3" and err.count("\n") == 1, out
    assert err.startswith(
        "error: examples/inventories/vc/vcenter.vmware.yml: inventory plugin"
        " community.vmware.vmware_vm_inventory: Unknown error while connecting to vCenter"
        " or ESXi API at 127.0.0.1:18989"
    ), err
    assert "Traceback" not in err and "pass" not in err
