"""Issue 24: the crypto ceiling of a host, measured through real Ansible on this machine
(``sizing probe-ceiling``, the same playbook ``sizing run`` uses before a TLS point),
with the real openssl, with a stub that reports a tiny ceiling (the stub stands in for
openssl only: a CPU with a ceiling that low does not exist here) and with one that fails.
No load is driven: openssl speed runs about 2 s per measurement."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.noload]

REPO = Path(__file__).resolve().parents[2]


def _probe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sizing", "probe-ceiling", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=REPO,
    )


def _stub(tmp_path: Path, body: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "openssl"
    stub.write_text("#!/bin/sh\n" + body)
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_probe_ceiling_measures_this_machines_signing_rate() -> None:
    done = _probe(dict(os.environ), "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["ceilings"]
    assert row["host"] == "localhost" and row["cpus"] == "0" and not row["problem"]
    assert row["openssl"].startswith("OpenSSL ")
    assert row["sign_per_core"] > 50  # any real core signs RSA-2048 far faster than this
    assert row["took_s"] < 30
    text = _probe(dict(os.environ))
    assert text.returncode == 0, text.stderr
    assert "localhost: " in text.stdout and "RSA-2048 signing" in text.stdout
    assert "ceilings:\n  - cpu_model: " in text.stdout or "CPU model unknown" in text.stdout


def test_a_stubbed_tiny_ceiling_bounds_the_extrapolation(tmp_path: Path) -> None:
    """openssl stubbed to report 500 signatures/s: probe-ceiling shows it, and a TPS
    series recorded with that ceiling is predicted at 8 cores at no more than 8 × 500 (a
    ceiling above what 4 cores measured, 3,800: the floor beyond the measured cores, at
    least what 4 cores carry, stays under it)."""
    env = _stub(
        tmp_path,
        'case "$1" in version) echo "OpenSSL 9.9.9 (stub)";;\n'
        '  *) echo "+DTP:2048:private:rsa:1"; echo "+F2:2:2048:500.000000:3000.000000";;\n'
        "esac\n",
    )
    done = _probe(env, "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["ceilings"]
    assert row["sign_per_core"] == 500.0 and row["openssl"] == "OpenSSL 9.9.9 (stub)"

    from typer.testing import CliRunner

    from sizing.cli import app
    from tests.unit.test_ceilings import _cell, _tps_db

    db = _tps_db(tmp_path / "db", row["sign_per_core"])
    res = CliRunner().invoke(
        app,
        [
            "table",
            "--json",
            "--db",
            str(db),
            "--source",
            "measured",
            "--allow-extrapolation",
            "--article-prices",
        ],
    )
    assert res.exit_code == 0, res.output
    cell: dict[str, Any] = _cell(json.loads(res.stdout), 8)
    assert cell["value"] == pytest.approx(4000.0) and cell["ci_high"] <= 4000.0 + 1e-6
    assert "ceiling-bound" in cell["flags"] and "bound by 8 × RSA-2048 signing" in cell["origin"]


def test_an_openssl_that_fails_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    env = _stub(
        tmp_path,
        'case "$1" in version) echo "OpenSSL 0.0 (broken)";;\n'
        '  *) echo "speed: Unknown algorithm rsa2048" >&2; exit 1;;\nesac\n',
    )
    done = _probe(env)
    assert done.returncode != 0
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert lines == [
        "error: localhost: crypto ceiling not measured: openssl speed rsa2048 failed (rc 1): "
        "speed: Unknown algorithm rsa2048"
    ], done.stderr
