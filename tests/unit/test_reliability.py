"""Issue 27, the parts done: resuming a complete run, an empty points table, and a run
whose process is gone named as such."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import Status
from sizing.report.render.points import points_table
from tests.unit.test_sources import ENV, REPS, fill, point

runner = CliRunner()


def test_resuming_a_complete_run_says_there_is_nothing_to_measure(tmp_path: Path) -> None:
    """Was an internal TypeError (an empty points table). The run is not reopened: its
    status and its points stay as they were, and no host is contacted (the run's
    inventory, "lab", does not even exist here)."""
    from sizing.store import Store

    db = tmp_path / "s.sqlite"
    run_id = fill(
        db,
        {"r640-01": ENV["r640-01"]},
        [
            point("r640-01", "baremetal", 1, "rps", REPS),
            point("r640-01", "baremetal", 2, "rps", REPS, status=Status.SKIPPED),
        ],
    )
    with Store.open_readonly(db) as store:
        before = store.get_run(run_id)
    res = runner.invoke(app, ["run", "--resume", str(run_id), "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == (
        f"run {run_id} is complete: nothing left to measure (2 point(s) stored; "
        f"`sizing results --run {run_id}` shows them)"
    )
    with Store.open_readonly(db) as store:
        after = store.get_run(run_id)
        assert len(store.points(run_id)) == 2
    assert (after.status, after.finished_at, after.note) == (
        before.status,
        before.finished_at,
        before.note,
    )


def test_a_table_of_no_points_is_its_header() -> None:
    lines = points_table([], {}).splitlines()
    assert lines[0].split()[:2] == ["point", "median"] and len(lines) >= 2


def test_a_run_whose_process_is_gone_is_shown_abandoned(tmp_path: Path) -> None:
    """A run killed with SIGKILL stays 'running' in the store; results names it abandoned
    when the process its record names has ended (a real process, started and reaped here),
    and running while it lives. The lock's take-over line names the run."""
    import json
    import os
    import subprocess
    import sys

    from sizing.provision.hostsafety import owner_record, process_gone, took_over_text
    from sizing.store import Store

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        from sizing.provision import hostsafety

        alive = replace(owner_record(), pid=child.pid, pid_start=hostsafety.start_ticks(child.pid))
        assert not process_gone(alive)
    finally:
        child.kill()
        child.wait()
    assert process_gone(alive)
    assert not process_gone(replace(alive, controller="another-machine"))  # cannot know there

    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        # a long inventory path: the run's line is folded, not widened (issue 62)
        dead = store.start_run(
            inventory="/work/main/inventories/" + "a-long-site-name/" * 3 + "local.yml",
            argv=["sizing", "run"],
            tool_version="0",
            options={},
        )
        store.set_owner(dead, alive)
        live = store.start_run(
            inventory="lab", argv=["sizing", "run"], tool_version="0", options={}
        )
        store.set_owner(live, replace(owner_record(), pid=os.getpid()))
    res = runner.invoke(app, ["results", "--db", str(db)])
    assert res.exit_code == 0, res.output
    words = " ".join(res.stdout.split())
    assert f"run {dead} " in res.stdout and (
        f"abandoned (its process is gone; `sizing run --resume {dead}` measures the rest)" in words
    )
    assert max(len(line) for line in res.stdout.splitlines()) <= 100
    doc = json.loads(runner.invoke(app, ["results", "--db", str(db), "--json"]).stdout)
    status = {r["run_id"]: (r["status"], r["stored_status"]) for r in doc["runs"]}
    assert status == {dead: ("abandoned", "running"), live: ("running", "running")}
    assert took_over_text("localhost", replace(alive, run_id=dead, controller_host="vm")) == (
        f"localhost: took over the run lock of run {dead} (pid {child.pid} on vm): its "
        "process is gone"
    )


def test_the_offline_plan_checks_client_cpus_and_one_machine_named_twice(tmp_path: Path) -> None:
    """Issue 27: `--plan` accepted a client pinned to CPUs this machine lacks and two
    servers that are this machine under two names; now both are inventory problems, said
    offline (nothing contacted), and the plan exits non-zero."""
    from sizing.errors import ExitStatus

    inv = tmp_path / "two.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: local\n  children:\n    servers:\n"
        "      hosts:\n        web1: {sizing_platform: baremetal}\n"
        "        web2: {sizing_platform: baremetal}\n    clients:\n      hosts:\n"
        '        localhost: {sizing_client_cpus: "4096-4097"}\n'
    )
    res = runner.invoke(
        app, ["run", "--plan", "-i", str(inv), "--cores", "1", "--profile", "static-rps"]
    )
    assert res.exit_code == ExitStatus.HOST, res.output
    out = res.stdout.replace("\n    ", " ")  # problems are wrapped at 100 columns
    assert "inventory problems (checked offline; the run would stop before any load):" in out
    assert (
        "localhost: the load generator would be pinned to CPU(s) 4096-4097, which the host "
        "does not have online (online: " in out
    )
    assert "web1 and web2 are the same machine (this machine (loopback))" in out
    one = tmp_path / "one.yml"
    one.write_text(
        inv.read_text()
        .replace("        web2: {sizing_platform: baremetal}\n", "")
        .replace("4096-4097", "0")
    )
    ok = runner.invoke(
        app, ["run", "--plan", "-i", str(one), "--cores", "1", "--profile", "static-rps"]
    )
    assert ok.exit_code == 0, ok.output
    assert "pre-flight: not run offline" in ok.stdout


def test_a_database_deleted_in_use_is_said_so_with_its_own_exit_code(tmp_path: Path) -> None:
    """Issue 27: it was "readonly database", exit 3 (input). SQLite refuses to write a
    file unlinked under it (SQLITE_READONLY_DBMOVED): said as what happened, exit 6."""
    import pytest

    from sizing.errors import ExitStatus
    from sizing.store import Store, StoreError

    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        run_id = store.start_run(inventory="lab", argv=["sizing"], tool_version="0", options={})
        db.unlink()
        with pytest.raises(StoreError) as info:
            store.finish_run(run_id, "complete")
    assert info.value.code == ExitStatus.STORE
    assert str(info.value) == (
        f"{db}: the results database was deleted or moved while sizing used it"
    )


def test_resuming_a_run_that_is_still_measuring_is_refused_before_touching_it(
    tmp_path: Path,
) -> None:
    """Issue 27: the run was reopened, then refused by the host lock and marked failed with
    the second process's reason. A live process (started here) holds the run."""
    import subprocess
    import sys

    from sizing.errors import ExitStatus
    from sizing.paths import DEFAULT_INVENTORY
    from sizing.provision import hostsafety
    from sizing.store import Store

    db = tmp_path / "s.sqlite"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with Store(db) as store:
            run_id = store.start_run(
                inventory=str(DEFAULT_INVENTORY),
                argv=["sizing"],
                tool_version="0",
                options={"cores": [1]},
            )
            owner = replace(
                hostsafety.owner_record(),
                pid=child.pid,
                pid_start=hostsafety.start_ticks(child.pid),
            )
            store.set_owner(run_id, owner)
        res = runner.invoke(app, ["run", "--resume", str(run_id), "--db", str(db)])
    finally:
        child.kill()
        child.wait()
    assert res.exit_code == ExitStatus.USAGE, res.output
    assert res.stderr.strip() == (
        f"error: --resume {run_id}: run {run_id} is still measuring (pid {child.pid} on "
        f"{owner.controller_host}); wait for it to end, or stop it (Ctrl-C, or kill that "
        "pid), then resume"
    )
    with Store.open_readonly(db) as store:
        run = store.get_run(run_id)
    assert (run.status, run.finished_at, run.note) == ("running", None, "")


def test_resuming_a_complete_run_with_a_failed_point_is_not_short_cut(tmp_path: Path) -> None:
    """A complete run that still has a failed point (a host lost mid-sweep) is resumed for
    real: the short cut is only for a run with nothing to retry."""
    from sizing.app.run import resume
    from sizing.sweep import RunOptions

    def complete(db: Path, run_id: int) -> bool:
        given = RunOptions(inventory=Path("x"), cores=(1,), hts=(), profiles=(), db=db)
        return resume(given, run_id).complete

    db = tmp_path / "s.sqlite"
    run_id = fill(
        db,
        {"r640-01": ENV["r640-01"]},
        [
            point("r640-01", "baremetal", 1, "rps", REPS),
            point("r640-01", "baremetal", 2, "rps", REPS, status=Status.FAILED),
        ],
    )
    assert complete(db, run_id) is False
    done = tmp_path / "d.sqlite"
    done_id = fill(
        done, {"r640-01": ENV["r640-01"]}, [point("r640-01", "baremetal", 1, "rps", REPS)]
    )
    assert complete(done, done_id) is True


def _fleet(tmp_path: Path, servers: int, clients: int) -> Path:
    """A generated inventory (benchmarks/plan_scale's): declared CPUs, TEST-NET addresses,
    planned offline. Read only by :func:`_plan`, without a network (tests/offline.py)."""
    src = (Path(__file__).resolve().parents[2] / "benchmarks" / "plan_scale").read_text()
    ns: dict[str, object] = {"__file__": "plan_scale"}
    exec(compile(src.split('if __name__ == "__main__":')[0], "plan_scale", "exec"), ns)
    inv = tmp_path / "fleet.yml"
    ns["inventory"](inv, servers, clients)  # type: ignore[operator]
    return inv


class _Done:
    def __init__(self, proc: Any) -> None:
        self.exit_code, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.output = proc.stdout + proc.stderr


def _plan(args: list[str]) -> _Done:
    """``sizing <args>`` in a child process in an empty network namespace (unshare -n)."""
    import subprocess
    import sys

    from tests.offline import unshare_n

    proc = subprocess.run(
        [unshare_n(), "-n", sys.executable, "-m", "sizing", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return _Done(proc)


def test_the_default_plan_is_a_summary_per_server_with_the_estimated_time(
    tmp_path: Path,
) -> None:
    """Issue 27: --plan printed every client's command of every point (1.6 million lines for
    1,000 x 100). The default text names each server's points, CPU sets and clients once,
    and the estimated time; --verbose and --json keep every command."""
    inv = _fleet(tmp_path, 3, 12)
    args = ["run", "--plan", "-i", str(inv), "--cores", "1,2", "--profile", "rps"]
    short = _plan(args)
    assert short.exit_code == 0, short.output
    out = short.stdout
    assert out.count("    nginx on CPUs: 1c HT off 0; 2c HT off 0-1") == 3
    assert out.count("    clients: load000, load001, ... load011 (12 hosts) (CPUs 0-7)") == 3
    assert "taskset" not in out and all(len(x) <= 100 for x in out.splitlines())
    # 6 points x (3 s warm-up + 3 x 10 s) to (+ 7 more batches of 10 s), with each batch's
    # lead, each point's provisioning, the clients' preparation (sizing.plan.estimate)
    said = " ".join(out.split())
    assert "estimated time: 3 min 55 s to 17 min 34 s (6 point(s) in 6 configuration(s);" in said
    full = _plan([*args, "--verbose"])
    assert full.stdout.count("taskset -c 0-7 wrk") == 6 * 12
    import json

    doc = json.loads(_plan([*args, "--json"]).stdout)
    assert len(doc["points"]) == 6 and len(doc["points"][0]["clients"]) == 12
    from sizing.plan.estimate import BATCH_S, CONFIG_S, PROVISION_S
    from sizing.sweep.prepare import CLIENTS_S

    windows = 3 + 1 + 3 * (10 + 1) - 1
    setup = [PROVISION_S[i] + CONFIG_S["baremetal"][i] + BATCH_S[i] for i in (0, 1)]
    assert doc["estimate"] == {
        "points": 6,
        "configs": 6,
        "low_s": round(6 * (setup[0] + windows) + CLIENTS_S[0]),
        "high_s": round(6 * (setup[1] + windows + 7 * (10 + BATCH_S[1])) + CLIENTS_S[1]),
        "overhead_s": round(6 * setup[0] + CLIENTS_S[0]),
    }


def test_sample_measures_n_servers_per_hardware_identity(tmp_path: Path) -> None:
    import json

    inv = _fleet(tmp_path, 7, 2)
    text = inv.read_text().replace(  # srv0006 is other hardware: its own identity
        "srv0006: {ansible_host: 192.0.2.7, sizing_address: '10.0.6.1', sizing_platform: "
        "baremetal, sizing_cpu: {model: Xeon Gold, sockets: 2, cores_per_socket: 16",
        "srv0006: {ansible_host: 192.0.2.7, sizing_address: '10.0.6.1', sizing_platform: "
        "baremetal, sizing_cpu: {model: EPYC, sockets: 1, cores_per_socket: 32",
    )
    assert text != inv.read_text()
    inv.write_text(text)
    res = _plan(
        [
            "run",
            "--plan",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--profile",
            "rps",
            "--sample",
            "2",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert sorted({p["host"] for p in doc["points"]}) == ["srv0000", "srv0001", "srv0006"]
    stands = {s["host"]: s["stands_for"] for s in doc["servers"]}
    assert stands == {
        "srv0000": ["srv0002", "srv0004"],
        "srv0001": ["srv0003", "srv0005"],
        "srv0006": [],
    }
    bad = _plan(["run", "--plan", "-i", str(inv), "--sample", "0"])
    assert bad.exit_code == 2
    assert "--sample must be at least 1 server per hardware identity, not 0" in bad.stderr


def test_a_bad_option_value_is_one_line_through_the_real_entry_point() -> None:
    """Click's own errors (a value out of an option's range, an unknown option or command)
    were a usage block of three lines; through `sizing` they are one line, exit 2."""
    import subprocess
    import sys

    cases = {
        (
            "run",
            "--duration",
            "inf",
            "--plan",
        ): "error: --duration: inf is not in the range 1<=x<=3600. (sizing run --help)",
        ("run", "--bogus"): "error: No such option: --bogus (sizing run --help)",
        ("bogus",): "error: No such command 'bogus'. (sizing --help)",
        ("recommend", "--rps"): "error: Option '--rps' requires an argument.",
    }
    for argv, line in cases.items():
        res = subprocess.run(
            [sys.executable, "-m", "sizing", *argv], capture_output=True, text=True, timeout=60
        )
        assert (res.returncode, res.stderr.strip(), res.stdout) == (2, line, ""), argv
    shown = subprocess.run(
        [sys.executable, "-m", "sizing", "inventory"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 2 and "Inspect and validate inventories." in shown.stdout + (
        shown.stderr
    )


def test_a_client_cpulist_written_for_a_bigger_host_is_refused_offline(tmp_path: Path) -> None:
    """`sizing_client_cpus: 0-4095` on this machine: the planner pinned wrk to the CPUs it
    found and said nothing; the CPUs the list names and the host lacks are now a line."""
    inv = tmp_path / "cpus.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_connection: local\n  children:\n    servers:\n"
        "      hosts:\n        localhost: {}\n    clients:\n      hosts:\n"
        '        localhost: {sizing_client_cpus: "0-4095"}\n'
    )
    res = runner.invoke(
        app, ["run", "--plan", "-i", str(inv), "--cores", "1", "--profile", "static-rps"]
    )
    assert res.exit_code == 4, res.output
    unwrapped = res.stdout.replace("\n    ", " ")  # problems are wrapped at 100 columns
    [line] = [ln for ln in unwrapped.splitlines() if "would be pinned" in ln]
    assert "-4095, which the host does not have online (online: 0-" in line
