"""The measuring tests' precondition (tests/integration/quiet.py): what a point's verdict
makes of a try. Recorded points, no load: the real runs are the integration tests'."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.integration import quiet

QUIET = quiet.Reading(busy=0.01, steal=0.0, seconds=1.0)


def tries(points: list[dict[str, Any]]) -> tuple[list[int], Any]:
    """Measure the recorded ``points`` in turn; how many were measured, and the outcome."""
    done: list[int] = []

    def measure() -> dict[str, Any]:
        done.append(1)
        return points[len(done) - 1]

    return done, lambda: quiet.measure_on_a_quiet_machine(measure, look=lambda _: QUIET)


def invalid(*flags: str) -> dict[str, Any]:
    return {"status": "invalid", "flags": list(flags), "reason": "recorded"}


def test_under_a_cpu_quota_a_quota_verdict_skips_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quiet, "under_a_quota", lambda: True)
    monkeypatch.setattr(quiet, "own_cpu_quota", lambda: 1.0)
    done, outcome = tries([invalid("cpu-quota", "not-saturated")] * 3)
    with pytest.raises(pytest.skip.Exception, match="cgroup CPU quota of 1 CPUs"):
        outcome()
    assert len(done) == 1  # a quota stays: trying again measures nothing new


def test_without_a_quota_a_quota_verdict_is_tried_again_then_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A guard that says cpu-quota where the tests have none is not excused by a skip."""
    monkeypatch.setattr(quiet, "under_a_quota", lambda: False)
    done, outcome = tries([invalid("cpu-quota")] * 3)
    with pytest.raises(pytest.fail.Exception, match="3 measurements"):
        outcome()
    assert len(done) == 3


def test_a_verdict_no_machine_explains_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quiet, "under_a_quota", lambda: True)
    done, outcome = tries([invalid("cpu-quota", "errors")] * 3)
    with pytest.raises(pytest.fail.Exception, match="does not explain"):
        outcome()
    assert len(done) == 1


def test_a_measured_point_after_a_busy_one_is_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quiet, "under_a_quota", lambda: False)
    good = {"status": "measured", "flags": []}
    done, outcome = tries([invalid("unstable"), good])
    assert outcome() is good and len(done) == 2


def test_this_process_quota_is_read_by_the_guards_own_code() -> None:
    """Read from /proc/self/cgroup by playbooks/files/loadgen.py: None, or a positive
    number of CPUs."""
    quota = quiet.own_cpu_quota()
    assert quota is None or quota > 0
    assert quiet.under_a_quota() == (quota is not None and quota < (os.cpu_count() or 1))
