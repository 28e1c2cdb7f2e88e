"""The run's pipeline: the context is frozen, each stage returns what it made as a new
:class:`Sweep` (a value, never changed in place), what the run holds on the hosts is the
ledger's alone, the dry run is the run's first stage alone, and no stage is named for work
it does not do."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sizing import profiles
from sizing.model import Ht
from sizing.store import Store
from sizing.sweep import DRY_RUN, STAGES, OpenRun, RunContext, RunOptions, RunSummary, Sweep
from sizing.sweep.run_context import Prepared, RunLedger
from sizing.sweep.stages import check_and_pair, facts_and_plan

# Two servers and a client that declare their CPUs: the offline plan (run --plan without
# --probe) reads nothing from them. The addresses are documentation ones; nothing is
# contacted (the test runs no playbook).
CPU = "sizing_cpu: {sockets: 1, cores_per_socket: 8, threads_per_core: 2, model: X}"
INVENTORY = f"""
all:
  children:
    servers:
      hosts:
        web1: {{ansible_host: 192.0.2.11, sizing_platform: baremetal, {CPU}}}
        web2: {{ansible_host: 192.0.2.12, sizing_platform: baremetal, {CPU}}}
    clients:
      hosts:
        load: {{ansible_host: 192.0.2.21, {CPU}}}
"""


def context(tmp_path: Path) -> RunContext:
    inv = tmp_path / "inv.yml"
    inv.write_text(INVENTORY)
    opts = RunOptions(
        inventory=inv,
        cores=(1, 2),
        hts=(Ht.OFF,),
        profiles=(profiles.load("rps"),),
        db=tmp_path / "r.sqlite",
        probe=False,
    )
    return RunContext.bind(opts)


def test_the_dry_run_is_the_runs_first_stage() -> None:
    assert DRY_RUN == STAGES[:1]
    assert "take the hosts" not in [name for name, _ in STAGES]


def test_the_context_and_the_sweep_are_frozen_and_the_ledger_holds_no_product() -> None:
    assert RunContext.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert Sweep.__dataclass_params__.frozen  # type: ignore[attr-defined]
    made = {f.name for f in dataclasses.fields(Sweep)}
    assert {"facts", "planned", "plan", "pairs", "ceilings", "done"} <= made
    held = {f.name for f in dataclasses.fields(RunLedger)}
    assert not held & made  # what a stage makes is never kept in the ledger
    assert {"hosts_taken", "provisioned", "targets"} <= held
    assert "ledger" in {f.name for f in dataclasses.fields(RunContext)}
    # the first stage's verdicts only: the facts, plan and done keys are the sweep's
    assert not {f.name for f in dataclasses.fields(Prepared)} & {"facts", "plan", "done"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        sweep = Sweep()
        sweep.plan = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        Sweep().facts["web"] = None  # type: ignore[index]


def test_each_stage_returns_a_new_sweep_and_leaves_the_one_it_was_given(
    tmp_path: Path,
) -> None:
    """The first stage alone (offline: on declared facts), then the second alone on its
    result: each returns what it made, and the sweep it was given is unchanged."""
    ctx = context(tmp_path)
    start = Sweep()
    first = facts_and_plan(ctx, None, start)
    assert start == Sweep() and start.planned == () and not start.facts
    assert first is not start and first.prepared is not None
    assert {p.server.name for p in first.planned} == {"web1", "web2"}
    assert {"web1", "web2", "load"} <= set(first.facts)
    with pytest.raises(TypeError):
        first.facts["web1"] = None  # type: ignore[index]
    frozen = dataclasses.replace(first)
    store = Store.for_run(tmp_path / "r.sqlite")
    try:
        run = OpenRun(store, RunSummary(run_id=1, status="running"))  # type: ignore[arg-type]
        second = check_and_pair(ctx, run, first)
    finally:
        store.close()
    assert first == frozen and first.plan == ()  # its input is untouched
    assert [p.key for p in second.plan] == [p.key for p in first.planned]
    assert second.planned == first.planned and second.facts == first.facts


def test_a_resumed_sweep_leaves_what_was_stored(tmp_path: Path) -> None:
    """``done`` comes in with the sweep (read before the first stage): the second stage's
    plan leaves those points out, and the first stage carries them through."""
    ctx = context(tmp_path)
    first = facts_and_plan(ctx, None, Sweep())
    stored = frozenset({first.planned[0].key})
    again = facts_and_plan(ctx, None, Sweep(done=stored))
    assert again.done == stored
    assert [p.key for p in again.todo] == [p.key for p in first.planned[1:]]
