"""Leases in the results database, on both engines (``store_url``): taken all or none,
refused while another live process holds one (one line naming the run and pid, never an
address or token), renewed by their holder, taken over once expired or once their holder
is known gone, given back; two processes racing for one expired lease: exactly one wins.

Real engines (SQLite, the session's PostgreSQL cluster); the racing processes are real
processes. No mock.
"""

from __future__ import annotations

import json
import multiprocessing
import time

import pytest

from sizing.errors import ExitStatus
from sizing.paths import Database
from sizing.records import LockOwner
from sizing.store import Store
from sizing.store.leases import LeaseHeld, LeaseKeeper, leases, release, renew, take

A = LockOwner(controller="m-a", controller_host="ctl-a", pid=101, pid_start=1)
B = LockOwner(controller="m-b", controller_host="ctl-b", pid=202, pid_start=2)


def test_a_lease_is_taken_refused_renewed_and_given_back(store_url: Database) -> None:
    with Store(store_url) as store:
        assert take(store, ["run:1", "host:r640-01"], run_id=1, token="ta", owner=A) == []
        with pytest.raises(LeaseHeld) as got:
            take(store, ["host:r640-02", "host:r640-01"], run_id=2, token="tb", owner=B)
        line = str(got.value)
        assert got.value.code == ExitStatus.STORE and "\n" not in line
        assert "host r640-01 is held by another sizing run (run 1, pid 101 on ctl-a" in line
        assert "ta" not in line.split("(", 1)[1]  # the token is never said
        # all or none: the free host was not kept by the refused call
        assert [x.name for x in leases(store)] == ["host:r640-01", "run:1"]
        assert renew(store, "ta") == 2 and renew(store, "tb") == 0
        assert take(store, ["run:1"], run_id=1, token="ta", owner=A) == []  # its own: renewed
        release(store, "ta")
        assert leases(store) == []
        assert take(store, ["host:r640-01"], run_id=2, token="tb", owner=B) == []


def test_an_expired_lease_or_a_gone_holder_is_taken_over(store_url: Database) -> None:
    with Store(store_url) as store:
        take(store, ["run:1"], run_id=1, token="ta", owner=A, seconds=0.2)
        take(store, ["run:2"], run_id=2, token="tb", owner=B, seconds=600)
        (held,) = leases(store, ["run:1"])
        assert not held.expired and held.expires_at == pytest.approx(held.renewed_at + 0.2)
        time.sleep(0.3)
        assert leases(store, ["run:1"])[0].expired
        (old,) = take(store, ["run:1"], run_id=1, token="tc", owner=B)
        assert old.token == "ta" and old.owner.pid == 101
        assert renew(store, "ta") == 0  # the dead holder, back, holds nothing
        with pytest.raises(LeaseHeld):
            take(store, ["run:2"], run_id=2, token="tc", owner=A)
        (gone,) = take(store, ["run:2"], run_id=2, token="tc", owner=A, gone=lambda o: o.pid == 202)
        assert gone.token == "tb"
        assert {x.name: x.token for x in leases(store)} == {"run:1": "tc", "run:2": "tc"}


def test_the_keeper_renews_until_stopped(
    store_url: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIZING_LEASE_S", "0.5")
    with Store(store_url) as store:
        take(store, ["run:1"], run_id=1, token="ta", owner=A)
        keeper = LeaseKeeper(store.path, "ta", held=1).start()
        try:
            time.sleep(0.8)  # past the lease time: renewed meanwhile
            assert not leases(store)[0].expired and not keeper.lost
        finally:
            keeper.stop()
        time.sleep(0.6)
        assert leases(store)[0].expired
        keeper = LeaseKeeper(store.path, "ta", held=1).start()
        take(store, ["run:1"], run_id=1, token="tb", owner=B)  # expired: taken over
        try:
            deadline = time.monotonic() + 3
            while not keeper.lost and time.monotonic() < deadline:
                time.sleep(0.05)
            assert keeper.lost  # its next renewal found the lease gone
        finally:
            keeper.stop()


def _race(where: str, token: str, start: float, out: multiprocessing.Queue) -> None:
    with Store(where) as store:
        time.sleep(max(0.0, start - time.time()))
        try:
            took = take(store, ["host:r640-01"], run_id=9, token=token, owner=B)
            out.put((token, "took", len(took)))
        except LeaseHeld:
            out.put((token, "refused", 0))


def test_two_processes_racing_for_an_expired_lease_one_wins(store_url: Database) -> None:
    with Store(store_url) as store:
        take(store, ["host:r640-01"], run_id=1, token="dead", owner=A, seconds=0.05)
    time.sleep(0.1)
    ctx = multiprocessing.get_context("fork")  # no connection open: each makes its own
    for round_ in range(2):
        out: multiprocessing.Queue = ctx.Queue()
        start = time.time() + 0.5  # both connected by then
        procs = [
            ctx.Process(target=_race, args=(str(store_url), f"t{round_}{i}", start, out))
            for i in range(2)
        ]
        for p in procs:
            p.start()
        got = sorted(out.get(timeout=30)[1] for _ in procs)
        for p in procs:
            p.join(timeout=30)
        assert got == ["refused", "took"], got
        with Store(store_url) as store:  # expire the winner's for the next round
            (held,) = leases(store)
            take(store, ["host:r640-01"], run_id=1, token=held.token, owner=A, seconds=0.05)
        time.sleep(0.1)


def test_results_names_a_run_abandoned_once_its_lease_expired(store_url: Database) -> None:
    """A run of another machine (its process cannot be seen from here) is ``running`` while
    its lease lives, and ``abandoned`` once the lease has expired, on either engine."""
    from typer.testing import CliRunner

    from sizing.cli import app

    with Store(store_url) as store:
        run = store.start_run(inventory="i", argv=[], tool_version="t", options={})
        store.set_owner(run, B)
        take(store, [f"run:{run}"], run_id=run, token="tb", owner=B, seconds=600)

    def shown() -> str:
        got = CliRunner().invoke(app, ["results", "--json", "--db", str(store_url)])
        assert got.exit_code == 0, got.stderr
        return str(json.loads(got.stdout)["runs"][0]["status"])

    assert shown() == "running"
    with Store(store_url) as store:
        take(store, [f"run:{run}"], run_id=run, token="tb", owner=B, seconds=0.05)
    time.sleep(0.1)
    assert shown() == "abandoned"
