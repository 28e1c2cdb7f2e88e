"""Bare metal: nothing to prepare; nginx runs on the host's own CPUs."""

from __future__ import annotations

from typing import Any

from sizing.inventory import Host
from sizing.model import Ht
from sizing.provision.platforms.base import Backend, Target


class BareMetal(Backend):
    """The host itself is the server under test."""

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        return Target(host=host.name, address=host.address, workers=cpus)

    def describe(self, host: Host) -> dict[str, Any]:
        return {"platform": "baremetal"}
