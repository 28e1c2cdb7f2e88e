"""The pure evaluation of a closed-loop point: golden window outputs in, a PointResult out.

``tests/data/windows/*.json`` hold the window runner's outputs of a real 1-core local run
(``rps_noisy_steal``, ``tps_noisy``, captured as :func:`evaluate_windows` received them)
and cases derived from them (``derive.py``: steal removed, CPU shares, 503 answers,
resumed sessions, a dead nginx). See ``tests/data/windows/README.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sizing import profiles
from sizing.facts import HostFacts
from sizing.inventory import load_inventory
from sizing.loadproto import WindowOutput, WindowSpec
from sizing.measure.evaluate import Measurement, evaluate_windows, window_rates
from sizing.measure.validity import StopRule, recheck
from sizing.model import SERVER_DIED, Ht, Status
from sizing.paths import ROOT
from sizing.plan import PlannedPoint, build_plan
from sizing.provision.platforms.base import Target
from sizing.records import StopRuleRecord, UpstreamRecord

DATA = Path(__file__).parent.parent / "data" / "windows"


def load_case(name: str) -> tuple[dict[str, Any], PlannedPoint, Target, HostFacts]:
    """A golden case, its outputs and windows read through the host protocol
    (:mod:`sizing.loadproto`), as the window runner's JSON is."""
    doc = json.loads((DATA / f"{name}.json").read_text())
    doc["outputs"] = {
        host: [WindowOutput.from_json(w) for w in out["windows"]]
        for host, out in doc["outputs"].items()
    }
    doc["windows"] = [WindowSpec.from_json(w) for w in doc["windows"]]
    facts = HostFacts.parse(json.dumps(doc["facts"]))
    inv = load_inventory(ROOT / "inventories" / "local.yml")
    p = doc["point"]
    (point,) = build_plan(
        inv,
        {"localhost": facts.topology},
        (p["cores"],),
        (Ht(p["ht"]),),
        (profiles.load(p["profile"]),),
    )
    t = doc["target"]
    return doc, point, Target(t["host"], t["address"], tuple(t["workers"])), facts


def evaluate(name: str) -> Measurement:
    doc, point, target, facts = load_case(name)
    return evaluate_windows(
        point,
        target,
        doc["outputs"],
        doc["windows"],
        connections=doc["connections"],
        duration=doc["duration"],
        rule=StopRule(**doc["rule"]),
        facts=facts,
        client_tool_version=doc["client_tool_version"],
    )


def test_clean_rps_point() -> None:
    result, samples = evaluate("rps_clean")
    assert result.status is Status.MEASURED and result.flags == () and result.reason == ""
    assert result.value == pytest.approx(43827.875)  # the median of the 4 timed windows
    assert result.unit == "requests/s" and result.repetitions == 4
    # the interval of the median of 4 runs: their range, 87.5% (no Student-t interval)
    assert result.ci_low == pytest.approx(27108.13, rel=1e-6)
    assert result.ci_high == pytest.approx(59387.18, rel=1e-6)
    # one client sample and one point sample per window, warm-up included
    assert len(samples) == 10
    assert [i for i, s in samples if s.metric == "requests_per_second"] == [0, 1, 2, 3, 4]
    warm = next(s for i, s in samples if i == 0 and s.metric == "requests_per_second")
    assert warm.metadata.warmup is True
    env = result.metadata.env
    assert env.tool == "wrk" and env.tool_version == "debian/4.1.0-3+b2"
    assert env.server_cpus == "0" and env.worker_cpus == "0"
    assert env.url == "http://127.0.0.1:8080/128b"
    assert result.metadata.stop_rule == StopRuleRecord(4, 3, 4, 0.02)
    ev = result.metadata.evidence
    assert ev.server_busy_median == pytest.approx(99.0, abs=0.1)
    # the guards' evidence is stored with the point, and proves the verdict by itself
    assert ev.guards is not None and ev.guards.saturated is True
    assert ev.guards.limited_by == "the server's CPUs" and len(ev.guards.repetitions) == 4
    assert recheck(ev.guards) == list(ev.guards.verdicts) == []


def test_client_bound_point() -> None:
    result, _ = evaluate("rps_client_bound")
    assert result.status is Status.INVALID
    assert result.flags == ("client-bound", "not-saturated")
    assert result.reason.startswith("client-bound: load generator CPUs busy (localhost 100%)")
    assert "server's pinned CPUs were 50% busy" in result.reason
    assert "not-saturated: the server's pinned CPUs averaged 50% busy" in result.reason
    assert "limited by the client (100% of its CPUs)" in result.reason


def test_errors_point() -> None:
    result, samples = evaluate("rps_errors")
    assert result.status is Status.INVALID and result.flags == ("errors",)
    assert result.reason.startswith("1046188 of 1046188 requests failed (100.00% > 0.1%)")
    timed = [s for i, s in samples if i > 0 and s.metric == "requests_per_second"]
    assert all(s.metadata.http_errors == s.metadata.requests for s in timed)


def test_tps_point_counts_full_handshakes() -> None:
    result, samples = evaluate("tps_clean")
    assert result.status is Status.MEASURED and result.flags == ()
    assert result.value == pytest.approx(548.24) and result.unit == "handshakes/s"
    ev = result.metadata.evidence
    assert ev.tls_suites == {"TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256": 4994}
    timed = [s for i, s in samples if i > 0 and s.metric == "handshakes_per_second"]
    assert [s.metadata.tls_reused for s in timed] == [0, 0, 0, 0]
    assert ev.guards is not None and sum(r.tls_full for r in ev.guards.repetitions) == 4994


def test_tps_point_with_resumed_sessions_is_invalid() -> None:
    result, _ = evaluate("tps_reused_sessions")
    assert result.status is Status.INVALID and result.flags == ("reused-sessions",)
    assert result.reason.startswith("2496 of 7490 TLS handshakes resumed a session")


def test_noisy_point_under_the_adaptive_stop_rule() -> None:
    # As captured on a shared VM: 4 repetitions (the cap), the interval still ±57%, and 7.7%
    # steal on the pinned CPU. The stop rule gave up; the figure is kept but flagged.
    doc, point, _, _ = load_case("rps_noisy_steal")
    rule = StopRule(**doc["rule"])
    values = window_rates(point, doc["outputs"])
    assert len(values) == 4 and rule.done(values) and not rule.converged(values)
    result, _ = evaluate("rps_noisy_steal")
    assert result.status is Status.INVALID
    assert result.flags == ("unstable", "noisy", "virtualized-host")
    assert "noisy: ±36.8% (range of 4 runs, 87.5%) after 4 repetitions (target ±2%)" in (
        result.reason
    )
    # the captured tps point: server 67%, client 88% busy (median of the repetitions).
    # Neither side saturated: not a capacity figure (issue 13), the client the nearer limit
    tps, _ = evaluate("tps_noisy")
    assert tps.status is Status.INVALID
    assert tps.flags == ("not-saturated", "noisy", "virtualized-host")
    assert "averaged 67% busy (< 90%)" in tps.reason
    assert "limited by the client (88% of its CPUs)" in tps.reason


def test_dead_server_fails_the_point_with_the_flag() -> None:
    result, samples = evaluate("rps_server_died")
    assert result.status is Status.FAILED and result.flags == (SERVER_DIED,)
    assert result.reason == "nginx died on localhost during repetition 2"
    assert result.repetitions == 1 and result.value is None
    assert max(i for i, _ in samples) == 2


def test_a_host_without_output_fails_the_point() -> None:
    doc, point, target, facts = load_case("rps_clean")
    result, samples = evaluate_windows(
        point,
        target,
        {},
        doc["windows"],
        connections=50,
        duration=2,
        rule=StopRule(**doc["rule"]),
        facts=facts,
        client_tool_version=None,
        broken={"localhost": "unreachable: ssh timed out"},
    )
    assert result.status is Status.FAILED and samples == []
    assert result.reason == "localhost: unreachable: ssh timed out"


# -- issue 13: load balancing through a real upstream nginx ------------------------------


def test_squeezed_upstream_point_is_upstream_bound() -> None:
    # captured: the upstream nginx in a cgroup with 5% of a CPU; wrk, the upstream and
    # whatever else ran on this shared box kept both CPUs busy
    result, samples = evaluate("rps_lb_upstream_bound")
    assert result.status is Status.INVALID
    assert result.flags == ("upstream-bound", "not-saturated", "virtualized-host")
    assert "upstream-bound: the upstream nginx was saturated (localhost 101% of 0.05 CPU)" in (
        result.reason
    )
    assert "give the upstreams about 1 more CPU" in result.reason
    assert "limited by the upstream (101% of its CPUs)" in result.reason
    assert result.metadata.env.upstreams == (UpstreamRecord("localhost", "1", "client"),)
    timed = [s for i, s in samples if i > 0 and s.metric == "requests_per_second"]
    for s in timed:
        assert s.metadata.upstream_cpu is not None and s.metadata.kernel_outside is not None
        up = s.metadata.upstream_cpu["localhost"]
        assert up.quota_cpus == 0.05 and up.capacity == 0.05 and (up.throttled or 0) > 0
        assert s.metadata.kernel_outside.cpus == (1,)
    # the upstream's share is stored with the point: a reader can check the verdict
    guards = result.metadata.evidence.guards
    assert guards is not None and guards.saturated is False
    assert guards.limited_by == "the upstream's CPUs"
    busy = result.metadata.evidence.upstream_busy_median or {}
    assert busy["localhost"] == pytest.approx(101, abs=1)
    assert (
        [v.flag for v in recheck(guards)]
        == [v.flag for v in guards.verdicts]
        == ["upstream-bound", "not-saturated"]
    )


def test_one_connection_point_is_not_saturated() -> None:
    # captured: 1 connection; nginx used under half its core, other processes the rest
    result, samples = evaluate("rps_lb_not_saturated")
    assert result.status is Status.INVALID
    assert result.flags == ("not-saturated", "virtualized-host")
    assert "were 100% busy but nginx and its kernel network work used only 50%" in (result.reason)
    assert "limited by the other processes on the pinned CPUs" in result.reason
    assert (result.metadata.env.irq_steering or "").startswith("not steered: loopback")
    assert result.metadata.evidence.softirq_outside_pct_median is not None
    timed = [s for i, s in samples if i > 0 and s.metric == "requests_per_second"]
    assert all((s.metadata.upstream_cpu or {})["localhost"].quota_cpus is None for s in timed)
