"""Many hosts over real SSH and real Ansible: one server and two clients in namespaces.

The lab (``netns.py``): ``sz-srv`` (198.18.7.10) and ``sz-c1``/``sz-c2`` (.21/.22) on a
bridge, each with its own sshd; the server's nginx has its own paths and ports. On this
2-core machine the server gets core 0 and both clients core 1, so figures are small and
noisy: the tests check orchestration (clients start together, rates sum, faults are
reported once, points are kept and resumed), never speed. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import Status
from sizing.store import Store

sys.path.insert(0, str(Path(__file__).parent))
import netns  # noqa: E402

# Not robust: beside a full machine its lab's runs failed in two make test runs of four (ci8,
# ci10; ci14 passed, once the lab had ports no other test's runs use), and there it added
# 252 s to the parallel phase for the 210 s it saves here: it runs among the measuring tests.
pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Two timed repetitions: the per-repetition checks (clients summed, started together).
SHORT = ["--duration", "1", "--warmup", "0", "--repeat", "2"]
# The fault and resume tests judge only which points were kept, failed and measured again:
# one 1-s window per point (each `sizing run` already costs ~25 s of provisioning).
ONE = ["--duration", "1", "--warmup", "0", "--repeat", "1"]
cli = CliRunner()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[netns.NetnsLab]:
    reason = netns.unavailable_reason()
    if reason:
        pytest.skip(reason)
    with netns.netns_lab(tmp_path_factory.mktemp("sz-lab")) as built:
        yield built


@pytest.fixture(scope="module")
def first_run(lab: netns.NetnsLab, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One 1-core rps point with two clients, measured once for the module."""
    db = tmp_path_factory.mktemp("sz-db") / "r.sqlite"
    result = cli.invoke(
        app,
        [
            "run",
            "-i",
            str(lab.inventory),
            "--cores",
            "1",
            "--profile",
            "static-rps",
            *SHORT,
            "--db",
            str(db),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.stderr + result.stdout
    return {
        "db": db,
        "doc": json.loads(result.stdout),
        "stderr": result.stderr,
        # a run that ends normally, without --keep-running, stops the server's nginx
        "nginx_left": alive(lab.nginx_dir / "nginx.pid"),
    }


def alive(pidfile: Path) -> bool:
    try:
        os.kill(int(pidfile.read_text().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def _run_sizing(*args: str) -> Any:
    return cli.invoke(app, ["run", *args])


def test_two_clients_start_together_and_their_rates_sum(first_run: dict[str, Any]) -> None:
    doc = first_run["doc"]
    assert doc["status"] == "complete"
    assert first_run["nginx_left"] is False  # stopped at the run's normal end
    [point] = doc["points"]
    assert (point["host"], point["cores"], point["profile"]) == ("sz-srv", 1, "static-rps")
    assert point["status"] in ("measured", "invalid"), point  # validity is the guards' call
    assert "network-bound" not in point["flags"]  # a 10 Gb/s veth is far from full
    with Store(first_run["db"]) as store:
        [stored] = store.points(doc["run_id"])
        meta = stored.result.metadata
        samples = store.samples(stored.id)
    timed = [(rep, s) for rep, s in samples if rep > 0]
    totals = {rep: s for rep, s in timed if s.metric == "requests_per_second"}
    per_client: dict[int, dict[str, float]] = {}
    for rep, s in timed:
        if s.metric == "requests_per_second.client":
            per_client.setdefault(rep, {})[str(s.metadata.client)] = s.value
    assert sorted(totals) == sorted(per_client)
    for rep, total in totals.items():
        # Both clients measured every repetition, and the point's rate is their sum.
        assert set(per_client[rep]) == {"sz-c1", "sz-c2"}
        assert all(v > 0 for v in per_client[rep].values())
        assert total.value == pytest.approx(sum(per_client[rep].values()), rel=1e-9)
        # They started together: one common start time, skew measured and small.
        skew = total.metadata.start_skew_s
        assert skew is not None and 0.0 <= skew < 1.0, skew
        # The server's network rates were sampled on its veth.
        net = total.metadata.server_net
        assert net is not None and net.interface == "eth0"
        assert net.tx_bytes_per_s is not None and net.tx_bytes_per_s > 0
        assert net.link_bytes_per_s == pytest.approx(10e9 / 8)  # veth: 10000 Mb/s
        # The clients' latency distributions were merged, weighted by requests.
        assert (total.metadata.latency.latency_count or 0) > 0
    # The point's merged latency covers every timed request of both clients.
    assert list(meta.env.clients or ()) == ["sz-c1", "sz-c2"]
    merged = meta.evidence.latency
    assert merged.latency_count == sum(
        s.metadata.latency.latency_count or 0 for s in totals.values()
    )
    assert merged.latency_p50_ms is not None and merged.latency_p90_ms is not None
    assert merged.latency_p99_ms is not None and merged.latency_max_ms is not None
    assert 0 < merged.latency_p50_ms <= merged.latency_p90_ms <= merged.latency_p99_ms
    assert merged.latency_p99_ms <= merged.latency_max_ms
    assert meta.evidence.server_net_interface == "eth0"


def test_plan_prints_points_hosts_and_commands_without_running(
    lab: netns.NetnsLab, tmp_path: Path
) -> None:
    db = tmp_path / "plan.sqlite"
    result = _run_sizing(
        "-i",
        str(lab.inventory),
        "--cores",
        "1,2",
        "--profile",
        "static-rps,static-tps",
        "--plan",
        "--probe",  # the real facts and pre-flight (--plan alone is offline)
        "--json",
        "--db",
        str(db),
    )
    assert result.exit_code == 0, result.stderr + result.stdout
    doc = json.loads(result.stdout)
    assert [h["name"] for h in doc["hosts"] if h["reachable"]] == ["sz-srv", "sz-c1", "sz-c2"]
    assert doc["preflight"] == []
    first = doc["points"][0]
    assert (first["cores"], first["profile"], first["status"]) == (1, "static-rps", "planned")
    assert first["server_cpus"] == "0" and first["worker_cpu_affinity"] == "1"
    argv = first["clients"][0]["argv"]
    assert argv[:4] == ["taskset", "-c", "1", "wrk"]
    assert "-s" in argv and argv[-1] == f"http://198.18.7.10:{netns.HTTP_PORT}/128b"
    assert not db.exists()  # nothing stored, nothing run
    text = _run_sizing(
        "-i",
        str(lab.inventory),
        "--cores",
        "1",
        "--profile",
        "static-tps",
        "--plan",
        "--probe",
        "--verbose",
    )
    assert text.exit_code == 0, text.stderr + text.stdout
    assert "sz-c2 (CPUs 1): taskset -c 1 wrk -t1 -c50" in text.stdout
    assert "-H 'Connection: close'" in text.stdout
    assert "pre-flight: all checks pass" in text.stdout


def test_unreachable_client_fails_preflight_in_one_line_and_keeps_points(
    lab: netns.NetnsLab, first_run: dict[str, Any]
) -> None:
    db = first_run["db"]
    c2 = lab.clients[1]
    lab.make_unreachable(c2)
    try:
        result = _run_sizing(
            "-i",
            str(lab.inventory),
            "--cores",
            "1",
            "--profile",
            "static-rps",
            *ONE,
            "--db",
            str(db),
        )
    finally:
        lab.restore(c2)
    assert result.exit_code == 4, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if "sz-c2" in ln]
    assert len(lines) == 1, result.stderr  # one clear line for the host
    assert "unreachable" in lines[0]
    assert "pre-flight checks failed" in result.stderr and "nothing was run" in result.stderr
    with Store(db) as store:
        runs = store.runs()
        assert runs[-1].status == "failed" and store.points(runs[-1].id) == []
        # The point measured before stays stored.
        assert len(store.points(first_run["doc"]["run_id"])) == 1


def test_client_lost_mid_sweep_is_reported_once_and_resume_measures_the_rest(
    lab: netns.NetnsLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.sqlite"
    c2 = lab.clients[1]
    original = Store.add_point
    calls: list[str] = []

    def add_point_then_lose_c2(self: Store, run_id: int, result: Any, samples: Any) -> int:
        point_id = original(self, run_id, result, samples)
        calls.append(result.key.profile)
        if len(calls) == 1:  # the first point is stored: now sz-c2 goes away
            lab.make_unreachable(c2)
        return point_id

    monkeypatch.setattr(Store, "add_point", add_point_then_lose_c2)
    try:
        result = _run_sizing(
            "-i",
            str(lab.inventory),
            "--cores",
            "1",
            "--profile",
            "static-rps,static-tps",
            *ONE,
            "--db",
            str(db),
            "--json",
        )
    finally:
        monkeypatch.setattr(Store, "add_point", original)
        lab.restore(c2)
    assert result.exit_code == 4, result.stderr
    assert result.stdout.strip(), result.stderr  # the run's document, or why not
    doc = json.loads(result.stdout)
    rps, tps = doc["points"]
    assert rps["status"] in ("measured", "invalid")
    assert tps["status"] == "failed" and tps["reason"].startswith("sz-c2: unreachable")
    # The host is reported once, as a warning, whatever the number of points it fails.
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: sz-c2")]
    assert len(warnings) == 1, result.stderr
    run_id = doc["run_id"]

    # sz-c2 is back: --resume measures only the missing (failed) point.
    again = _run_sizing("--resume", str(run_id), "--db", str(db), "--json")
    assert again.exit_code == 0, again.stderr
    redo = json.loads(again.stdout)
    assert redo["run_id"] == run_id
    assert [(p["profile"], p["status"] in ("measured", "invalid")) for p in redo["points"]] == [
        ("static-tps", True)
    ]
    with Store(db) as store:
        stored = [p.result for p in store.points(run_id)]
        assert [(r.key.profile, r.status is Status.FAILED) for r in stored] == [
            ("static-rps", False),
            ("static-tps", True),
            ("static-tps", False),
        ]
        assert store.get_run(run_id).status == "complete"


def _count_points(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute("SELECT count(*) FROM points").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_interrupted_run_resumes_with_only_the_missing_points(
    lab: netns.NetnsLab, tmp_path: Path
) -> None:
    db = tmp_path / "r.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sizing",
            "run",
            "-i",
            str(lab.inventory),
            "--cores",
            "1",
            "--profile",
            "static-rps,static-tps",
            *ONE,
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and proc.poll() is None and _count_points(db) < 1:
            time.sleep(0.5)
        if proc.poll() is not None:
            pytest.fail(f"the run ended before it could be interrupted: {proc.communicate()[1]}")
        if _count_points(db) != 1:  # say what the points were
            with sqlite3.connect(db, timeout=5) as con:
                rows = con.execute("SELECT profile, status, reason FROM points").fetchall()
            pytest.fail(f"expected 1 point stored before the interrupt, found {rows}")
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    with Store(db) as store:
        [run] = store.runs()
        assert run.status == "interrupted"
        assert [p.result.key.profile for p in store.points(run.id)] == ["static-rps"]

    result = _run_sizing("--resume", str(run.id), "--db", str(db), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [p["profile"] for p in doc["points"]] == ["static-tps"]  # rps not measured again
    # the crypto ceiling is measured once per run: the resumed part keeps the first part's
    assert "measuring the crypto ceiling" in err
    assert "measuring the crypto ceiling" not in result.stderr
    with Store(db) as store:
        assert len(store.runs()) == 1
        assert [p.result.key.profile for p in store.points(run.id)] == ["static-rps", "static-tps"]
        assert store.get_run(run.id).status == "complete"
