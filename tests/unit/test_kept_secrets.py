"""No secret is kept (issue 45): the stored command line keeps the ``-e`` variables' names
and none of their values, in every spelling; ansible-runner's private directories are
private, owned by one process and removed once it is gone; kept artifacts hold neither the
environment's credentials nor the ``-e`` values."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.extravars import REDACTED, redact_argv
from sizing.provision import runnerdir
from sizing.store import Store
from sizing.store.schema import MIGRATIONS

SECRET = "PLANTED-s3cr3t"

SPELLINGS = [
    (["-e", f"ansible_become_pass={SECRET}"], ["-e", f"ansible_become_pass={REDACTED}"]),
    ([f"-eansible_become_pass={SECRET}"], [f"-eansible_become_pass={REDACTED}"]),
    (["--extra-vars", f"a=1 pw={SECRET}"], ["--extra-vars", f"a={REDACTED} pw={REDACTED}"]),
    ([f"--extra-vars=pw={SECRET}"], [f"--extra-vars=pw={REDACTED}"]),
    (["-e", json.dumps({"vcenter_pw": SECRET})], ["-e", f"vcenter_pw={REDACTED}"]),
    (["-e", f"{{vcenter_pw: {SECRET}, n: [1]}}"], ["-e", f"vcenter_pw={REDACTED} n={REDACTED}"]),
    (["-ve", f"pw={SECRET}"], ["-ve", f"pw={REDACTED}"]),  # a cluster: -v -e
    (["-e", f"{{broken: {SECRET}"], ["-e", REDACTED]),  # unreadable: nothing of it
    (["-e", f"'pw={SECRET}"], ["-e", REDACTED]),
    (["-e", "@vault.yml"], ["-e", "@vault.yml"]),  # the file's name only, never read
]


@pytest.mark.parametrize(("given", "kept"), SPELLINGS)
def test_every_spelling_of_extra_vars_keeps_names_only(given: list[str], kept: list[str]) -> None:
    argv = ["sizing", "run", "--cores", "1", *given, "--repeat", "2"]
    out = redact_argv(argv)
    assert out == ["sizing", "run", "--cores", "1", *kept, "--repeat", "2"]
    assert SECRET not in json.dumps(out)


def test_other_options_are_kept_as_given() -> None:
    argv = ["sizing", "run", "-iexample.yml", "-l", "e", "--label", "e=1", "--", "-e", "x"]
    assert redact_argv(argv) == argv  # -i's value, -l's value, a label, after --


def _runs_argv(db: Path) -> list[str]:
    raw = sqlite3.connect(db)
    try:
        return [str(r[0]) for r in raw.execute("SELECT argv FROM runs")]
    finally:
        raw.close()


def test_the_store_keeps_no_extra_vars_value(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    argv = ["sizing", "run", "-e", f"p={SECRET}", "-e", json.dumps({"q": SECRET})]
    with Store(db) as store:
        run = store.start_run(inventory="i", argv=argv, tool_version="t", options={})
        assert json.loads(store.get_run(run).argv) == [
            "sizing",
            "run",
            "-e",
            f"p={REDACTED}",
            "-e",
            f"q={REDACTED}",
        ]
    assert SECRET.encode() not in db.read_bytes()


def test_a_database_written_before_redaction_is_redacted_by_its_migration(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    raw = sqlite3.connect(db)
    for migrate in MIGRATIONS[:4]:
        migrate(raw)
    raw.execute("PRAGMA user_version = 4")
    raw.execute(
        "INSERT INTO runs (started_at, status, inventory, argv, tool_version) VALUES"
        " (0, 'complete', 'i', ?, 't')",
        (json.dumps(["sizing", "run", f"--extra-vars=pw={SECRET}"]),),
    )
    raw.commit()
    raw.close()
    Store(db).close()
    assert _runs_argv(db) == [json.dumps(["sizing", "run", f"--extra-vars=pw={REDACTED}"])]
    with sqlite3.connect(db) as raw:
        raw.execute("VACUUM")  # the old page is reused or freed: the value is gone
    assert SECRET.encode() not in db.read_bytes()


# -- the private directories ----------------------------------------------------------------


def test_a_private_directory_is_0700_and_named_after_its_process(tmp_path: Path) -> None:
    path = runnerdir.private_dir()
    try:
        assert path.stat().st_mode & 0o777 == 0o700
        assert path.name.startswith(f"{runnerdir.PREFIX}{os.getpid()}-")
        runnerdir.remove_stale(path.parent)
        assert path.exists()  # this process is alive: never removed
    finally:
        path.rmdir()


def _dir_of(tmp: Path, pid: int, ticks: int | None) -> Path:
    path = tmp / f"{runnerdir.PREFIX}{pid}-{ticks or 0}-abcd"
    (path / "env").mkdir(parents=True)
    (path / "env" / "extravars").write_text(json.dumps({"pw": SECRET}))
    return path


def test_only_directories_of_ended_processes_are_removed(tmp_path: Path) -> None:
    """A process killed with SIGKILL (a real child, killed here) leaves its directory; the
    next sizing removes it, and never that of a live process or of another program."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    ticks = runnerdir.start_ticks(child.pid)
    live = _dir_of(tmp_path, child.pid, ticks)
    me = _dir_of(tmp_path, os.getpid(), runnerdir.start_ticks(os.getpid()))
    reused = _dir_of(tmp_path, os.getpid(), 1)  # this pid, another start: an ended process
    older = tmp_path / f"{runnerdir.PREFIX}x1y2z3"  # an older sizing's: its owner is unknown
    older.mkdir()
    try:
        assert runnerdir.remove_stale(tmp_path) == [reused]
        assert live.exists() and me.exists() and older.exists()
        child.kill()
        child.wait(timeout=10)
        assert runnerdir.remove_stale(tmp_path) == [live]
        assert me.exists() and older.exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)


# -- what --keep-artifacts keeps --------------------------------------------------------------


def test_kept_artifacts_hold_no_credential_and_no_extra_vars_value(tmp_path: Path) -> None:
    env = {
        "VSPHERE_PASSWORD": "vc-" + SECRET,
        "GITHUB_TOKEN": "tok",  # short: removed from the environment by its name
        "APP_SECRET": "sec-" + SECRET,
        "ANSIBLE_BECOME_PASS": "bp-" + SECRET,
        "HOME": "/root",
    }
    private = tmp_path / "private"
    art = private / "artifacts" / "uuid"
    (art / "job_events").mkdir(parents=True)
    (art / "command").write_text(json.dumps({"command": ["ansible-playbook"], "env": env}))
    quoted = 'say "' + SECRET + '"'
    (art / "job_events" / "1.json").write_text(json.dumps({"res": {"msg": quoted}}))
    (art / "stdout").write_text(f"ok: {env['VSPHERE_PASSWORD']} {env['APP_SECRET']}\n")
    secrets = runnerdir.secret_values({"x": {"pw": quoted}, "n": 1}, env)
    runnerdir.keep_artifacts(private, tmp_path / "kept", "facts.yml", secrets)
    kept = tmp_path / "kept" / "001-facts" / "uuid"
    everything = "".join(p.read_text() for p in kept.rglob("*") if p.is_file())
    assert SECRET not in everything and "tok" not in everything
    command = json.loads((kept / "command").read_text())
    assert command["env"]["HOME"] == "/root"
    assert {k for k, v in command["env"].items() if v == REDACTED} == set(env) - {"HOME"}


@pytest.mark.parametrize(
    "name",
    ["VSPHERE_PASSWORD", "DB_PASSWORD", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_SECRET"]
    + ["ANSIBLE_BECOME_PASS", "ANSIBLE_VAULT_PASSWORD_FILE", "VCENTER_PW", "ANSIBLE_SSH_PASS"],
)
def test_credential_names(name: str) -> None:
    assert runnerdir.credential_name(name)


@pytest.mark.parametrize("name", ["HOME", "PATH", "ANSIBLE_CONFIG", "SSH_AUTH_SOCK", "USER"])
def test_other_names_are_not_credentials(name: str) -> None:
    assert not runnerdir.credential_name(name)
