"""What ``playbooks/facts.yml`` found on a host, parsed (pure; the Ansible call is in
:mod:`sizing.provision.facts`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sizing.records.host import HostRecord
from sizing.topology import Topology

__all__ = ["HostFacts", "ToolDir"]


@dataclass(frozen=True)
class ToolDir:
    """The host's tool directory as ``playbooks/facts.yml`` looked at it, changing nothing
    (``files/tooldir.py --look``): whether it is a private directory of the user the tools
    run as, its files (name -> (mode, SHA-1)) and which load generators are on PATH."""

    private: bool
    files: Mapping[str, tuple[str, str]]
    commands: Mapping[str, bool]

    @classmethod
    def parse(cls, stdout: str) -> ToolDir:
        """The look's JSON; raises ValueError, KeyError or TypeError when unreadable."""
        doc = json.loads(stdout)
        uid, now = doc["uid"], doc["after"]
        private = (
            not doc["reasons"]
            and not doc["error"]
            and now["isdir"] is True
            and now["islnk"] is False
            and now["uid"] == uid
            and now["mode"] == "0700"
        )
        files = {
            name: (str(f["mode"]), str(f["sha1"]))
            for name, f in doc["files"].items()
            if f.get("type") == "file" and f.get("uid") == uid
        }
        return cls(private, files, {str(c): bool(v) for c, v in doc["commands"].items()})

    def holds(self, files: Mapping[str, tuple[str, str]], commands: Iterable[str]) -> bool:
        """True when the directory is private, holds exactly these files (mode, SHA-1) and
        every one of ``commands`` is on PATH: what playbooks/clients.yml would leave as it is."""
        return (
            self.private
            and all(self.files.get(name) == want for name, want in files.items())
            and all(self.commands.get(c, False) for c in commands)
        )


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
    # The tool directory, when the run asked facts.yml to look at it (None: not looked at,
    # or the look could not be read): decides whether playbooks/clients.yml runs.
    tool_dir: ToolDir | None = None

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
