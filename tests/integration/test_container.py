"""The container leg on this machine, with real Podman: a run killed (nginx in the
container, then ``kill -9`` of ``sizing run``) and the next run, which cleans what it left
and measures bare metal and the container paired. One module fixture runs both (the CI
budget: about 90 s); each test reads it. Skips, with the reason, where Podman cannot run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sizing.provision.platforms.container import cgroup_problem, port_taken
from tests.integration.localnginx import stop_nginx
from tests.integration.procs import load_processes

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.robust]  # asserts no figure; its own run lock: see pyproject
NAME = "sizing-it-container"
BARE, CTR = (28280, 28643), (28281, 28644)

INVENTORY = """
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  children:
    servers:
      hosts:
        localhost:
          sizing_http_port: {bare[0]}
          sizing_https_port: {bare[1]}
          sizing_conf_dir: {tmp}/conf
          sizing_www_root: {tmp}/www
          sizing_log_dir: {tmp}/log
          sizing_pid_file: {tmp}/nginx.pid
          sizing_lock_path: {tmp}/run.lock
        {name}:
          sizing_platform: container
          ansible_connection: sizing_podman
          ansible_host: {name}
          ansible_python_interpreter: /usr/bin/python3
          sizing_address: 127.0.0.1
          sizing_http_port: {ctr[0]}
          sizing_https_port: {ctr[1]}
          sizing_container: {{host: localhost, runtime: runc, memory_mib: 512}}
    clients:
      hosts:
        localhost: {{}}
"""


def _why_not() -> str:
    """Why Podman cannot run the container leg here ("" when it can)."""
    if os.geteuid() != 0:
        return "the container leg needs root (rootful Podman)"
    for tool in ("podman", "runc", "nginx", "wrk"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/setup --dev installs it)"
    why = cgroup_problem("runc")
    if why:
        return why
    image = subprocess.run(
        [str(ROOT / "scripts/build-container-image"), "--name"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if subprocess.run(["podman", "image", "exists", image]).returncode != 0:
        return f"image {image} is not built (scripts/build-container-image)"
    return ""


def _ours() -> list[str]:
    """The containers sizing started that exist now."""
    argv = [
        "podman",
        "ps",
        "--all",
        "--filter",
        "label=io.sizing.owner=sizing",
        "--format",
        "{{.Names}}",
    ]
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    return out.split()


def _nat_rules(port: int) -> list[str]:
    out = subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if f"--dport {port}" in line]


@dataclass
class Runs:
    """What the killed run left and what the next run did."""

    tmp: Path
    left: list[str]  # containers the killed run left
    left_nat: list[str]  # and their NAT rules
    killed_nginx: str  # what pkill in the container said
    code: int
    doc: dict[str, object]
    err: str


def _sizing(inv: Path, db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sizing",
            "run",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--warmup",
            "0",
            "--db",
            str(db),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def runs() -> Iterator[Runs]:
    why = _why_not()
    if why:
        pytest.skip(why)
    tmp = Path(tempfile.mkdtemp(prefix="sizing-it-ctr-"))
    tmp.chmod(0o755)
    inv = tmp / "inv.yml"
    inv.write_text(INVENTORY.format(tmp=tmp, bare=BARE, ctr=CTR, name=NAME))
    db = tmp / "r.sqlite"
    try:
        # 1. a run whose nginx in the container is killed mid-point, then itself (kill -9)
        first = _sizing(inv, db, "--profile", "static-rps", "--repeat", "2", "--duration", "2")
        deadline = time.time() + 120
        while time.time() < deadline and first.poll() is None and not load_processes(str(BARE[0])):
            time.sleep(0.2)
        assert first.poll() is None, first.communicate()[1]
        kill = subprocess.run(
            ["podman", "exec", NAME, "pkill", "-9", "-e", "nginx"], capture_output=True, text=True
        )
        time.sleep(1)
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
        left, left_nat = _ours(), _nat_rules(CTR[0])
        # 2. the next run: cleans what the dead run left, then measures both legs paired
        # one pair of windows (A B): the CI budget; docs/containers.md has longer runs
        nxt = _sizing(
            inv, db, "--profile", "static-rps", "--repeat", "1", "--duration", "1", "--json"
        )
        out, err = nxt.communicate(timeout=240)
        yield Runs(
            tmp,
            left,
            left_nat,
            kill.stdout + kill.stderr,
            nxt.returncode,
            json.loads(out) if out.strip() else {},
            err,
        )
    finally:
        subprocess.run(["podman", "rm", "--force", "--time", "0", NAME], capture_output=True)
        stop_nginx(tmp / "nginx.pid")
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_killed_run_leaves_a_container_that_the_next_run_removes(runs: Runs) -> None:
    assert "killed" in runs.killed_nginx, runs.killed_nginx  # nginx ran in the container
    assert runs.left == [NAME] and runs.left_nat, "the killed run left nothing to clean"
    assert f"removed container {NAME}, left by a run that ended" in runs.err, runs.err


def test_the_next_run_measures_both_legs_paired(runs: Runs) -> None:
    assert runs.code == 0, runs.err
    points = {(p["host"], p["profile"]): p for p in runs.doc["points"]}  # type: ignore[attr-defined]
    bare, ctr = points[("localhost", "static-rps")], points[(NAME, "static-rps")]
    assert ctr["platform"] == "container" and bare["platform"] == "baremetal"
    for p in (bare, ctr):
        assert p["status"] in ("measured", "invalid") and p["value"] > 0, p
    pair = ctr["pair"]
    assert pair["partner"] == "localhost baremetal 1c ht=off static-rps", pair
    assert pair["figure"] == "overhead" and pair["pairs"] == 1
    # one pair: its overhead is the ratio of the two legs' windows
    assert abs(pair["pct"] - 100 * (1 - ctr["value"] / bare["value"])) < 1e-6, pair
    # the pinning, read back from Podman, /proc and the cgroup, is the bare-metal leg's
    meta = ctr["metadata"]
    settings, cpus = meta["platform_settings"], meta["server_cpus"]
    assert bare["metadata"]["server_cpus"] == cpus
    assert (
        settings["cpuset_cpus"]
        == settings["proc_cpus_allowed"]
        == settings["cgroup_cpuset"]
        == cpus
    )
    assert settings["published"] == list(CTR) and settings["container_host"] == "localhost"


def test_the_run_leaves_no_container_nat_rule_or_listener(runs: Runs) -> None:
    assert runs.code == 0, runs.err
    assert _ours() == []
    assert _nat_rules(CTR[0]) == [] and _nat_rules(CTR[1]) == []
    assert not port_taken("127.0.0.1", CTR[0]) and not port_taken("127.0.0.1", CTR[1])
    assert load_processes(str(CTR[0])) == []
