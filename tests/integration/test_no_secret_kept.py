"""No secret is kept, and a full disk leaves nothing behind (issue 45), on this machine.

A real ``sizing run`` (real nginx, wrk, Ansible) with planted secrets: two ``-e`` values
(one ``key=value``, one JSON), ``VSPHERE_PASSWORD`` and another credential in its
environment, and ``--keep-artifacts``. None of them is anywhere afterwards: the database
(and its WAL), ``results --json`` and ``--csv``, the guide in every format (the PDF's text
as pdftotext reads it, and its bytes), the kept artifacts, and the temporary directory
(ansible-runner's private directories, which held the extravars). A runner directory that
a process killed with SIGKILL left is removed by that run. The guide is priced with a
catalog whose names hold control characters: every format shows them escaped.

The full disk is a real one: a tmpfs of 64 KiB, filled before the database is created.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Status
from sizing.store import Store, keep_for_recovery
from tests.integration.localnginx import stop_nginx, upstream_vars, write_inventory

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
cli = CliRunner()

BECOME = "PLANTED1-become-pw"
VCENTER = "PLANTED2-vcenter-pw"
VSPHERE = "PLANTED3-vsphere-pw"
TOKEN = "PLANTED4-api-token"
PLANTED = (BECOME, VCENTER, VSPHERE, TOKEN)
EVIL = "Evil\x07 cat\u202egnp.exe"  # a catalog name that would ring and reorder


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-it-"))
    path.chmod(0o755)
    yield path
    stop_nginx(path / "nginx.pid")
    stop_nginx(path / "up" / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def _sizing(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sizing", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)


def _stale_runner_dir() -> Path:
    """A runner directory with extravars, of a process killed with SIGKILL (a real one)."""
    code = (
        "import json, time\n"
        "from sizing.provision.runnerdir import private_dir\n"
        "p = private_dir(); (p / 'env').mkdir()\n"
        f"(p / 'env' / 'extravars').write_text(json.dumps({{'pw': {BECOME!r}}}))\n"
        "print(p, flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert child.stdout is not None
    path = Path(child.stdout.readline().strip())
    child.kill()
    child.communicate(timeout=10)
    assert (path / "env" / "extravars").exists()
    return path


def _found(where: Path) -> dict[str, list[str]]:
    """Each planted secret and the files under ``where`` that hold it."""
    hits: dict[str, list[str]] = {}
    for path in where.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            for secret in PLANTED:
                if secret.encode() in data:
                    hits.setdefault(secret, []).append(str(path.relative_to(where)))
    return hits


@pytest.mark.robust
def test_a_real_run_keeps_no_planted_secret_and_the_guide_escapes_control_characters(
    tmp_path: Path, tools: None
) -> None:
    inv = write_inventory(tmp_path, 28098, 28498, extra=upstream_vars(tmp_path, 28198))
    db, kept, out = tmp_path / "r.sqlite", tmp_path / "kept", tmp_path / "out"
    out.mkdir()
    stale = _stale_runner_dir()
    env = {**os.environ, "VSPHERE_PASSWORD": VSPHERE, "MY_API_TOKEN": TOKEN}
    run = _sizing(
        ["run", "-i", str(inv), "--cores", "1", "--repeat", "2", "--duration", "2", "--warmup", "0"]
        + ["-e", f"ansible_become_pass={BECOME}", "-e", json.dumps({"vcenter_pw": VCENTER})]
        + ["--keep-artifacts", str(kept), "--db", str(db)],
        env,
    )
    stdout, stderr = _finish(run, 900)
    assert run.returncode == 0, stderr
    assert not stale.exists()  # the killed process's extravars: removed by this run
    assert not list(Path(tempfile.gettempdir()).glob(f"sizing-runner-{run.pid}-*"))
    assert sorted(p.name for p in kept.iterdir())  # artifacts were kept

    catalog = tmp_path / "evil.yml"
    catalog.write_text(
        f"kind: catalog\nname: {json.dumps(EVIL)}\nservers:\n"
        "  - {cores: 1, price: 750}\n  - {cores: 2, price: 750}\n  - {cores: 4, price: 1300}\n"
    )
    for args, name in (
        (["results", "--json"], "results.json"),
        (["results", "--csv"], "results.csv"),
        (["results", "-v"], "results.txt"),
    ):
        shown = cli.invoke(app, [*args, "--db", str(db)])
        assert shown.exit_code == 0, shown.output
        (out / name).write_text(shown.stdout)
    for fmt in ("html", "md", "pdf"):
        made = _sizing(
            ["guide", "--db", str(db), "--catalog", str(catalog), "--out", str(out / f"g.{fmt}")]
        )
        _, err = _finish(made, 300)
        assert made.returncode == 0, err
    pdf_text = subprocess.run(
        ["pdftotext", str(out / "g.pdf"), "-"], capture_output=True, text=True, timeout=60
    ).stdout
    (out / "g.pdf.txt").write_text(pdf_text)

    assert _found(tmp_path) == {}  # the database, the outputs, the kept artifacts
    assert not [s for s in PLANTED if s in stdout + stderr]
    raw = sqlite3.connect(db)
    [argv] = [json.loads(r[0]) for r in raw.execute("SELECT argv FROM runs")]
    raw.close()
    assert "ansible_become_pass=<redacted>" in argv and "vcenter_pw=<redacted>" in argv
    commands = [json.loads(p.read_text()) for p in kept.rglob("command")]
    assert commands and all(c["env"]["VSPHERE_PASSWORD"] == "<redacted>" for c in commands)

    for name in ("g.html", "g.md", "g.pdf.txt"):
        text = (out / name).read_text()
        assert "\x07" not in text and "\u202e" not in text, name
        assert "\\x07" in text and "\\u202e" in text, name


# -- a full disk --------------------------------------------------------------------------


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real tmpfs of 64 KiB, filled to the last byte (the filler file stays)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
            check=True,
            capture_output=True,
            timeout=20,
        )
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for _ in range(64):  # bounded: 64 KiB is 16 of these
                os.write(fd, b"x" * 4096)
        except OSError:
            pass  # full
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False, capture_output=True, timeout=20)


@pytest.mark.noload
def test_a_database_that_cannot_be_created_leaves_nothing_behind(
    full_disk: Path, tmp_path: Path, tools: None
) -> None:
    """Was: a 0-byte sizing.sqlite that every later command refused, and a 0-byte
    recovery file that `sizing import` refused."""
    db = full_disk / "sizing.sqlite"
    inv = write_inventory(tmp_path, 28099, 28499)
    res = cli.invoke(
        app, ["run", "-i", str(inv), "--cores", "1", "--profile", "static-rps", "--db", str(db)]
    )
    assert res.exit_code == 6, res.output  # ExitStatus.STORE
    assert res.stderr.strip().splitlines()[-1] == (
        f"error: {db}: the disk is full: cannot write the results database"
    )
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]
    shown = cli.invoke(app, ["results", "--db", str(db)])
    assert shown.exit_code == 0 and shown.stdout.startswith("nothing measured yet")

    point = PointResult(PointKey("h", "baremetal", 1, "off", "rps"), Status.MEASURED, value=1.0)
    where, _ = keep_for_recovery(db, 1, point, [])
    try:
        assert where is not None and where.parent != full_disk  # the temporary directory
        assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]  # no empty file
    finally:
        if where is not None:
            where.unlink()

    (full_disk / "filler").unlink()  # space again: the same path makes a database
    Store(db).close()
    assert db.stat().st_size > 0
