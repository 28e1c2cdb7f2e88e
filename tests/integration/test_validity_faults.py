"""Each validity guard tripped by a real fault on this machine (nothing mocked).

Faults: a load generator squeezed onto a busy core, a TLS server that resumes sessions,
a server answering 503 for a share of requests, and a worker_connections limit below the
connection count. (nginx killed mid-repetition is in test_run_local.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sizing import paths
from sizing.cli import app
from tests.integration.localnginx import stop_nginx, write_inventory

runner = CliRunner()


@pytest.fixture
def tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sizing-faults-"))
    path.chmod(0o755)  # nginx workers (www-data) read the content here
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def profile_file(tmp: Path, base: str, name: str, **changes: object) -> Path:
    data = yaml.safe_load((paths.PROFILES / f"{base}.yml").read_text())
    data.update(name=name, **changes)
    out = tmp / f"{name}.yml"
    out.write_text(yaml.safe_dump(data))
    return out


def run(inv: Path, tmp: Path, profile: str, *extra: str) -> dict[str, object]:
    result = runner.invoke(
        app,
        ["run", "-i", str(inv), "--cores", "1", "--profile", profile, "--duration", "3",
         "--warmup", "1", "--repeat", "2", "--db", str(tmp / "r.sqlite"), "--json", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    point = doc["points"][0]
    assert isinstance(point, dict)
    return point


def test_busy_client_core_is_flagged_client_bound(tmp: Path, tools: None) -> None:
    """A CPU hog shares the load generator's core: the point measures the client."""
    inv = write_inventory(tmp, 28090, 28490)
    clean = run(inv, tmp, "tps")
    assert "client-bound" not in clean["flags"], clean  # RSA handshakes saturate nginx
    hog = subprocess.Popen(
        ["timeout", "120", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"],
        start_new_session=True,
    )
    try:
        squeezed = run(inv, tmp, "tps")
    finally:
        os.killpg(hog.pid, signal.SIGKILL)  # timeout and the shell loop it started
        hog.wait(timeout=10)
    assert squeezed["status"] == "invalid", squeezed
    assert "client-bound" in squeezed["flags"]
    assert "more cores or add" in str(squeezed["reason"])


def test_resumed_tls_sessions_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28091, 28491)
    prof = profile_file(tmp, "tps", "tps-resume", tls_session_reuse=True)
    point = run(inv, tmp, str(prof))
    assert point["status"] == "invalid", point
    assert "reused-sessions" in point["flags"]
    assert "resumed a session" in str(point["reason"])


def test_full_handshakes_are_proven(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28092, 28492)
    result = runner.invoke(
        app,
        ["run", "-i", str(inv), "--cores", "1", "--profile", "tps", "--duration", "2",
         "--warmup", "0", "--repeat", "2", "--db", str(tmp / "r.sqlite"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    point = json.loads(result.stdout)["points"][0]
    assert "reused-sessions" not in point["flags"] and "no-tls-proof" not in point["flags"]
    shown = runner.invoke(app, ["results", "--db", str(tmp / "r.sqlite"), "--json"])
    doc = json.loads(shown.stdout)
    meta = doc["runs"][0]["points"][0]["metadata"]
    assert any("ECDHE-RSA" in suite for suite in meta["tls_suites"]), meta["tls_suites"]


def test_server_errors_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28093, 28493, extra="          sizing_fault_locations: true")
    prof = profile_file(tmp, "rps", "rps-503", path="/fault/mixed")
    point = run(inv, tmp, str(prof))
    assert point["status"] == "invalid", point
    assert "errors" in point["flags"]
    assert "HTTP 4xx/5xx" in str(point["reason"])


def test_connections_beyond_worker_connections_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(
        tmp, 28094, 28494, extra="          sizing_nginx_worker_connections: 32"
    )
    # The pre-flight check sees the shortfall before any load and refuses, in one line.
    refused = runner.invoke(
        app,
        ["run", "-i", str(inv), "--cores", "1", "--profile", "rps", "--connections", "200",
         "--db", str(tmp / "r.sqlite")],
    )  # fmt: skip
    assert refused.exit_code != 0
    assert "worker_connections 32" in refused.stderr
    # Forced past it, the validity guard catches the same fault in the measurement.
    point = run(inv, tmp, "rps", "--connections", "200", "--skip-preflight")
    assert point["status"] == "invalid", point
    assert {"connections", "errors"} & set(point["flags"]), point
