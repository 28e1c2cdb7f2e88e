"""A quiet machine for the tests that need one.

A measuring test on a shared 2-core machine can meet a busy neighbour: another process on
the CPUs, or this VM's own hypervisor stealing them. The tool then rightly judges the point
invalid (``unstable``, ``not-saturated``, ``client-bound``). A test that needs a measured
point first waits, a bounded time, for the machine to be quiet (read from ``/proc/stat``),
measures, and on a verdict the machine explains measures again, at most a few times. If the
machine never becomes quiet the test skips, naming the busy machine and its readings (its
precondition did not hold); if it was quiet and every try still came out invalid, the test
fails with the verdicts and the readings, never with a bare assertion; a verdict the machine
does not explain fails at once.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from sizing import paths

# What a busy or stolen machine explains: the guards' flags for a figure the server's CPUs
# did not set because something else had them.
MACHINE_VERDICTS = frozenset({"unstable", "not-saturated", "client-bound", "cpu-quota"})
# Every flag a validity guard sets on an invalid point (the others, such as
# ``virtualized-host``, describe the point and invalidate nothing).
GUARD_FLAGS = MACHINE_VERDICTS | {
    "errors",
    "connections",
    "no-tls-proof",
    "reused-sessions",
    "upstream-bound",
    "network-bound",
}
BUSY_LIMIT = 0.20  # share of all CPUs busy before a measurement starts
STEAL_LIMIT = 0.02  # share of all CPUs stolen by the hypervisor


@dataclass(frozen=True)
class Reading:
    """One look at the machine: the share of its CPUs busy and stolen over ``seconds``."""

    busy: float
    steal: float
    seconds: float

    @property
    def quiet(self) -> bool:
        return self.busy <= BUSY_LIMIT and self.steal <= STEAL_LIMIT

    def __str__(self) -> str:
        busy, steal = 100 * self.busy, 100 * self.steal
        return f"{busy:.0f}% busy, {steal:.1f}% stolen over {self.seconds:g} s"


def _ticks() -> tuple[int, int, int]:
    """(total, idle, steal) jiffies of all CPUs from /proc/stat's first line."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + idle + iowait + irq + softirq + steal, idle + iowait, steal


def read(seconds: float = 1.0) -> Reading:
    """The machine's busy and stolen shares over ``seconds``."""
    t0, i0, s0 = _ticks()
    time.sleep(seconds)
    t1, i1, s1 = _ticks()
    total = max(1, t1 - t0)
    steal = (s1 - s0) / total
    return Reading(busy=max(0.0, 1 - (i1 - i0) / total - steal), steal=steal, seconds=seconds)


def wait_for_quiet(limit_s: float = 60.0) -> Reading:
    """Wait, at most ``limit_s`` seconds, for one quiet second; return the last reading."""
    deadline = time.monotonic() + limit_s
    reading = read()
    while not reading.quiet and time.monotonic() < deadline:
        time.sleep(2)
        reading = read()
    return reading


def own_cpu_quota() -> float | None:
    """The CPU quota of this test's own cgroup (the machine held to less CPU than its
    cores, as a container's --cpus does), in CPUs; None without one. Read by the hosts'
    runner's own code (playbooks/files/loadgen.py), the one the guard uses."""
    files = str(paths.PLAYBOOKS / "files")
    sys.path.insert(0, files)
    try:
        loadgen = importlib.import_module("loadgen")
    finally:
        sys.path.remove(files)
    quota, _ = loadgen.cgroup_cpu(os.getpid())
    return quota if isinstance(quota, float) else None


def under_a_quota() -> bool:
    """Whether these tests run held to less CPU than the machine's cores."""
    quota = own_cpu_quota()
    return quota is not None and quota < (os.cpu_count() or 1)


def measured(point: dict[str, Any]) -> bool:
    return bool(point["status"] == "measured")


def measure_on_a_quiet_machine(
    measure: Callable[[], dict[str, Any]],
    *,
    attempts: int = 3,
    explained: Iterable[str] = MACHINE_VERDICTS,
    wanted: Callable[[dict[str, Any]], bool] = measured,
    limit_s: float = 60.0,
    look: Callable[[float], Reading] = wait_for_quiet,
) -> dict[str, Any]:
    """``measure()`` returns one point (``--json``'s form). Measure on a quiet machine until
    the point is ``wanted`` (by default: ``measured``), at most ``attempts`` times; only a
    point whose flags are all ``explained`` by a busy machine is worth another try. Fails
    the test (or skips it, when the machine is never quiet) with the readings (``limit_s``:
    the longest wait for a quiet second before each try, through ``look``)."""
    explained = frozenset(explained)
    seen: list[str] = []
    for _ in range(attempts):
        before = look(limit_s)
        if not before.quiet:
            # the test's precondition, a quiet machine, never held: say so, measure nothing
            earlier = f"; before that: {'; '.join(seen)}" if seen else ""
            pytest.skip(
                f"this machine stayed busy for {limit_s:g} s ({before}); this test "
                f"needs a quiet one{earlier}"
            )
        point = measure()
        if wanted(point):
            return point
        found = set(point.get("flags") or ()) & GUARD_FLAGS
        if "cpu-quota" in found and found <= explained and under_a_quota():
            # the precondition, a machine that gives the server its CPUs, cannot hold: the
            # quota stays, and the guard rightly refuses every figure made under it
            pytest.skip(
                f"these tests run under a cgroup CPU quota of {own_cpu_quota():g} CPUs (the "
                f"machine has {os.cpu_count()}): the point is rightly {sorted(found)}; a "
                "capacity figure needs a machine without one"
            )
        if not found or not found <= explained:
            pytest.fail(
                f"the point is {point['status']} for a reason a busy machine does not "
                f"explain ({sorted(found)}): {point.get('reason')!r}; {point}"
            )
        seen.append(f"{sorted(found)} (machine before: {before}; after: {read()})")
    pytest.fail(
        f"{attempts} measurements, each started on a quiet machine, were judged invalid for "
        f"what a busy or stolen machine explains: {'; '.join(seen)}"
    )
