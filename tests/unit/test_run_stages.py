"""The run's pipeline: the context is frozen (what a stage changes is in its state), the
dry run is the run's first stage alone, and no stage is named for work it does not do."""

from __future__ import annotations

import dataclasses

import pytest

from sizing.sweep import DRY_RUN, STAGES
from sizing.sweep.run_context import Prepared, RunContext, RunState


def test_the_dry_run_is_the_runs_first_stage() -> None:
    assert DRY_RUN == STAGES[:1]
    assert "take the hosts" not in [name for name, _ in STAGES]


def test_the_context_is_frozen_and_the_state_holds_what_changes() -> None:
    assert RunContext.__dataclass_params__.frozen  # type: ignore[attr-defined]
    changed = {f.name for f in dataclasses.fields(RunState)}
    assert {"hosts_taken", "health", "facts", "planned", "done", "plan"} <= changed
    bound = {f.name for f in dataclasses.fields(RunContext)}
    assert not bound & (changed - {"state"})
    # the first stage's verdicts only: the facts, plan and done keys are the state's
    assert not {f.name for f in dataclasses.fields(Prepared)} & {"facts", "plan", "done"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx = object.__new__(RunContext)
        ctx.state = None  # type: ignore[misc]
