"""What a measurement method receives instead of the whole sweep."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sizing.facts import HostFacts
from sizing.inventory import Inventory
from sizing.model import PointResult
from sizing.plan.settings import MeasureSettings
from sizing.provision.ansible import Playbooks
from sizing.provision.tools import ClientTools

__all__ = ["HostHealth", "MeasureContext", "NullProgress", "Progress"]


class Progress(Protocol):
    """Callbacks the CLI implements to show progress."""

    def start(self, total: int) -> None: ...

    def step(self, label: str) -> None: ...

    def advance(self, result: PointResult) -> None: ...

    def note(self, message: str) -> None: ...


class NullProgress:
    """The default progress: shows nothing."""

    def start(self, total: int) -> None:
        pass

    def step(self, label: str) -> None:
        pass

    def advance(self, result: PointResult) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass
class HostHealth:
    """Hosts that failed mid-sweep, and the start lead a slow guest needs."""

    broken: dict[str, str] = field(default_factory=dict)  # host -> why it is unusable
    leads: dict[str, float] = field(default_factory=dict)  # guest -> seconds to start there

    def mark_broken(self, host: str, why: str) -> None:
        self.broken[host] = why

    def set_lead(self, host: str, seconds: float) -> None:
        self.leads[host] = seconds

    def lead(self, host: str, default: float) -> float:
        """Seconds Ansible needs before a common start on ``host``, at least ``default``."""
        return max(default, self.leads.get(host, 0.0))


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
