"""The tool-neutral types a load generator speaks (:class:`LoadRequest` in;
:class:`Capabilities` and :class:`ToolInstall` out): the protocol itself,
:class:`sizing.load.tools.LoadTool`, names the tools' results, so it lives in the registry.

Each generator implements it in its own module (``sizing/load/TOOL.py``: its install, its
version probe, its argv, its parser and latency report, its plan summary, its
capabilities); :mod:`sizing.load.tools` registers them, and the rest of sizing asks the
registry only. Pure declarations, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sizing.loadproto import CommandOutput

__all__ = [
    "Capabilities",
    "LoadRequest",
    "ToolInstall",
    "first_version",
    "window_timeout",
]


@dataclass(frozen=True)
class Capabilities:
    """What a generator can do, as the plan and the measurement ask it."""

    open_loop: bool  # offers a fixed rate on a schedule (else closed loop: as fast as answered)
    latency_histogram: bool  # a bucketed histogram per client, merged exactly across clients
    full_handshakes: bool  # can make every request a new TLS connection (keepalive off)
    # an achieved rate below the offered one means the client fell behind (vegeta's pacer);
    # False: it also falls when the server saturates, so only a busy client says so (oha)
    lag_means_client_behind: bool = False
    tls: bool = True  # loads https:// URLs
    http_versions: tuple[str, ...] = ("1.1",)  # the HTTP versions it can speak
    # the latency percentiles its report gives (a histogram gives any: empty)
    latency_percentiles: tuple[float, ...] = ()


@dataclass(frozen=True)
class ToolInstall:
    """How ``playbooks/clients.yml`` installs a generator on a client: the Debian packages
    to install when ``command`` is not found. None on a tool: sizing builds and copies it
    itself (:class:`sizing.provision.tools.ClientTools`: oha, vegeta)."""

    command: str
    packages: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in (self.command, *self.packages):
            if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", name):
                raise ValueError(f"not a command or package name: {name!r}")


@dataclass(frozen=True)
class LoadRequest:
    """One client's share of one window, in no tool's terms: each tool builds its spec.

    ``rate`` and ``connections`` are this client's (already split between the clients);
    ``tool_dir`` is where ``playbooks/clients.yml`` put the tools on the client;
    ``window=False`` leaves out what only a real window sets (timeouts, result files,
    the version probe), as the dry run prints it."""

    url: str
    duration_s: float
    connections: int
    tool_dir: str
    rate: int = 0  # open loop only
    headers: tuple[str, ...] = ()
    keepalive: bool = True
    cpus: tuple[int, ...] = ()
    window: bool = True
    targets: str = ""  # a replay's weighted target list (sizing.load.replay.target_list)

    @property
    def threads(self) -> int:
        """A closed-loop tool's threads: one per CPU it may use, never more than its
        connections."""
        return max(1, min(len(self.cpus) or 1, self.connections))


def window_timeout(duration_s: float) -> float:
    """A window's request timeout: its length, within 5 to 30 s."""
    return max(5.0, min(30.0, duration_s))


def first_version(outputs: list[CommandOutput] | None, pattern: str) -> str | None:
    """The first match of ``pattern``'s group in the follow-up outputs (a version probe)."""
    for out in outputs or ():
        m = re.search(pattern, f"{out.stdout}\n{out.stderr}")
        if m:
            return m.group(1)
    return None
