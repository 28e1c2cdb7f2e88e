"""Every bundled inventory plans offline as its own comment says: the command its header
gives, with ``--plan`` and the network cut off (``unshare -n``, tests/offline.py), plans
every server it declares (no host is "NOT PLANNED") and, for the KVM lab, pairs the guest
with its hypervisor's bare metal, as the file promises."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.offline import check_offline

ROOT = Path(__file__).resolve().parent.parent.parent
BUNDLED = sorted((ROOT / "inventories").glob("*.yml"))


def commented_runs(path: Path) -> list[list[str]]:
    """The ``sizing run`` commands of an inventory's header comment (the default inventory,
    which has none, with the core counts users type first), as argv after ``sizing``."""
    runs = []
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"#\s+sizing (run -i \S+ .*)", line)
        if m:
            argv = shlex.split(m.group(1))
            argv[argv.index("-i") + 1] = str(ROOT / argv[argv.index("-i") + 1])
            runs.append([a for a in argv if a != "--plan"])
    return runs or [["run", "-i", str(path), "--cores", "1,2,4,8", "--ht", "both"]]


def test_every_bundled_inventory_has_a_command_to_check() -> None:
    assert {p.name for p in BUNDLED} >= {"local.yml", "lab.yml", "kvm-lab.yml", "esxi-lab.yml"}
    for path in BUNDLED:
        if path.name != "local.yml":
            assert commented_runs(path)[0][:2] == ["run", "-i"], path


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_a_bundled_inventory_plans_offline(path: Path, tmp_path: Path) -> None:
    for argv in commented_runs(path):
        out = check_offline(
            """
            import json, sys
            from typer.testing import CliRunner
            from sizing.cli import app
            args = json.loads(sys.argv[1])
            runner = CliRunner()
            text = runner.invoke(app, [*args, "--plan"])
            assert text.exit_code == 0, text.output
            assert "NOT PLANNED" not in text.output, text.output
            doc = runner.invoke(app, [*args, "--plan", "--json"])
            assert doc.exit_code == 0, doc.output
            print(doc.stdout)
            """,
            json.dumps([*argv, "--db", str(tmp_path / "none.sqlite")]),
        )
        doc = json.loads(out)
        assert all(h["facts"] is not None for h in doc["hosts"]), doc["hosts"]
        for server in doc["servers"]:
            assert server["planned"] > 0, server
        if path.name.startswith("container-"):  # each container leg with its host's metal
            legs = {(tuple(p["a"].split()[:2]), tuple(p["b"].split()[:2])) for p in doc["pairs"]}
            assert len(legs) == 1 and doc["pairs"], doc["pairs"]
            ((a, b),) = legs
            assert a[1] == "baremetal" and b[1] == "container", doc["pairs"]
        if path.name == "kvm-lab.yml":  # the guest with its hypervisor, as the file says
            # --ht both: three legs, the host's HT off and on and the HT-off guest
            legs = {
                (p["a"].split()[0], p["b"].split()[0], (p.get("c") or "-").split()[0])
                for p in doc["pairs"]
            }
            assert legs == {("kvm1-metal", "kvm1-metal", "nginx-kvm1")}, doc["pairs"]
            assert len(doc["pairs"]) == 8  # 1, 2, 4 and 8 cores, rps and tps
