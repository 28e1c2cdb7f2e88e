"""Issue 27, the parts done: resuming a complete run, an empty points table, and a run
whose process is gone named as such."""

from __future__ import annotations

from pathlib import Path

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
    run_id = fill(db, {"r640-01": ENV["r640-01"]}, [
        point("r640-01", "baremetal", 1, "rps", REPS),
        point("r640-01", "baremetal", 2, "rps", REPS, status=Status.SKIPPED),
    ])  # fmt: skip
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
        before.status, before.finished_at, before.note,
    )  # fmt: skip


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
        alive = {**owner_record(), "pid": child.pid}
        from sizing.provision import hostsafety

        alive["pid_start"] = hostsafety._start_ticks(child.pid)
        assert not process_gone(alive)
    finally:
        child.kill()
        child.wait()
    assert process_gone(alive)
    assert not process_gone({**alive, "controller": "another-machine"})  # cannot know there

    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        dead = store.start_run(inventory="lab", argv=["sizing", "run"], tool_version="0",
                               options={})  # fmt: skip
        store.set_owner(dead, alive)
        live = store.start_run(inventory="lab", argv=["sizing", "run"], tool_version="0",
                               options={})  # fmt: skip
        store.set_owner(live, {**owner_record(), "pid": os.getpid()})
    res = runner.invoke(app, ["results", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert f"run {dead} " in res.stdout and (
        f"abandoned (its process is gone; `sizing run --resume {dead}` measures the rest)"
        in res.stdout
    )
    doc = json.loads(runner.invoke(app, ["results", "--db", str(db), "--json"]).stdout)
    status = {r["run_id"]: (r["status"], r["stored_status"]) for r in doc["runs"]}
    assert status == {dead: ("abandoned", "running"), live: ("running", "running")}
    assert took_over_text("localhost", {**alive, "run_id": dead, "controller_host": "vm"}) == (
        f"localhost: took over the run lock of run {dead} (pid {child.pid} on vm): its "
        "process is gone"
    )
