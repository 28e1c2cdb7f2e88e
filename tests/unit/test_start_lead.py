"""The start lead of a point's windows: planned until Ansible has reached every host of the
point once this run, then learned from how long that took (``began`` in the window
runner's output, against the moment sizing started load.yml).

Only ansible-runner is replaced (a playbook "runs" and answers what the hosts' window
runners would print); the lead rule and the window runner's bookkeeping are the real ones.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

import pytest

from sizing.loadproto import LoadSpec, WindowSpec
from sizing.measure.measure_context import (
    MIN_LEAD_S,
    REACH_FACTOR,
    REACH_MARGIN_S,
    HostHealth,
    MeasureContext,
)
from sizing.measure.windows import RUN_TASK, WindowRunner
from sizing.provision.ansible import HostOutcome, PlaybookResult, Playbooks


def test_planned_lead_until_every_host_was_reached() -> None:
    health = HostHealth()
    assert health.common_lead(["web", "load"], 4.5) == 4.5
    health.observe_reach("web", 1.0)
    assert health.common_lead(["web", "load"], 4.5) == 4.5  # "load" not reached yet
    health.observe_reach("load", 1.6)
    assert health.common_lead(["web", "load"], 4.5) == pytest.approx(
        REACH_FACTOR * 1.6 + REACH_MARGIN_S
    )


def test_the_slowest_reach_counts_and_a_guest_keeps_its_own_lead() -> None:
    health = HostHealth()
    for seconds in (1.0, 3.0, 1.2):  # one slow start is remembered for the rest of the run
        health.observe_reach("web", seconds)
    assert health.common_lead(["web"], 4.0) == pytest.approx(REACH_FACTOR * 3.0 + REACH_MARGIN_S)
    fast = HostHealth()
    fast.observe_reach("web", 0.01)
    assert fast.common_lead(["web"], 4.0) == MIN_LEAD_S  # never below the floor
    fast.set_lead("web", 11.0)  # an emulated guest: its start lead from its facts
    assert fast.common_lead(["web"], 4.0) == 11.0


def test_the_window_runner_learns_the_reach_of_each_host(monkeypatch: pytest.MonkeyPatch) -> None:
    seen_leads: list[float] = []
    delays = {"web": 0.8, "load": 1.4}  # how late each host's runner starts

    def fake_run(self: Playbooks, playbook: str, hosts: Any, **kw: Any) -> PlaybookResult:
        assert playbook == "load.yml"
        specs = kw["extravars"]["sizing_specs"]
        now = time.time()
        seen_leads.append(next(iter(specs.values()))["start_at"] - now)
        outcomes = {
            h: HostOutcome(
                ok={RUN_TASK: {"stdout": json.dumps({"began": now + delays[h], "windows": []})}}
            )
            for h in hosts
        }
        return PlaybookResult("load.yml", "successful", 0, {}, outcomes)

    monkeypatch.setattr(Playbooks, "run", fake_run)
    health = HostHealth()
    ctx: Any = MeasureContext.__new__(MeasureContext)
    object.__setattr__(ctx, "playbooks", Playbooks(Path("inv.yml")))
    object.__setattr__(ctx, "hosts", health)
    object.__setattr__(ctx, "run_token", "t")
    spec = LoadSpec([WindowSpec(0, 0.0, 1.0)], sample_cpu=True)

    WindowRunner(ctx).run({"web": spec, "load": spec}, lead_s=4.0)
    assert set(health.reach) == {"web", "load"}
    assert health.reach["load"] == pytest.approx(1.4, abs=0.2)
    lead = health.common_lead(["web", "load"], 4.0)
    assert lead == pytest.approx(REACH_FACTOR * health.reach["load"] + REACH_MARGIN_S)
    assert lead < 4.0

    # an older window runner (no "began") teaches nothing
    delays["web"] = 0.0
    health2 = HostHealth()
    object.__setattr__(ctx, "hosts", health2)

    def old_runner(self: Playbooks, playbook: str, hosts: Any, **kw: Any) -> PlaybookResult:
        doc = json.dumps({"windows": []})
        return PlaybookResult(
            "load.yml",
            "successful",
            0,
            {},
            {h: HostOutcome(ok={RUN_TASK: {"stdout": doc}}) for h in hosts},
        )

    monkeypatch.setattr(Playbooks, "run", old_runner)
    WindowRunner(ctx).run({"web": spec}, lead_s=4.0)
    assert health2.reach == {}


def test_the_facts_teach_the_first_windows_lead(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's facts playbook is Ansible's first reach of each host: the facts script's
    start time (``began``) against the moment sizing started facts.yml gives the reach the
    first point's lead is learned from; the start time is not kept with the facts."""
    from types import SimpleNamespace

    from sizing.provision.facts import FACTS_TASK, gather_facts

    lscpu = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n"

    def fake_run(self: Playbooks, playbook: str, hosts: Any, **kw: Any) -> PlaybookResult:
        assert playbook == "facts.yml"
        now = time.time()
        doc = {"began": now + 1.1, "lscpu": lscpu, "time": now + 1.3}
        outcomes = {h: HostOutcome(ok={FACTS_TASK: {"stdout": json.dumps(doc)}}) for h in hosts}
        return PlaybookResult("facts.yml", "successful", 0, {}, outcomes)

    monkeypatch.setattr(Playbooks, "run", fake_run)
    facts, problems = gather_facts(
        Playbooks(Path("inv.yml")), [cast(Any, SimpleNamespace(name="web"))]
    )
    assert problems == {}
    assert facts["web"].reach_s == pytest.approx(1.1, abs=0.2)
    assert "began" not in facts["web"].raw
    health = HostHealth()
    health.observe_reach("web", facts["web"].reach_s or 0.0)
    assert health.common_lead(["web"], 4.0) == pytest.approx(REACH_FACTOR * 1.1 + 0.5, abs=0.3)


def test_facts_that_do_not_parse_say_what_the_script_printed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host whose facts script printed something other than its JSON (a login banner,
    a warning) is one problem line that quotes what it printed, shortened, and its rc.
    (Ansible's reply is a stand-in here: what is tested is sizing's reading of it.)"""
    from types import SimpleNamespace

    from sizing.provision.facts import FACTS_TASK, gather_facts

    said = {"stdout": "Welcome to web1\r\n" + "x" * 500, "stderr": "", "rc": 0}

    def fake_run(self: Playbooks, playbook: str, hosts: Any, **kw: Any) -> PlaybookResult:
        outcomes = {h: HostOutcome(ok={FACTS_TASK: said}) for h in hosts}
        return PlaybookResult("facts.yml", "successful", 0, {}, outcomes)

    monkeypatch.setattr(Playbooks, "run", fake_run)
    facts, problems = gather_facts(
        Playbooks(Path("inv.yml")), [cast(Any, SimpleNamespace(name="web"))]
    )
    assert facts == {}
    line = problems["web"]
    assert line.startswith("facts are unreadable: Expecting value")
    assert "stdout 'Welcome to web1" in line and "(rc 0)" in line
    assert "\n" not in line and len(line) < 300
