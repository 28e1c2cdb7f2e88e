"""What a measurement method receives instead of the whole sweep."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sizing.facts import HostFacts
from sizing.inventory import Inventory
from sizing.model import PointResult
from sizing.plan.estimate import TimeBudget
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import MeasureSettings
from sizing.provision.ansible import Playbooks
from sizing.provision.platforms import Target
from sizing.provision.tools import ClientTools

__all__ = ["HostHealth", "MeasureContext", "NullProgress", "Progress"]


class Progress(Protocol):
    """Callbacks the CLI implements to show progress."""

    def start(self, total: int, budget: TimeBudget | None = None) -> None: ...

    def step(self, label: str) -> None: ...

    def advance(self, result: PointResult) -> None: ...

    def note(self, message: str) -> None: ...

    def info(self, message: str) -> None: ...


class NullProgress:
    """The default progress: shows nothing."""

    def start(self, total: int, budget: TimeBudget | None = None) -> None:
        pass

    def step(self, label: str) -> None:
        pass

    def advance(self, result: PointResult) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def info(self, message: str) -> None:
        pass


# The start lead once Ansible's reach is known: the slowest reach seen on the host this run
# (from the run's facts on), times REACH_FACTOR, plus REACH_MARGIN_S, at least MIN_LEAD_S.
# Where it is not known (a host whose facts were not read this run), the planned default
# (START_LEAD_S and a stagger per client) holds.
REACH_FACTOR = 1.25
REACH_MARGIN_S = 0.5
MIN_LEAD_S = 1.5


@dataclass
class HostHealth:
    """Hosts that failed mid-sweep, and the start lead each host needs."""

    broken: dict[str, str] = field(default_factory=dict)  # host -> why it is unusable
    leads: dict[str, float] = field(default_factory=dict)  # guest -> seconds to start there
    # host -> the slowest reach seen this run: seconds from sizing starting load.yml (or the
    # run's facts.yml, before the first window) to the window runner (the facts script)
    # starting on the host (its clock against this machine's, which is what a common start
    # needs)
    reach: dict[str, float] = field(default_factory=dict)

    def mark_broken(self, host: str, why: str) -> None:
        """Remember why ``host`` failed; every line that says it names the host once
        (``why`` may come from an error that already begins with it)."""
        while why.startswith(f"{host}: "):
            why = why[len(host) + 2 :]
        self.broken[host] = why

    def set_lead(self, host: str, seconds: float) -> None:
        self.leads[host] = seconds

    def observe_reach(self, host: str, seconds: float) -> None:
        self.reach[host] = max(self.reach.get(host, 0.0), seconds)

    def lead(self, host: str, default: float) -> float:
        """Seconds Ansible needs before a common start on ``host``, at least ``default``."""
        return max(default, self.leads.get(host, 0.0))

    def common_lead(self, hosts: list[str], default: float) -> float:
        """Seconds from now to a common start on ``hosts``: learned from the reach seen on
        every one of them, or ``default`` until each was reached once (a slow guest's own
        lead holds either way)."""
        guest = max((self.leads.get(h, 0.0) for h in hosts), default=0.0)
        if not hosts or any(h not in self.reach for h in hosts):
            return max(default, guest)
        learned = max(REACH_FACTOR * self.reach[h] + REACH_MARGIN_S for h in hosts)
        return max(MIN_LEAD_S, learned, guest)


@dataclass(frozen=True)
class MeasureContext:
    """The run-wide things a measurement method may use."""

    inventory: Inventory
    settings: MeasureSettings
    facts: Mapping[str, HostFacts]
    playbooks: Playbooks
    progress: Progress
    hosts: HostHealth
    tools: ClientTools
    token: str  # api-jwt: the JWT of the run
    run_token: str = ""  # names the run's window runners on the hosts (run-end.yml)

    def facts_of(self, point: PlannedPoint, target: Target) -> HostFacts | None:
        """The facts of the host a point ran on: a booted guest's own (its target's),
        else that host's or its server's as the run read them."""
        return target.facts or self.facts.get(target.host) or self.facts.get(point.server.name)
