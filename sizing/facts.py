"""What ``playbooks/facts.yml`` found on a host, parsed (pure; the Ansible call is in
:mod:`sizing.provision.facts`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sizing.records.host import HostRecord
from sizing.topology import Topology

__all__ = ["HostFacts"]


@dataclass(frozen=True)
class HostFacts:
    """What ``playbooks/facts.yml`` found on a host: its CPU topology, the facts typed
    (``record``) and as reported (``raw``, what the run stores)."""

    topology: Topology
    raw: dict[str, Any]
    # This machine's time when the facts task started on the host and when its result
    # came: the host read its clock in between (the clock pre-flight check).
    clock_window: tuple[float, float] | None = None
    # Seconds from sizing starting playbooks/facts.yml to the facts script starting on the
    # host (its clock against this machine's): Ansible's reach, which the first load
    # window's start lead is learned from (:meth:`sizing.measure.measure_context.HostHealth`).
    reach_s: float | None = None

    @classmethod
    def parse(
        cls, stdout: str, window: tuple[float, float] | None = None, *, called: float | None = None
    ) -> HostFacts:
        """The facts script's JSON output; raises ValueError or KeyError when unreadable.
        ``called``: this machine's time when the playbook was started (gives ``reach_s``);
        the script's start time is not kept with the facts."""
        raw = json.loads(stdout)
        began = raw.pop("began", None)
        reach = None
        if called is not None and isinstance(began, (int, float)):
            reach = float(began) - called
        return cls(Topology.from_lscpu(raw["lscpu"]), raw, window, reach)

    @cached_property
    def record(self) -> HostRecord:
        """The facts, typed."""
        return HostRecord.parse(self.raw)

    @property
    def cpu_model(self) -> str | None:
        """The CPU's model name as /proc/cpuinfo gives it."""
        return self.record.cpu_model or None
