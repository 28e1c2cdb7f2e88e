"""The tool-neutral types a load generator speaks (:class:`LoadRequest` in;
:class:`Capabilities` and :class:`ToolInstall` out); every tool's parser returns
:class:`sizing.load.result.LoadResult`. The protocol itself,
:class:`sizing.load.tools.LoadTool`, lives in the registry.

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
    "ToolBuild",
    "ToolInstall",
    "first_version",
    "window_timeout",
]


@dataclass(frozen=True)
class Capabilities:
    """What a generator can do, as the plan and the measurement ask it."""

    # each is read where it decides something: open_loop by the registry (OPEN_LOOP),
    # full_handshakes and tls by the plan (loadspec.generator_problem), single_threaded by
    # the plan (the CPUs it is pinned to and shown on), lag_means_client_behind by the
    # fixed-rate measurement
    open_loop: bool  # offers a fixed rate on a schedule (else closed loop: as fast as answered)
    full_handshakes: bool  # can make every request a new TLS connection (keepalive off)
    # an achieved rate below the offered one means the client fell behind (vegeta's pacer);
    # False: it also falls when the server saturates, so only a busy client says so (oha)
    lag_means_client_behind: bool = False
    tls: bool = True  # loads https:// URLs
    single_threaded: bool = False  # uses one CPU however many it is given (ApacheBench)


@dataclass(frozen=True)
class ToolInstall:
    """How ``playbooks/clients.yml`` installs a generator on a client: the Debian packages
    to install when ``command`` is not found; ``probe``, the arguments that print its
    version (``sizing doctor``). None on a tool that sizing builds and copies itself (its
    :class:`ToolBuild`: oha, vegeta)."""

    command: str
    packages: tuple[str, ...]
    probe: tuple[str, ...] = ("--version",)

    def __post_init__(self) -> None:
        for name in (self.command, *self.packages):
            if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", name):
                raise ValueError(f"not a command or package name: {name!r}")


@dataclass(frozen=True)
class ToolBuild:
    """A generator sizing builds once per machine and copies to its clients itself (a
    tool's ``built``; its ``install`` is then None): the checkout's
    ``scripts/install-BINARY`` builds ``.cache/bin/BINARY`` (one on PATH serves as well),
    and ``playbook`` copies it, with the files it ships, to every client of a point that
    needs it, given the binary's path as ``extravar``. ``needs`` is what the build needs
    (said when the binary is missing), ``time_words`` and ``seconds`` what a cold build
    costs on a 2-core machine (the line that says why a run waits; the run's estimate,
    fewest to most), ``bg_job`` the ``scripts/bg`` job that builds it after the setup and
    ``cost_words`` what a build costs, first and later (``sizing doctor``)."""

    binary: str
    playbook: str
    extravar: str
    needs: str
    time_words: str
    seconds: tuple[float, float]
    bg_job: str
    cost_words: str

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", self.binary):
            raise ValueError(f"not a binary name: {self.binary!r}")

    @property
    def script(self) -> str:
        """The checkout's install script, relative to the checkout."""
        return f"scripts/install-{self.binary}"


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
