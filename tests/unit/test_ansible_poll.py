"""Ansible's internal poll interval is sizing's while load runs (docs/validity.md, Fidelity).

ansible-core reads ``internal_poll_interval`` from an ansible.cfg only; the environment
variable sizing used to set was never read, and the controller woke 900 times a second
during every load window. The callback next to the playbooks sets it from
``SIZING_ANSIBLE_POLL_INTERVAL``; the real ansible-playbook run below counts its sleeps.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ansible import constants as C

from sizing import paths
from sizing.provision.ansible import ANSIBLE_ENV, _envvars

PLUGIN = paths.PLAYBOOKS / "callback_plugins" / "sizing_poll.py"


def _wakeups(pid: int) -> int:
    """The voluntary context switches of ``pid`` so far: one per sleep of the poll loop."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches in /proc/PID/status")


def _plugin() -> object:
    spec = importlib.util.spec_from_file_location("sizing_poll_test", PLUGIN)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    ("given", "want"), [("0.05", 0.05), ("0.005", 0.005), ("", None), ("lots", None), ("9", None)]
)
def test_the_callback_sets_the_interval_it_is_given(
    monkeypatch: pytest.MonkeyPatch, given: str, want: float | None
) -> None:
    before = C.DEFAULT_INTERNAL_POLL_INTERVAL
    monkeypatch.setenv("SIZING_ANSIBLE_POLL_INTERVAL", given)
    try:
        _plugin().CallbackModule()  # type: ignore[attr-defined]
        assert C.DEFAULT_INTERNAL_POLL_INTERVAL == (before if want is None else want)
    finally:
        C.DEFAULT_INTERNAL_POLL_INTERVAL = before


def test_sizing_asks_a_slow_poll_while_load_runs_and_a_fast_one_otherwise() -> None:
    assert "ANSIBLE_INTERNAL_POLL_INTERVAL" not in ANSIBLE_ENV  # ansible-core ignores it
    assert float(_envvars("load.yml")["SIZING_ANSIBLE_POLL_INTERVAL"]) >= 0.05
    assert float(_envvars("nginx.yml")["SIZING_ANSIBLE_POLL_INTERVAL"]) <= 0.01


SLEEP = "7.25"  # the task's own argument: how the test finds it running


def _task_running() -> bool:
    """Whether the playbook's task (``sleep 7.25``) runs: the controller then only waits."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().split(b"\0")[:2] == [b"sleep", SLEEP.encode()]:
                return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_waiting_playbook_wakes_the_controller_rarely(tmp_path: Path) -> None:
    """A real ansible-playbook beside the callback (its directory next to the playbook, as
    the shipped playbooks have it), measured for 1 s while its task runs: its controller
    wakes a few times a second, not about 900 (the 1 ms poll took 2.4% of a CPU). The
    window starts once the task is seen running, however long Ansible takes to start."""
    (tmp_path / "callback_plugins").symlink_to(paths.PLAYBOOKS / "callback_plugins")
    book = tmp_path / "wait.yml"
    book.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        f"    - ansible.builtin.command: sleep {SLEEP}\n"
    )
    inv = tmp_path / "inv.ini"
    # this Python runs the module: interpreter discovery may find a shim that does not
    inv.write_text(
        f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    )
    env = {**os.environ, "SIZING_ANSIBLE_POLL_INTERVAL": "0.05"}
    exe = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.Popen(
        [str(exe), "-i", str(inv), str(book)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _task_running():
            assert proc.poll() is None and time.monotonic() < deadline, "the task never ran"
            time.sleep(0.05)
        time.sleep(0.2)  # the controller settles into its wait
        woke = [_wakeups(proc.pid)]
        time.sleep(1.0)
        woke.append(_wakeups(proc.pid))
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # 1 s of waiting: the 1 ms poll woke the controller about 900 times, 0.05 s about 20
    assert woke[1] - woke[0] <= 100, woke
