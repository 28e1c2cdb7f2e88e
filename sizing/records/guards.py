"""Every validity guard's input and verdict, as a point stores them: a valid point can be
checked again from its record alone (:func:`sizing.measure.validity.recheck`)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GuardInputs", "Guards", "RepetitionEvidence", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """What a guard found. ``invalid`` verdicts keep the point out of sizing."""

    flag: str
    reason: str
    invalid: bool = True


@dataclass(frozen=True)
class RepetitionEvidence:
    """What was sampled during one timed repetition, summed over clients."""

    value: float
    requests: int
    socket_errors: int
    http_errors: int
    server_busy: float | None  # mean % busy of the server's pinned CPUs
    server_steal: float | None  # mean % steal of the server's pinned CPUs
    client_busy: dict[str, float]  # client host -> mean % busy of its load CPUs
    established: int | None = None  # server connections seen ESTABLISHED mid-window
    tls_full: int = 0  # handshakes logged as full (session not reused)
    tls_reused: int = 0  # handshakes logged as resumed
    throttled: int = 0  # thermal throttling events on the server during the window
    # periods a cgroup CPU limit (quota_cpus CPUs) throttled the nginx under test or a load
    # generator during the window: their CPUs look idle while they wait
    quota_throttled: int = 0
    quota_cpus: float | None = None
    # upstream host -> % busy of the CPUs its nginx may use (pinned CPUs, cgroup quota)
    upstream_busy: dict[str, float] = field(default_factory=dict)
    upstream_capacity: dict[str, float] = field(default_factory=dict)  # host -> CPUs
    upstream_shares_client: bool = False  # the upstream runs on the load generator's CPUs
    # nginx's own CPU time plus the softirq/irq time on its pinned CPUs, % of those CPUs:
    # the server's work, without other processes that ran there (None: not sampled)
    server_work: float | None = None


@dataclass(frozen=True)
class GuardInputs:
    """What the guards were told besides the repetitions (``judge``'s keywords)."""

    requested_connections: int = 0
    keepalive: bool = True
    handshake_profile: bool = False
    clients: int = 1
    max_rate: bool = True
    network_bound: bool = False


# The verdicts that say the server's CPU did not set the figure, and what did.
LIMITED_BY = {
    "cpu-quota": "a cgroup CPU limit (a quota) on the server or the load generator",
    "not-saturated": "nothing found: the server was not saturated",
    "client-bound": "the load generator's CPUs",
    "upstream-bound": "the upstream's CPUs",
    "network-bound": "the network link",
}


@dataclass(frozen=True)
class Guards:
    """A closed-loop point's guards: their inputs, one evidence per timed repetition and
    every verdict; ``saturated`` and ``limited_by`` say whether the server's CPUs set the
    figure and, if not, what did."""

    inputs: GuardInputs = field(default_factory=GuardInputs)
    repetitions: tuple[RepetitionEvidence, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    saturated: bool | None = None
    limited_by: str | None = None

    @classmethod
    def of(
        cls,
        inputs: GuardInputs,
        reps: tuple[RepetitionEvidence, ...],
        verdicts: tuple[Verdict, ...],
    ) -> Guards:
        limits = [LIMITED_BY[v.flag] for v in verdicts if v.flag in LIMITED_BY]
        return cls(
            inputs,
            reps,
            verdicts,
            saturated=not limits,
            limited_by=limits[0] if limits else "the server's CPUs",
        )
