"""The load generators' registry: one :class:`~sizing.load.base.LoadTool` per generator a
profile may name.

A profile's ``generator:`` is looked up here (:func:`tool`, :func:`open_loop_tool`) and
nowhere else is a generator's name compared: everything about a generator (its install,
version, argv, parser and latency report, plan summary and capabilities) is its own
module's (``sizing/load/TOOL.py``), and the rest of sizing asks this registry only.
``tests/unit/test_load_tools.py`` fails on a generator name check outside this module.

Adding a generator is its module and its line in :data:`TOOLS`;
``playbooks/files/loadgen.py`` runs whatever argv it is given, and
``playbooks/clients.yml`` installs what the tools declare (:func:`client_installs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from sizing.errors import UsageError
from sizing.load import DEFAULT_GENERATOR
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall
from sizing.load.h2load import H2LOAD
from sizing.load.latency import LatencyReport
from sizing.load.oha import OHA
from sizing.load.replay import REPLAY
from sizing.load.result import LoadResult
from sizing.load.vegeta import VEGETA
from sizing.load.wrk import WRK
from sizing.loadproto import Command, CommandOutput

__all__ = [
    "DEFAULT_GENERATOR",
    "DEFAULT_OPEN_LOOP",
    "OHA",
    "OPEN_LOOP",
    "REPLAY",
    "TOOLS",
    "VEGETA",
    "WRK",
    "Capabilities",
    "LoadRequest",
    "LoadResult",
    "LoadTool",
    "ToolBuild",
    "ToolInstall",
    "builds",
    "built_for",
    "client_files",
    "pinned_cpus",
    "client_installs",
    "closed_loop_parse",
    "open_loop_tool",
    "tool",
]


class LoadTool(Protocol):
    """A load generator: its name, capabilities, install, version, argv builder, parser."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def install(self) -> ToolInstall | None:
        """What the clients' playbook installs (None: sizing builds and copies it)."""
        ...

    @property
    def built(self) -> ToolBuild | None:
        """How sizing builds it and copies it to the clients (None: ``install`` does)."""
        ...

    @property
    def ships(self) -> tuple[str, ...]:
        """The files of ``playbooks/files/`` its install puts in a client's tool directory
        beside it (``clients.yml`` for an installed tool, its ``built.playbook`` else)."""
        ...

    @property
    def version(self) -> str | None:
        """The pinned version a point records (None: the client's own, read from it:
        :meth:`read_version`)."""
        ...

    @property
    def build(self) -> str | None: ...

    @property
    def planning_rate_per_core(self) -> int:
        """Requests/s one client core offers on schedule (``benchmarks/generators``)."""
        ...

    @property
    def max_rate_lag(self) -> float:
        """The shortfall of the achieved rate below which a window kept its schedule."""
        ...

    def command(self, req: LoadRequest) -> Command:
        """The command (argv, stdin, follow-up reports) a client runs for one window."""
        ...

    def summary(self, req: LoadRequest) -> list[str]:
        """The argv the plan prints for ``req`` (``sizing run --plan``)."""
        ...

    def parse(self, out: CommandOutput) -> LoadResult:
        """The command's output parsed (every tool's the same type), or a
        :class:`~sizing.errors.ToolError`."""
        ...

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        """One client's latency distribution of a window, or a ToolError."""
        ...

    def read_version(self, out: CommandOutput) -> str | None:
        """The version of the tool that ran, from a window's output (else :attr:`version`)."""
        ...


TOOLS: dict[str, LoadTool] = {t.name: t for t in (WRK, OHA, VEGETA, H2LOAD, REPLAY)}
# the tools that say they run open loop (their capability; every tool's result is a LoadResult)
OPEN_LOOP: dict[str, LoadTool] = {name: t for name, t in TOOLS.items() if t.capabilities.open_loop}
# A fixed-rate profile whose generator runs closed loop is offered its rates by vegeta.
DEFAULT_OPEN_LOOP: LoadTool = VEGETA


def tool(name: str) -> LoadTool:
    """The registered generator called ``name``, or a :class:`UsageError` naming them."""
    found = TOOLS.get(name)
    if found is None:
        raise UsageError(f"unknown load generator {name!r} (known: {', '.join(sorted(TOOLS))})")
    return found


def closed_loop_parse(generator: str, out: CommandOutput) -> LoadResult:
    """A closed-loop window's output, parsed by its profile's generator; a generator whose
    capabilities say it runs open loop does not measure closed-loop windows."""
    found = tool(generator)
    if found.capabilities.open_loop:
        raise UsageError(f"{generator} does not measure closed-loop windows")
    return found.parse(out)


def open_loop_tool(generator: str) -> LoadTool:
    """The tool that offers a fixed-rate profile's rates: its own generator when that runs
    open loop, else :data:`DEFAULT_OPEN_LOOP`."""
    return OPEN_LOOP.get(tool(generator).name, DEFAULT_OPEN_LOOP)


def client_installs(generators: Iterable[str]) -> tuple[list[str], list[str]]:
    """What ``playbooks/clients.yml`` installs for ``generators``: (the commands it looks
    for, the packages it installs when one is missing); wrk always (the default)."""
    installs = [i for i in (tool(g).install for g in sorted({DEFAULT_GENERATOR, *generators})) if i]
    commands = sorted({i.command for i in installs})
    packages = sorted({p for i in installs for p in i.packages})
    return commands, packages


def builds() -> dict[str, ToolBuild]:
    """Every generator binary sizing builds and copies itself, by binary (vegeta-replay
    runs vegeta's: one build serves both)."""
    return {t.built.binary: t.built for t in TOOLS.values() if t.built is not None}


def built_for(generator: str) -> ToolBuild | None:
    """What sizing builds and copies for a point of ``generator`` (None: nothing, or a
    name no tool is registered under)."""
    found = TOOLS.get(generator)
    return None if found is None else found.built


def client_files() -> tuple[str, ...]:
    """The files the installed generators (those ``clients.yml`` installs) ship to every
    client's tool directory beside the window runner (wrk's report script)."""
    return tuple(dict.fromkeys(f for t in TOOLS.values() if t.install is not None for f in t.ships))


def pinned_cpus(generator: str, cpus: tuple[int, ...]) -> tuple[int, ...]:
    """The CPUs ``generator`` is pinned to of a client's set ``cpus``: all of them, or the
    first alone for a single-threaded tool (it would use no other: the plan shows and the
    client ceiling counts what it uses). A name no tool is registered under keeps them."""
    found = TOOLS.get(generator)
    return cpus[:1] if found is not None and found.capabilities.single_threaded else cpus
