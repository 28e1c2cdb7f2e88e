"""A cgroup CPU limit over a load window, as the hosts' runner reads it
(playbooks/files/loadgen.py: ``cgroup_cpu``, ``limit_probe``, ``limit_delta``) and as sizing
sums it over a window's hosts (``sizing.measure.cpu.quota_limits``): the least quota and the
periods it throttled. The real read runs on a real cgroup this test makes (v2 ``cpu.max`` or
v1 ``cpu.cfs_quota_us``) with a process spinning in it; where this user may not make one
(not root, a read-only cgroup file system) that test is skipped and says why."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from sizing import paths
from sizing.loadproto import UpstreamProbe, WindowOutput
from sizing.measure.cpu import quota_limits


@pytest.fixture(scope="module")
def loadgen() -> Iterator[ModuleType]:
    files = str(paths.PLAYBOOKS / "files")  # the runner imports its loadproto from beside it
    sys.path.insert(0, files)
    try:
        yield importlib.import_module("loadgen")
    finally:
        sys.path.remove(files)


def window(index: int, limit: UpstreamProbe | None) -> WindowOutput:
    return WindowOutput(index=index, start=0.0, end=2.0, limit=limit)


def test_the_hosts_limits_give_the_least_quota_and_every_throttled_period() -> None:
    got = quota_limits(
        [
            window(1, UpstreamProbe(None, 2.0, 5)),
            window(1, UpstreamProbe(None, 0.5, 40)),
            window(1, None),  # a host without a limit
        ]
    )
    assert got == (0.5, 45)
    assert quota_limits([window(1, None)]) == (None, None)
    assert quota_limits([window(1, UpstreamProbe(None, None, 3))]) == (None, 3)


def test_a_windows_limit_survives_the_protocol() -> None:
    out = window(2, UpstreamProbe(None, 0.3, 17))
    back = WindowOutput.from_json(out.to_json())
    assert back.limit == UpstreamProbe(None, 0.3, 17)
    assert WindowOutput.from_json(window(2, None).to_json()).limit is None


def test_the_delta_is_the_periods_throttled_in_the_window(loadgen: ModuleType) -> None:
    """Per cgroup: the counts that rose are summed, and the quota named is the least of
    the cgroups that throttled (an idle client's smaller quota is not the one that held)."""
    before = {"/srv": (2.0, 100), "/client": (0.5, 7), "/": (None, 0)}
    after = {"/srv": (2.0, 160), "/client": (0.5, 7), "/": (None, 0)}
    got = loadgen.limit_delta(before, after).to_json()
    assert got == {"cpu_s": None, "quota_cpus": 2.0, "throttled": 60}
    # nothing throttled: the least quota there is, and a count of 0
    calm = loadgen.limit_delta(before, before).to_json()
    assert calm == {"cpu_s": None, "quota_cpus": 0.5, "throttled": 0}
    # no cgroup with a quota: nothing said
    assert loadgen.limit_delta({"/": (None, 0)}, {"/": (None, 0)}) is None


def test_a_cgroup_shared_by_nginx_and_the_runner_is_counted_once(
    loadgen: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The nginx under test in the runner's own cgroup (a one-host run, a container): its
    limit's throttling is one count, not one per process; a parent's limit (a slice's
    quota) is read with the child's."""
    chains = {
        os.getpid(): {"/slice/run": (None, 0), "/slice": (1.0, 40), "/": (None, 0)},
        4242: {"/slice/run": (None, 0), "/slice": (1.0, 40), "/": (None, 0)},
    }
    monkeypatch.setattr(loadgen, "cgroup_chain", lambda pid: chains.get(pid, {}))
    monkeypatch.setattr(loadgen, "worker_pid", lambda pidfile: 4242)
    got = loadgen.limit_probe(str(tmp_path / "nginx.pid"))
    assert got == {"/slice/run": (None, 0), "/slice": (1.0, 40), "/": (None, 0)}
    after = {k: (q, (n or 0) + (25 if k == "/slice" else 0)) for k, (q, n) in got.items()}
    assert loadgen.limit_delta(got, after).to_json()["throttled"] == 25


def _cgroup_root() -> Path | None:
    if os.geteuid() != 0:
        return None
    v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
    root = Path("/sys/fs/cgroup") if v2 else Path("/sys/fs/cgroup/cpu")
    return root if os.access(root, os.W_OK) else None


def test_a_real_parent_quota_and_its_throttling_are_read(loadgen: ModuleType) -> None:
    """A quota on a parent cgroup (a slice's, a pod's) holds a process in a child cgroup
    without one: the child's own files say nothing, the parent's count the throttling."""
    root = _cgroup_root()
    if root is None:
        pytest.skip("needs root and a writable cgroup file system to make a cgroup with a quota")
    group = root / f"sizing-limit-test-{os.getpid()}"
    child = group / "run"
    group.mkdir()
    child.mkdir()
    spin = None
    try:
        if (root / "cgroup.controllers").exists():
            (group / "cgroup.subtree_control").write_text("+cpu\n")
            (group / "cpu.max").write_text("20000 100000\n")  # 0.2 CPU
        else:
            (group / "cpu.cfs_period_us").write_text("100000\n")
            (group / "cpu.cfs_quota_us").write_text("20000\n")
        # the shell joins the child cgroup and becomes the loop (exec): killing its PID ends it
        spin = subprocess.Popen(
            ["sh", "-c", f"echo $$ > {child}/cgroup.procs && exec sh -c 'while :; do :; done'"],
            start_new_session=True,
        )
        # wait until the shell has joined the child cgroup (before, it is in this test's own,
        # which may have a quota of its own: a machine held to less CPU)
        joined = f"/{child.relative_to(root)}"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            text = Path(f"/proc/{spin.pid}/cgroup").read_text()
            if joined in (line.split(":", 2)[-1] for line in text.splitlines()):
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"the spinning shell never joined {child}")
        first = loadgen.cgroup_cpu(spin.pid)
        assert first[0] == pytest.approx(0.2)
        time.sleep(0.6)  # a spinning process meets its quota every 100 ms period
        quota, throttled = loadgen.cgroup_cpu(spin.pid)
        assert quota == pytest.approx(0.2)
        assert throttled is not None and first[1] is not None and throttled - first[1] >= 3
        chain = loadgen.cgroup_chain(spin.pid)
        assert chain[str(child)][0] is None and chain[str(group)][0] == pytest.approx(0.2)
        # this test's own process is outside the limit
        assert loadgen.cgroup_cpu(os.getpid())[0] != pytest.approx(0.2)
    finally:
        if spin is not None:
            os.killpg(spin.pid, signal.SIGKILL)
            spin.wait(timeout=5)
        for d in (child, group):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)
    assert not group.exists(), f"{group} was left behind"
