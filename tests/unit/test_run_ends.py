"""A run always ends (issue 16): every exit path of the conductor marks the run
``interrupted`` or ``failed`` with the reason, stops its load and nginx, gives back its
host locks and restores the platforms (teardown), and restores the signal handlers.

Only the process boundary is replaced: ansible-runner (every playbook "runs" and is
recorded) and the run's stages (``sizing.sweep.STAGES``: one stage that raises what is
tested). The
signals are real: the test sends SIGTERM and SIGHUP to its own process.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sizing.provision.ansible as ansible_mod
import sizing.sweep as sweep_mod
from sizing import profiles
from sizing.errors import Interrupted, SizingError, ToolError
from sizing.model import PointKey, PointResult, Status
from sizing.provision.ansible import PlaybookResult
from sizing.signals import SignalStop, StopSignals, shielded
from sizing.store import Store, StoreError
from sizing.sweep import OpenRun, RunContext, RunOptions, Sweep

INVENTORY = """
all:
  vars: {ansible_connection: local}
  children:
    servers: {hosts: {web: {sizing_platform: baremetal}}}
    clients: {hosts: {load: {}}}
"""


class FakeBackend:
    def __init__(self) -> None:
        self.torn_down: list[str] = []

    def teardown(self, host: Any) -> None:
        self.torn_down.append(host.name)


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    def fake_run(playbook: str, inventory: Path, **kw: Any) -> PlaybookResult:
        calls.append((playbook, dict(kw.get("extravars") or {})))
        return PlaybookResult(playbook, "successful", 0, {}, {})

    monkeypatch.setattr(ansible_mod, "run_playbook", fake_run)
    return calls


def sweep(tmp_path: Path, keep_running: bool = False) -> tuple[RunContext, FakeBackend]:
    inv = tmp_path / "inv.yml"
    inv.write_text(INVENTORY)
    opts = RunOptions(
        inventory=inv,
        cores=(1,),
        hts=(),
        profiles=(profiles.load("rps"),),
        db=tmp_path / "r.sqlite",
        keep_running=keep_running,
    )
    ctx = RunContext.bind(opts)
    backend = FakeBackend()
    ctx.backends.made["baremetal"] = backend  # type: ignore[assignment]
    return ctx, backend


def failing(
    monkeypatch: pytest.MonkeyPatch, exc: Callable[[], BaseException], *, completes: bool = False
) -> None:
    """The run's stages replaced by one that prepares a server, provisions nginx, stores a
    point and fails (``completes``: a ``SystemExit`` there is the run completing)."""

    def stage(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
        web = ctx.inventory.hosts["web"]
        ctx.ledger.provisioned["web"] = web
        ctx.ledger.hosts_taken.servers.add("web")
        ctx.ledger.hosts_taken.load.update(["web", "load"])
        result = PointResult(PointKey("web", "baremetal", 1, "off", "rps"), Status.SKIPPED, "x")
        run.store.add_point(run.run_id, result, [])
        run.summary.points.append(result)
        try:
            raise exc()
        except SystemExit:
            if not completes:
                raise
            run.summary.status = "complete"  # type: ignore[assignment]
        return sweep

    monkeypatch.setattr(sweep_mod, "STAGES", (("fails", stage),))


def run_status(db: Path) -> tuple[str, str, int]:
    with Store.open_readonly(db) as store:
        [run] = store.runs()
        return run.status, run.note, len(store.points(run.id))


def send(sig: signal.Signals) -> Callable[[], BaseException]:
    def raise_it() -> BaseException:
        os.kill(os.getpid(), sig)  # the handler raises SignalStop at once
        return AssertionError("the signal did not stop the run")

    return raise_it


CASES = [
    ("bug", lambda: RuntimeError("a bug"), RuntimeError, "failed", "RuntimeError: a bug"),
    (
        "full disk",
        lambda: StoreError("r.sqlite", "the disk is full"),
        StoreError,
        "failed",
        "r.sqlite: the disk is full",
    ),
    ("sizing error", lambda: ToolError("wrk failed"), ToolError, "failed", "wrk failed"),
    ("ctrl-c", KeyboardInterrupt, Interrupted, "interrupted", "interrupted by the user (Ctrl-C)"),
    ("sigterm", send(signal.SIGTERM), Interrupted, "interrupted", "interrupted by SIGTERM"),
    ("sighup", send(signal.SIGHUP), Interrupted, "interrupted", "interrupted by SIGHUP"),
]


@pytest.mark.parametrize(
    ("exc", "raised", "status", "note"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_exit_path_ends_the_run_and_restores_the_platform(
    tmp_path: Path,
    played: list[tuple[str, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    exc: Callable[[], BaseException],
    raised: type[BaseException],
    status: str,
    note: str,
) -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    s, backend = sweep(tmp_path)
    failing(monkeypatch, exc)
    with pytest.raises(raised):
        sweep_mod.run(s)
    assert run_status(tmp_path / "r.sqlite") == (status, note, 1)  # the point is kept
    assert backend.torn_down == ["web"]  # the platform got its settings back
    [(playbook, end)] = played  # one Ansible run ends it
    assert playbook == "run-end.yml"
    assert end["sizing_load_hosts"] == ["load", "web"]  # no load left behind
    assert end["sizing_nginx_hosts"] == ["web"]  # nor nginx
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_a_complete_run_stops_nginx_but_not_the_load_and_keep_running_keeps_it(
    tmp_path: Path, played: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for keep in (False, True):
        played.clear()
        (tmp_path / str(keep)).mkdir()
        s, backend = sweep(tmp_path / str(keep), keep_running=keep)
        failing(monkeypatch, lambda: SystemExit(0), completes=True)
        sweep_mod.run(s)
        if keep:
            assert played == []  # nothing to give back: no Ansible run at all
        else:
            [(playbook, end)] = played
            assert playbook == "run-end.yml" and end["sizing_load_hosts"] == []
            assert end["sizing_nginx_hosts"] == ["web"]
        assert backend.torn_down == ["web"]


def test_a_signal_during_a_store_write_waits_for_it() -> None:
    """``shielded``: the point being written is kept, the stop comes right after."""
    written = []
    with StopSignals(), pytest.raises(SignalStop) as info:
        with shielded():
            os.kill(os.getpid(), signal.SIGTERM)
            written.append("point")  # still runs: the signal waits
        written.append("never")
    assert written == ["point"] and info.value.signum == signal.SIGTERM


def test_cleanup_is_not_cut_short_by_a_second_signal() -> None:
    done = []
    with StopSignals():
        with shielded(deliver=False):
            os.kill(os.getpid(), signal.SIGINT)
            done.append("cleanup")
        done.append("after")
    assert done == ["cleanup", "after"]


def test_store_error_is_a_sizing_error() -> None:
    assert issubclass(StoreError, SizingError)
