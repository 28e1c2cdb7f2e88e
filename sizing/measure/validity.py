"""Validity guards and the adaptive repetition rule. Pure functions, no I/O.

A figure must prove it measured the server and nothing else. Each guard looks at what was
sampled during the repetitions and returns a :class:`Verdict` with a flag and a sentence.
A point with any *invalidating* flag is kept and shown but never used for sizing.

The repetition rule: repeat until the 95% confidence interval is within ±2% of the figure,
at least ``min_reps`` and at most ``max_reps`` times. The interval is Student's t interval
of the **mean** of the repetitions. Each repetition is itself the average rate over many
thousands of requests, so by the central limit theorem repetitions are close to normal and
the t interval is valid from 2 repetitions on; a distribution-free interval for the median
(order statistics) needs at least 6 repetitions before any 95% interval exists, which would
double the wall time of every point for the same guarantee. The point's figure stays the
median of the repetitions (robust to one disturbed repetition); its interval is reported
beside it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sizing.intervals import median_interval, repetition_flags
from sizing.records import Guards, RepetitionEvidence, Verdict
from sizing.trend import mann_kendall_p

CLIENT_BUSY_LIMIT = 90.0  # % busy on the client's CPUs: the load generator is saturated
CLIENT_STARVED = 97.0  # % busy: no idle time left on the client's CPUs (a starved client)
UPSTREAM_BUSY_LIMIT = 90.0  # % of the upstream nginx's CPUs: the upstream pool is saturated
SATURATED = 90.0  # % busy on the server's pinned CPUs that proves a capacity figure
NEAR_LIMIT = 85.0  # a client or upstream this busy is named as the likely limit
# Pinned CPUs busy, but nginx's own time plus its kernel network work below this share:
# other processes took the rest (user-time accounting is coarse, hence not 90).
WORK_FLOOR = 75.0
SERVER_BUSY_FLOOR = 85.0  # % busy on the server's pinned CPUs below which it had headroom
MAX_ERROR_RATIO = 0.001  # errors + non-2xx/3xx above 0.1% of requests invalidate a point
MIN_CONNECTION_SHARE = 0.95  # keepalive: established connections must reach 95% of asked
STEAL_LIMIT = 2.0  # % steal on the server's pinned CPUs marks a point unstable
TREND_P = 0.05  # a point whose own trend test says p < 5% keeps measuring: the host may settle
DROP_LIMIT = 0.20  # a 20% drop between consecutive repetitions with steal or throttling
TARGET_HALF_WIDTH = 0.02  # ±2%
CONFIDENCE = 0.95


# Two-sided 95% critical values of Student's t distribution, by degrees of freedom
# (standard table values, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
@dataclass(frozen=True)
class Interval:
    """A confidence interval around a centre, with its relative half width."""

    centre: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        """Half width as a fraction of the centre (0.02 is ±2%)."""
        if self.centre == 0:
            return math.inf
        return (self.high - self.low) / 2 / abs(self.centre)


def median_ci(values: Sequence[float]) -> Interval | None:
    """The distribution-free interval of the median (:func:`sizing.intervals.
    median_interval`), centred on the median: the one interval every output shows for a
    point. With fewer than 6 values it is [min, max], whose coverage is below 95%
    (:func:`sizing.intervals.interval_words` says how much). None with fewer than 2."""
    got = median_interval(values)
    if got is None:
        return None
    return Interval(statistics.median(values), got[0], got[1])


@dataclass(frozen=True)
class StopRule:
    """When to stop repeating a point."""

    min_reps: int = 3
    max_reps: int = 10
    target: float = TARGET_HALF_WIDTH
    fixed: int | None = None  # --repeat N: exactly N, no adaptation

    def done(self, values: Sequence[float]) -> bool:
        """True when no more repetitions are needed."""
        n = len(values)
        if self.fixed is not None:
            return n >= self.fixed
        if n < self.min_reps:
            return False
        if n >= self.max_reps:
            return True
        return self.converged(values)

    def converged(self, values: Sequence[float]) -> bool:
        """The interval of the median every later output shows (:func:`median_ci`) is
        within the target; the repetitions trend (this point's own test at 5%: not a flag,
        which is decided across the run) or scatter erratically (never converged: more
        repetitions may show the host settle)."""
        ci = median_ci(values)
        if ci is None or ci.half_width > self.target:
            return False
        return not repetition_flags(values)[0] and mann_kendall_p(values) >= TREND_P


def check_errors(reps: Sequence[RepetitionEvidence]) -> Verdict | None:
    """More than 0.1% socket errors or non-2xx/3xx responses invalidates a point."""
    requests = sum(r.requests for r in reps)
    sock = sum(r.socket_errors for r in reps)
    http = sum(r.http_errors for r in reps)
    if requests == 0:
        return Verdict("errors", "no request completed")
    ratio = (sock + http) / requests
    if ratio > MAX_ERROR_RATIO:
        return Verdict(
            "errors",
            f"{sock + http} of {requests} requests failed ({100 * ratio:.2f}% > "
            f"{100 * MAX_ERROR_RATIO:.1f}%): {sock} socket errors (connect, read, write, "
            f"timeout), {http} HTTP 4xx/5xx responses",
        )
    return None


def check_connections(
    reps: Sequence[RepetitionEvidence], requested: int, keepalive: bool
) -> Verdict | None:
    """With keepalive, the server must have held (almost) every requested connection."""
    if not keepalive:
        return None
    seen = [r.established for r in reps if r.established is not None]
    if not seen:
        return None
    reached = min(seen)
    if reached < MIN_CONNECTION_SHARE * requested:
        return Verdict(
            "connections",
            f"only {reached} of {requested} requested connections were established on the "
            "server (check worker_connections, file-descriptor limits and the backlog)",
        )
    return None


def _medians(reps: Sequence[RepetitionEvidence], attr: str) -> dict[str, float]:
    hosts = sorted({h for r in reps for h in getattr(r, attr)})
    return {
        h: statistics.median([getattr(r, attr)[h] for r in reps if h in getattr(r, attr)])
        for h in hosts
    }


def _server_median(reps: Sequence[RepetitionEvidence]) -> float | None:
    server = [r.server_busy for r in reps if r.server_busy is not None]
    return statistics.median(server) if server else None


def upstream_cpus_needed(server_busy: float, capacity: Mapping[str, float]) -> int:
    """How many more upstream CPUs would let the server reach saturation: the pool's
    ``capacity`` CPUs carried the server to ``server_busy`` %, so ~100% needs
    ``capacity * 100 / server_busy`` of them."""
    have = sum(capacity.values()) or 1.0
    need = math.ceil(have * 100.0 / max(server_busy, 1.0) - 1e-9)
    return max(1, math.ceil(need - have - 1e-9))


def _server_load(reps: Sequence[RepetitionEvidence]) -> float | None:
    """The server's own load: nginx and its kernel work where sampled (other processes on
    the pinned CPUs do not count), else the pinned CPUs' busy share."""
    load = [r.server_work if r.server_work is not None else r.server_busy for r in reps]
    known = [v for v in load if v is not None]
    return statistics.median(known) if known else None


def check_upstream_bound(reps: Sequence[RepetitionEvidence]) -> Verdict | None:
    """Upstream CPUs above 90% while the server's pinned CPUs stayed below 85%."""
    server_busy = _server_load(reps)
    busy = _medians(reps, "upstream_busy")
    if server_busy is None or not busy:
        return None
    hot = [h for h, b in busy.items() if b > UPSTREAM_BUSY_LIMIT]
    if not hot or server_busy >= SERVER_BUSY_FLOOR:
        return None
    capacity = _medians(reps, "upstream_capacity")
    more = upstream_cpus_needed(server_busy, capacity)
    names = ", ".join(f"{h} {busy[h]:.0f}% of {capacity.get(h, 0):g} CPU" for h in hot)
    return Verdict(
        "upstream-bound",
        f"upstream-bound: the upstream nginx was saturated ({names}) while the server's "
        f"pinned CPUs were {server_busy:.0f}% busy; the upstream pool, not NGINX, set the "
        f"figure. Fix: give the upstreams about {more} more CPU{'s' if more != 1 else ''} "
        "(an `upstreams` host in the inventory, or fewer cgroup/CPU limits on them)",
    )


def check_saturated(
    reps: Sequence[RepetitionEvidence],
    requested: int,
    keepalive: bool,
    network_bound: bool = False,
) -> Verdict | None:
    """A max-throughput figure counts only when the server's pinned CPUs averaged 90% or
    more; otherwise name what limited it: client, upstream, network or connections."""
    server_busy = _server_median(reps)
    if server_busy is None:
        return None
    work = [r.server_work for r in reps if r.server_work is not None]
    server_work = statistics.median(work) if work else None
    crowded = server_work is not None and server_work < WORK_FLOOR
    if server_busy >= SATURATED and not crowded:
        return None
    client = _medians(reps, "client_busy")
    upstream = _medians(reps, "upstream_busy")
    shared = any(r.upstream_shares_client for r in reps)
    top_client = max(client.values(), default=0.0)
    top_up = max(upstream.values(), default=0.0)
    seen = [r.established for r in reps if r.established is not None]
    if any(r.quota_throttled > 0 for r in reps):
        limit = "cgroup CPU limit that throttled it or its load generator (cpu-quota)"
    elif top_up >= NEAR_LIMIT:
        limit = f"upstream ({top_up:.0f}% of its CPUs)"
    elif server_busy >= SATURATED:
        limit = (
            "other processes on the pinned CPUs (a shared or noisy host), "
            f"{server_busy - (server_work or 0.0):.0f}% of them"
        )
    elif top_client >= NEAR_LIMIT:
        limit = f"client ({top_client:.0f}% of its CPUs)"
        if shared:
            limit = (
                f"client side ({top_client:.0f}% of the CPUs the load generator shares with "
                f"the upstream nginx, whose own share was {top_up:.0f}%)"
            )
    elif network_bound:
        limit = "network (the NIC's line rate)"
    elif keepalive and seen and min(seen) < MIN_CONNECTION_SHARE * requested:
        limit = f"connections (only {min(seen)} of {requested} established)"
    else:
        others = f"the client at {top_client:.0f}%" + (
            f" and the upstream at {top_up:.0f}%" if upstream else ""
        )
        limit = (
            f"connections ({requested} kept the server {math.floor(server_busy)}% busy with "
            f"{others}: more concurrency, --connections, would load it further)"
        )
    # floored: 89.7% is not shown as "90% (< 90%)"
    load = f"averaged {math.floor(server_busy)}% busy (< {SATURATED:.0f}%)"
    if crowded and server_busy >= SATURATED:
        load = (
            f"were {server_busy:.0f}% busy but nginx and its kernel network work used only "
            f"{server_work:.0f}%"
        )
    return Verdict(
        "not-saturated",
        f"not-saturated: the server's pinned CPUs {load}, so this is not a capacity figure; "
        f"limited by the {limit}",
    )


def check_quota(reps: Sequence[RepetitionEvidence]) -> Verdict | None:
    """A cgroup CPU limit (a container's or a systemd slice's quota) throttled the nginx
    under test or a load generator during a timed repetition. Their CPUs then look idle
    while they wait for the quota, so neither the server's busy share nor the client's
    can say what held the figure (a starved client read as "limited by the connections"):
    the limit did, and it is named."""
    hit = [r for r in reps if r.quota_throttled > 0]
    if not hit:
        return None
    quotas = [r.quota_cpus for r in hit if r.quota_cpus is not None]
    of = f" of {min(quotas):g} CPU{'' if min(quotas) == 1 else 's'}" if quotas else ""
    return Verdict(
        "cpu-quota",
        f"cpu-quota: a cgroup CPU limit{of} throttled the nginx under test or its load "
        f"generator {sum(r.quota_throttled for r in hit)} times, in {len(hit)} of {len(reps)} "
        "timed repetitions: their CPUs look idle while they wait for it, so this measures the "
        "limit, not the cores. Fix: run outside the limit (a container's --cpus, a slice's "
        "CPUQuota) or raise it above what everything in that cgroup needs (on a one-host run "
        "the load generator shares it with nginx)",
    )


def check_client_bound(reps: Sequence[RepetitionEvidence], clients: int) -> Verdict | None:
    """Client CPUs above 90% busy while the server's pinned CPUs stayed below 85%; or a
    client with no idle time at all (97% or more: its own work or anything else on its
    cores, a starved client) while the server stayed below saturation (90%). Between 85%
    and 90% the server was neither idle nor proven saturated, and a client core with no
    idle left is what held it there (on a fast-RSA host a starved client left the server
    at 87% and was only called not-saturated); a client at 91% still had time to spare."""
    server = [r.server_busy for r in reps if r.server_busy is not None]
    if not server or not any(r.client_busy for r in reps):
        return None
    server_busy = statistics.median(server)
    hosts = sorted({h for r in reps for h in r.client_busy})
    busy = {
        h: statistics.median([r.client_busy[h] for r in reps if h in r.client_busy]) for h in hosts
    }
    hot = [h for h, b in busy.items() if b > CLIENT_BUSY_LIMIT]
    starved = [h for h, b in busy.items() if b >= CLIENT_STARVED]
    if (hot and server_busy < SERVER_BUSY_FLOOR) or (starved and server_busy < SATURATED):
        more = clients_needed(server_busy, busy)
        names = ", ".join(f"{h} {busy[h]:.0f}%" for h in hot)
        if any(r.upstream_shares_client for r in reps):
            up = _medians(reps, "upstream_busy")
            names += (
                "; the upstream nginx runs on these CPUs too, "
                f"its own share {max(up.values(), default=0.0):.0f}%"
            )
        return Verdict(
            "client-bound",
            f"client-bound: load generator CPUs busy ({names}) while the server's pinned "
            f"CPUs were {server_busy:.0f}% busy; this measures the client, not the server. "
            f"Fix: give the load generator more cores or add {more} client "
            f"host{'s' if more != 1 else ''} to the inventory",
        )
    return None


def clients_needed(server_busy: float, client_busy: Mapping[str, float]) -> int:
    """How many more client hosts like these would drive the server to saturation.

    The clients delivered ``server_busy`` % of the server's CPU while they themselves were
    saturated; reaching ~100% needs ``n * 100 / server_busy`` such clients in total.
    """
    n = max(1, len(client_busy))
    if server_busy <= 0:
        return n
    total = math.ceil(n * 100.0 / max(server_busy, 1.0) - 1e-9)
    return max(1, total - n)


def check_tls(reps: Sequence[RepetitionEvidence], handshake_profile: bool) -> Verdict | None:
    """In a handshake test, any resumed session invalidates the point."""
    if not handshake_profile:
        return None
    reused = sum(r.tls_reused for r in reps)
    full = sum(r.tls_full for r in reps)
    if reused:
        return Verdict(
            "reused-sessions",
            f"{reused} of {reused + full} TLS handshakes resumed a session: this measures "
            "cheap resumptions, not full handshakes (turn the session cache and tickets off)",
        )
    if full == 0:
        return Verdict(
            "no-tls-proof",
            "no handshake was logged by the server, so full handshakes are not proven",
        )
    return None


def check_stability(reps: Sequence[RepetitionEvidence]) -> Verdict | None:
    """Steal above 2%, or a >20% drop between repetitions with steal or throttling."""
    steals = [r.server_steal for r in reps if r.server_steal is not None]
    if steals and max(steals) > STEAL_LIMIT:
        return Verdict(
            "unstable",
            f"the hypervisor stole {max(steals):.1f}% of the server's pinned CPUs "
            f"(limit {STEAL_LIMIT:.0f}%): the figure depends on its neighbours",
        )
    for prev, cur in zip(reps, reps[1:], strict=False):
        if prev.value > 0 and (prev.value - cur.value) / prev.value > DROP_LIMIT:
            disturbed = (cur.server_steal or 0) >= 0.5 or cur.throttled > 0
            if disturbed:
                return Verdict(
                    "unstable",
                    f"throughput fell {100 * (prev.value - cur.value) / prev.value:.0f}% between "
                    f"consecutive repetitions while CPU was stolen or throttled "
                    "(burstable credits or a noisy neighbour)",
                )
    return None


def judge(
    reps: Sequence[RepetitionEvidence],
    *,
    requested_connections: int,
    keepalive: bool,
    handshake_profile: bool,
    clients: int,
    max_rate: bool = True,
    network_bound: bool = False,
) -> list[Verdict]:
    """Every guard's verdict for a point's timed repetitions, most serious first."""
    out = [
        check_errors(reps),
        check_connections(reps, requested_connections, keepalive),
        check_tls(reps, handshake_profile),
        check_quota(reps),
        check_client_bound(reps, clients),
        check_upstream_bound(reps),
        check_stability(reps),
        check_saturated(reps, requested_connections, keepalive, network_bound)
        if max_rate
        else None,
    ]
    return [v for v in out if v is not None]


def recheck(guards: Guards) -> list[Verdict]:
    """The guards run again on a stored point's own evidence: a reader checks a verdict
    without the samples or the hosts (it equals the stored ``guards.verdicts``)."""
    i = guards.inputs
    return judge(
        guards.repetitions,
        requested_connections=i.requested_connections,
        keepalive=i.keepalive,
        handshake_profile=i.handshake_profile,
        clients=i.clients,
        max_rate=i.max_rate,
        network_bound=i.network_bound,
    )
