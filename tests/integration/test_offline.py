"""Offline by default: `inventory check` and `run --plan` on the example lab with the
network cut off (``unshare -n``), and what reaches ansible-runner from the working
directory (``./ansible.cfg``'s forks) and from ``--keep-artifacts``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.provision.ansible import run_playbook

pytestmark = [pytest.mark.integration, pytest.mark.noload]

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab.yml"
SIZING = [sys.executable, "-m", "sizing"]


def _offline(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    env = dict(os.environ, SIZING_DB=str(tmp_path / "s.sqlite"))
    return subprocess.run(
        ["unshare", "-n", *SIZING, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_inventory_check_of_the_lab_offline(tmp_path: Path) -> None:
    res = _offline(["inventory", "check", str(LAB)], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "2 server(s), 4 client(s)" in res.stdout
    assert "offline check: no host contacted" in res.stdout
    # --connect must fail, one line per host, when nothing can be reached
    res = _offline(
        ["inventory", "check", str(LAB), "--connect", "--limit", "r640-01:loadgen-01"], tmp_path
    )
    assert res.returncode == 4, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    for host in ("r640-01", "loadgen-01"):
        assert sum(f"{host}: unreachable" in line for line in lines) == 1, res.stderr


def test_plan_of_the_lab_offline_lists_every_point_with_cpu_sets(tmp_path: Path) -> None:
    args = ["run", "-i", str(LAB), "--cores", "1,2,4,8", "--ht", "both", "--plan"]
    res = _offline([*args, "--json"], tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["probed"] is False
    assert {h["facts"] for h in doc["hosts"]} == {"declared"}
    points = doc["points"]
    assert len(points) == 2 * 4 * 2 * 2  # servers x cores x HT x profiles
    for p in points:
        assert p["status"] == "planned", p
        assert p["server_cpus"] and all(c["cpus"] != "any" for c in p["clients"])
    text = _offline([*args, "--verbose"], tmp_path)
    assert text.returncode == 0, text.stderr
    assert "nothing contacted" in text.stdout and "pre-flight: not run offline" in text.stdout
    assert text.stdout.count(" on CPUs ") == len(points)
    short = _offline(args, tmp_path)  # the default: per server, the clients once, the time
    assert short.returncode == 0, short.stderr
    assert short.stdout.count("    nginx on CPUs: ") == 2  # one line per server
    assert " on CPUs " not in short.stdout.replace("nginx on CPUs: ", "")
    assert "estimated time: " in short.stdout and "taskset" not in short.stdout


def test_ansible_cfg_forks_and_kept_artifacts_reach_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANSIBLE_CONFIG", raising=False)
    monkeypatch.delenv("ANSIBLE_FORKS", raising=False)
    (tmp_path / "ansible.cfg").write_text("[defaults]\nforks = 37\n")
    inventory = tmp_path / "inv.yml"
    inventory.write_text("all:\n  hosts:\n    localhost: {ansible_connection: local}\n")
    playbook = tmp_path / "forks.yml"
    playbook.write_text(
        "- name: Forks\n  hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - name: Say forks\n      ansible.builtin.debug:\n"
        '        msg: "{{ ansible_forks }} {{ answer }}"\n'
    )
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / "artifacts"
    res = run_playbook(str(playbook), inventory, extravars={"answer": 42}, keep_artifacts=kept)
    assert res.ok, res.problems()
    assert res.result("localhost", "Say forks")["msg"] == "37 42"  # type: ignore[index]
    (run_dir,) = kept.iterdir()
    assert run_dir.name == "001-forks" and list(run_dir.rglob("job_events/*.json"))
