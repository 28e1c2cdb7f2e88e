"""Validity guards and the confidence-interval stopping rule, on synthetic series."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from sizing.intervals import interval_words, repetition_flags
from sizing.measure.validity import (
    RepetitionEvidence,
    StopRule,
    check_client_bound,
    check_connections,
    check_errors,
    check_saturated,
    check_stability,
    check_tls,
    check_upstream_bound,
    clients_needed,
    judge,
    median_ci,
    upstream_cpus_needed,
)


def ev(value: float = 1000.0, **kw: object) -> RepetitionEvidence:
    base: dict[str, object] = {
        "value": value,
        "requests": 10_000,
        "socket_errors": 0,
        "http_errors": 0,
        "server_busy": 99.0,
        "server_steal": 0.0,
        "client_busy": {"c1": 60.0},
    }
    base.update(kw)
    return RepetitionEvidence(**base)  # type: ignore[arg-type]


def test_median_ci_is_the_one_interval_with_its_coverage() -> None:
    ci = median_ci([100.0, 102.0, 98.0])
    assert ci is not None
    # three runs: the interval of the median is their range, which covers it 75% of the time
    assert (ci.centre, ci.low, ci.high) == (100.0, 98.0, 102.0)
    assert ci.half_width == pytest.approx(0.02)
    assert interval_words(3) == "range of 3 runs, 75%"
    assert median_ci([5.0]) is None


def test_stop_rule_never_converges_on_drifting_repetitions() -> None:
    rule = StopRule(min_reps=3, max_reps=10)
    rising = [1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0]  # within ±0.3%, but a trend
    assert not rule.converged(rising)
    # not a flag at measurement time: drift is decided across the run (sizing.store.drift_flag)
    assert repetition_flags(rising) == ((), "")


def test_stop_rule_stops_when_tight() -> None:
    rule = StopRule(min_reps=3, max_reps=10)
    assert not rule.done([100.0, 100.1])  # below the minimum count
    assert rule.done([100.0, 100.1, 99.9])  # ±0.25%: converged at 3
    assert rule.converged([100.0, 100.1, 99.9])


def test_stop_rule_continues_while_wide_then_caps() -> None:
    rule = StopRule(min_reps=3, max_reps=10)
    noisy = [100.0, 90.0, 110.0, 95.0, 105.0, 92.0, 108.0, 97.0, 103.0, 100.0]
    stops = next(n for n in range(1, 11) if rule.done(noisy[:n]))
    assert stops == 10  # never within ±2%: stopped by the cap
    assert not rule.converged(noisy)


def test_stop_rule_converges_as_samples_accumulate() -> None:
    rng = random.Random(7)
    series = [1000.0 * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
    rule = StopRule(min_reps=3, max_reps=10)
    n = next(n for n in range(1, 11) if rule.done(series[:n]))
    ci = median_ci(series[:n])
    assert ci is not None
    assert n == 10 or ci.half_width <= 0.02
    assert 3 <= n <= 10


def test_fixed_repeat_ignores_convergence() -> None:
    rule = StopRule(fixed=5)
    assert not rule.done([1.0, 1.0, 1.0, 1.0])
    assert rule.done([1.0, 50.0, 1.0, 80.0, 3.0])


def test_errors_guard_threshold() -> None:
    assert check_errors([ev(requests=100_000, http_errors=100)]) is None  # exactly 0.1%
    v = check_errors([ev(requests=100_000, http_errors=60, socket_errors=50)])
    assert v is not None and v.flag == "errors" and "50 socket errors" in v.reason
    assert check_errors([ev(requests=0)]) is not None


def test_connections_guard_only_for_keepalive() -> None:
    assert check_connections([ev(established=50)], 50, keepalive=True) is None
    v = check_connections([ev(established=20)], 50, keepalive=True)
    assert v is not None and "only 20 of 50" in v.reason
    assert check_connections([ev(established=3)], 50, keepalive=False) is None


def test_client_bound_names_the_fix() -> None:
    v = check_client_bound([ev(server_busy=60.0, client_busy={"c1": 97.0})] * 3, clients=1)
    assert v is not None and v.flag == "client-bound"
    assert "add 1 client host" in v.reason
    assert check_client_bound([ev(server_busy=95.0, client_busy={"c1": 97.0})], 1) is None
    assert check_client_bound([ev(server_busy=60.0, client_busy={"c1": 70.0})], 1) is None


def test_clients_needed() -> None:
    assert clients_needed(50.0, {"a": 99.0}) == 1
    assert clients_needed(25.0, {"a": 99.0, "b": 99.0}) == 6
    assert clients_needed(84.0, {"a": 99.0}) == 1


def test_tls_guard() -> None:
    assert check_tls([ev(tls_full=500)], handshake_profile=True) is None
    v = check_tls([ev(tls_full=500, tls_reused=3)], handshake_profile=True)
    assert v is not None and v.flag == "reused-sessions" and "3 of 503" in v.reason
    assert check_tls([ev()], handshake_profile=True) is not None  # no proof at all
    assert check_tls([ev()], handshake_profile=False) is None


def test_stability_guard() -> None:
    v = check_stability([ev(server_steal=3.5)])
    assert v is not None and v.flag == "unstable" and "stole 3.5%" in v.reason
    drop = [ev(1000.0), ev(700.0, server_steal=1.0)]
    assert check_stability(drop) is not None
    assert check_stability([ev(1000.0), ev(700.0)]) is None  # a drop without steal
    assert check_stability([ev(1000.0), ev(700.0, throttled=4)]) is not None


def test_judge_collects_every_verdict() -> None:
    reps = [ev(server_busy=50.0, client_busy={"c1": 99.0}, http_errors=100, tls_reused=1)]
    flags = [
        v.flag
        for v in judge(
            reps, requested_connections=50, keepalive=False, handshake_profile=True, clients=1
        )
    ]
    assert flags == ["errors", "reused-sessions", "client-bound", "not-saturated"]


# -- issue 13: upstream-bound and not-saturated ------------------------------------------


def test_upstream_bound_names_the_upstream_cpus_needed() -> None:
    reps = [
        ev(server_busy=40.0, upstream_busy={"up1": 98.0}, upstream_capacity={"up1": 0.2})
        for _ in range(3)
    ]
    v = check_upstream_bound(reps)
    assert v is not None and v.flag == "upstream-bound" and v.invalid
    assert "up1 98% of 0.2 CPU" in v.reason and "server's pinned CPUs were 40% busy" in v.reason
    # 0.2 CPU carried the server to 40%: 100% needs 0.5, so about 1 more CPU
    assert "about 1 more CPU " in v.reason
    assert upstream_cpus_needed(25.0, {"a": 2.0, "b": 2.0}) == 12


def test_upstream_not_bound_when_the_server_is_busy_or_the_upstream_idle() -> None:
    busy_server = [ev(server_busy=95.0, upstream_busy={"u": 99.0}, upstream_capacity={"u": 1.0})]
    idle_upstream = [ev(server_busy=40.0, upstream_busy={"u": 30.0}, upstream_capacity={"u": 1.0})]
    assert check_upstream_bound(busy_server) is None
    assert check_upstream_bound(idle_upstream) is None
    assert check_upstream_bound([ev(server_busy=40.0)]) is None  # no upstream


@pytest.mark.parametrize(
    ("kw", "limit"),
    [
        ({"upstream_busy": {"u": 97.0}, "client_busy": {"c": 50.0}}, "limited by the upstream"),
        ({"client_busy": {"c": 99.0}}, "limited by the client (99%"),
        (
            {
                "client_busy": {"c": 99.0},
                "upstream_busy": {"u": 30.0},
                "upstream_shares_client": True,
            },
            "client side (99% of the CPUs the load generator shares with the upstream",
        ),
        ({"client_busy": {"c": 20.0}, "established": 10}, "connections (only 10 of 50"),
        ({"client_busy": {"c": 20.0}, "established": 50}, "connections (50 kept the server"),
    ],
)
def test_not_saturated_names_what_limited_it(kw: dict[str, object], limit: str) -> None:
    v = check_saturated([ev(server_busy=60.0, **kw)], requested=50, keepalive=True)
    assert v is not None and v.flag == "not-saturated" and v.invalid
    assert "averaged 60% busy (< 90%)" in v.reason and limit in v.reason


def test_not_saturated_network_and_saturated_server() -> None:
    net = check_saturated([ev(server_busy=30.0)], 50, True, network_bound=True)
    assert net is not None and "network" in net.reason
    assert check_saturated([ev(server_busy=91.0)], 50, True) is None
    # only max-throughput points are judged for saturation
    flags = [
        v.flag
        for v in judge(
            [ev(server_busy=50.0)],
            requested_connections=50,
            keepalive=True,
            handshake_profile=False,
            clients=1,
            max_rate=False,
        )
    ]
    assert flags == []


# Repetitions of a CPU hog on the load generator's core, static-tps at 1 core (the server's
# pinned CPU busy %, the client core busy %, handshakes/s). CONSTRUCTED, not recorded: they
# are shaped as the two kinds of machine issue 60 describes, the usual one (the starved
# client leaves the server well below 85%) and one with three times its RSA speed, where
# the starved client left the server between 85% and 90% and the point was called only
# not-saturated. (A recording needs a machine nothing else uses; docs/validity.md.)
STARVED = {
    "slow-rsa": [(71.2, 99.4, 640.0), (69.8, 99.6, 628.0), (72.5, 99.1, 651.0)],
    "fast-rsa": [(86.4, 98.7, 1790.0), (87.9, 99.2, 1832.0), (86.8, 98.9, 1801.0)],
}


@pytest.mark.parametrize("machine", sorted(STARVED))
def test_a_starved_client_core_is_client_bound_on_any_machine(machine: str) -> None:
    reps = [
        ev(value=v, server_busy=s, client_busy={"localhost": c}, tls_full=int(v) * 2)
        for s, c, v in STARVED[machine]
    ]
    verdicts = judge(
        reps, requested_connections=50, keepalive=False, handshake_profile=True, clients=1
    )
    flags = [v.flag for v in verdicts]
    assert "client-bound" in flags, flags
    quiet = [replace(r, client_busy={"localhost": 62.0}) for r in reps]
    assert "client-bound" not in [
        v.flag
        for v in judge(
            quiet, requested_connections=50, keepalive=False, handshake_profile=True, clients=1
        )
    ]
    # a client busy but with time to spare, the server between 85% and 90%: not the client
    spare = [replace(r, client_busy={"localhost": 92.0}) for r in reps if r.server_busy >= 85]
    if spare:
        assert "client-bound" not in [
            v.flag
            for v in judge(
                spare, requested_connections=50, keepalive=False, handshake_profile=True, clients=1
            )
        ]
    saturated = [replace(r, server_busy=93.0) for r in reps]
    assert "client-bound" not in [
        v.flag
        for v in judge(
            saturated, requested_connections=50, keepalive=False, handshake_profile=True, clients=1
        )
    ]


# A cgroup CPU quota (a container's --cpus, a slice's CPUQuota) on the nginx under test or
# its load generator: the CPUs look idle while they wait. Shaped as this VM showed it under a
# 1-CPU quota with a hog beside the client (tests/integration/test_validity_faults.py): the
# server's pinned CPU 38% busy, the client's 70%, called "limited by the connections".
QUOTA_STARVED = [(38.0, 70.0, 455.0, 61), (41.0, 68.0, 470.0, 58), (36.0, 71.0, 440.0, 64)]


@pytest.mark.parametrize("max_rate", [True, False])
def test_a_cgroup_quota_that_throttled_the_point_is_named(max_rate: bool) -> None:
    reps = [
        ev(value=v, server_busy=s, client_busy={"localhost": c}, quota_throttled=n, quota_cpus=1.0)
        for s, c, v, n in QUOTA_STARVED
    ]
    verdicts = judge(
        reps,
        requested_connections=50,
        keepalive=False,
        handshake_profile=False,
        clients=1,
        max_rate=max_rate,
    )
    flags = [v.flag for v in verdicts]
    assert flags[0] == "cpu-quota", flags
    assert "a cgroup CPU limit of 1 CPU throttled" in verdicts[0].reason
    assert "183 times, in 3 of 3 timed repetitions" in verdicts[0].reason
    assert "client-bound" not in flags  # the client's core had idle time: the quota's
    if max_rate:
        (sat,) = [v for v in verdicts if v.flag == "not-saturated"]
        assert "limited by the cgroup CPU limit" in sat.reason
        assert "connections" not in sat.reason.split("limited by")[1]
    # no throttling over the same figures: no quota verdict, the old attribution stands
    calm = [replace(r, quota_throttled=0) for r in reps]
    assert "cpu-quota" not in [
        v.flag
        for v in judge(
            calm, requested_connections=50, keepalive=False, handshake_profile=False, clients=1
        )
    ]


def test_a_quota_that_never_throttled_is_not_a_verdict() -> None:
    """A limit above what the point used (quota 8 CPUs, no period throttled) holds nothing."""
    reps = [ev(quota_cpus=8.0, quota_throttled=0) for _ in range(3)]
    got = judge(reps, requested_connections=50, keepalive=True, handshake_profile=False, clients=1)
    assert [v.flag for v in got] == []


def test_one_throttled_repetition_of_several_is_counted_as_such() -> None:
    reps = [ev(quota_cpus=0.5, quota_throttled=0), ev(quota_cpus=0.5, quota_throttled=7)]
    got = judge(reps, requested_connections=50, keepalive=True, handshake_profile=False, clients=1)
    (v,) = [x for x in got if x.flag == "cpu-quota"]
    assert "of 0.5 CPUs throttled" in v.reason and "7 times, in 1 of 2 timed" in v.reason
