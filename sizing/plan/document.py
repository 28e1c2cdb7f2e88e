"""``sizing run --plan``'s document, typed: what :func:`sizing.plan.dryrun.plan_document`
builds, ``dryrun_text`` renders by attribute and ``--plan --json`` prints
(:meth:`PlanDocument.to_json`: every field in declaration order, None as null, except a
field declared :func:`omitted` which is left out when None: a skipped point has no
commands, a point of a closed-loop profile no offered rates)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PlanClient",
    "PlanDocument",
    "PlanEstimate",
    "PlanHost",
    "PlanOffered",
    "PlanPair",
    "PlanPlaybook",
    "PlanPoint",
    "PlanPointRun",
    "PlanServer",
    "PlanSkip",
    "PlanUnpaired",
    "PlanUpstream",
    "PlanWindows",
]

OMIT, FLAT = "plan.omit", "plan.flat"


def omitted() -> Any:
    """A field left out of the JSON when None (see the module)."""
    return field(default=None, metadata={OMIT: True})


def _flat() -> Any:
    """A group of fields written at its parent's level (left out when None)."""
    return field(default=None, metadata={OMIT: True, FLAT: True})


def _json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is None and f.metadata.get(OMIT):
                continue
            if f.metadata.get(FLAT):
                out.update(_json(v))
            else:
                out[f.name] = _json(v)
        return out
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class PlanHost:
    """One host of the inventory: its roles and address, its facts (declared or probed)."""

    name: str
    roles: list[str]
    address: str
    facts: str | None  # "declared", "local", "probed"; None: no facts (not planned)
    reachable: bool | None  # None offline (nothing contacted)
    problem: str | None
    cpus: int | None
    topology: str | None
    cpu_model: str | None


@dataclass(frozen=True)
class PlanWindows:
    """A point's first batch: warm-up, window length and repetitions."""

    warmup_s: int
    duration_s: int
    repetitions: int


@dataclass(frozen=True)
class PlanClient:
    """One client of a point: its CPUs and the exact command it runs."""

    host: str
    cpus: str
    threads: int
    connections: int
    argv: list[str] | str  # a str: why the command cannot be built


@dataclass(frozen=True)
class PlanOffered:
    """What a fixed-rate point's clients offer: its rates, or the climb's first rate."""

    rates: list[int] | None
    climb_from: int | None
    client_ceiling: float
    client_cores: int
    planning_rate_per_core: int
    generator: str


@dataclass(frozen=True)
class PlanUpstream:
    """Where a gateway point's upstream nginx pool runs."""

    host: str
    cpus: str
    where: str


@dataclass(frozen=True)
class PlanPointRun:
    """How a planned point is measured: nginx's CPUs, the URL, the windows, the clients."""

    server_cpus: str
    nginx_workers: int
    worker_cpu_affinity: str
    url: str
    windows: PlanWindows
    clients: list[PlanClient]


@dataclass(frozen=True)
class PlanPoint:
    """One point: planned, stored (``--resume``) or skipped (and why)."""

    host: str
    platform: str
    cores: int
    ht: str
    profile: str
    status: str  # planned | stored | skipped
    reason: str
    run: PlanPointRun | None = _flat()  # None: not measured (stored or skipped)
    offered: PlanOffered | None = omitted()
    upstreams: list[PlanUpstream] | None = omitted()

    @property
    def label(self) -> str:
        return f"{self.host} {self.platform} {self.cores}c ht={self.ht} {self.profile}"


@dataclass(frozen=True)
class PlanSkip:
    """How many of a server's points are skipped for one reason."""

    reason: str
    points: int


@dataclass(frozen=True)
class PlanServer:
    """Per server: its points, the CPU sets of its configurations, its clients once."""

    host: str
    planned: int
    stored: int
    skipped: int
    configs: dict[str, str]  # "2c HT off" -> nginx's CPU list
    clients: dict[str, str]  # client -> its CPU list
    skip_reasons: list[PlanSkip]
    stands_for: list[str]  # --sample: the identical servers this one is measured for
    # where the socket boundary falls on a multi-socket host, and which points cross it
    sockets: str = ""


@dataclass(frozen=True)
class PlanEstimate:
    """The run's time, fewest to most repetitions (seconds), and what of it is assumed."""

    points: int
    configs: int
    low_s: int
    high_s: int
    overhead_s: int


@dataclass(frozen=True)
class PlanPlaybook:
    """How many times a playbook runs."""

    playbook: str
    runs: int
    done: bool | None = omitted()
    note: str | None = omitted()


@dataclass(frozen=True)
class PlanPair:
    """One pair of the plan: its legs and the order their windows alternate in."""

    kind: str
    figure: str
    a: str
    b: str
    c: str | None
    order: str
    pairs: str


@dataclass(frozen=True)
class PlanUnpaired:
    """A leg left unpaired, and why."""

    point: str
    reason: str


@dataclass(frozen=True)
class PlanDocument:
    """The dry run (see :func:`sizing.plan.dryrun.plan_document`)."""

    nothing_to_measure: str | None
    inventory: str
    resume_run: int | None
    probed: bool
    hosts: list[PlanHost]
    points: list[PlanPoint] | None  # None without --verbose/--json: the summary says it
    servers: list[PlanServer]
    estimate: PlanEstimate
    playbooks: list[PlanPlaybook]
    preflight: list[str]
    pairs: list[PlanPair] | None  # None: the pairs were not looked for
    unpaired: list[PlanUnpaired] | None

    def to_json(self) -> dict[str, Any]:
        """The document as ``--plan --json`` prints it (see the module)."""
        out: dict[str, Any] = _json(self)
        return out
