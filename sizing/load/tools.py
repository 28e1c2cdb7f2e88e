"""The load generators' registry: one :class:`LoadTool` per generator a profile may name.

A profile's ``generator:`` is looked up here (:func:`tool`, :func:`open_loop_tool`) and
nowhere else is a generator's name compared: what differs between wrk, oha and vegeta is
said once, as a tool's :class:`Capabilities`, its argv builder (:meth:`LoadTool.command`,
from a tool-neutral :class:`LoadRequest`) and its parser (:meth:`LoadTool.parse`); a
closed-loop window's command and output go through the profile's tool too
(:func:`closed_loop_parse`: wrk's figures).
``tests/unit/test_load_tools.py`` fails on a generator name check outside this module.

Adding a generator is its driver module (``sizing/load/TOOL.py``: spec, argv, parser),
its entry here, and its name in ``Profile.generator``; ``playbooks/files/loadgen.py`` runs
whatever argv it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from sizing.errors import UsageError
from sizing.load import oha, vegeta, wrk
from sizing.loadproto import Command, CommandOutput

__all__ = [
    "DEFAULT_OPEN_LOOP",
    "OHA",
    "OPEN_LOOP",
    "TOOLS",
    "VEGETA",
    "WRK",
    "Capabilities",
    "LoadRequest",
    "LoadTool",
    "OpenLoopTool",
    "RateResult",
    "ToolResult",
    "closed_loop_parse",
    "open_loop_tool",
    "tool",
]

RateResult = oha.OhaResult | vegeta.VegetaResult  # an open-loop window's
ToolResult = RateResult | wrk.WrkResult


@dataclass(frozen=True)
class Capabilities:
    """What a generator can do, as the plan and the measurement ask it."""

    open_loop: bool  # offers a fixed rate on a schedule (else closed loop: as fast as answered)
    latency_histogram: bool  # a bucketed histogram per client, merged exactly across clients
    full_handshakes: bool  # can make every request a new TLS connection (keepalive off)
    # an achieved rate below the offered one means the client fell behind (vegeta's pacer);
    # False: it also falls when the server saturates, so only a busy client says so (oha)
    lag_means_client_behind: bool = False


@dataclass(frozen=True)
class LoadRequest:
    """One client's share of one window, in no tool's terms: each tool builds its spec.

    ``rate`` and ``connections`` are this client's (already split between the clients);
    ``tool_dir`` is where ``playbooks/clients.yml`` put the tools on the client;
    ``window=False`` leaves out what only a real window sets (timeouts, result files), as
    the dry run prints it."""

    url: str
    duration_s: float
    connections: int
    tool_dir: str
    rate: int = 0  # open loop only
    headers: tuple[str, ...] = ()
    keepalive: bool = True
    cpus: tuple[int, ...] = ()
    window: bool = True


class LoadTool(Protocol):
    """A load generator: its name, capabilities, pinned version, argv builder and parser."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def version(self) -> str | None:
        """The pinned version a point records (None: the client's own, read from it)."""
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

    def parse(self, out: CommandOutput) -> ToolResult:
        """The command's output parsed, or a :class:`~sizing.errors.ToolError`."""
        ...


class OpenLoopTool(LoadTool, Protocol):
    """A generator that offers fixed rates (``capabilities.open_loop``)."""

    def parse(self, out: CommandOutput) -> RateResult: ...


def _timeout(duration_s: float) -> float:
    return max(5.0, min(30.0, duration_s))


@dataclass(frozen=True)
class _Wrk:
    name: str = "wrk"
    capabilities: Capabilities = Capabilities(
        open_loop=False, latency_histogram=False, full_handshakes=True
    )
    version: str | None = None  # the client's packaged wrk, read from it
    build: str | None = None
    planning_rate_per_core: int = 0  # closed loop: it offers what the server answers
    max_rate_lag: float = 0.0

    def spec(self, req: LoadRequest) -> wrk.WrkSpec:
        """wrk's spec: one thread per CPU it may use, never more than its connections."""
        close = () if req.keepalive else ("Connection: close",)
        return wrk.WrkSpec(
            url=req.url,
            threads=max(1, min(len(req.cpus) or 1, req.connections)),
            connections=req.connections,
            duration_s=float(req.duration_s),
            headers=close + req.headers,
            cpus=req.cpus,
            script=f"{req.tool_dir}/wrk_report.lua",
        )

    def command(self, req: LoadRequest) -> Command:
        return Command(wrk.build_argv(self.spec(req)))

    def parse(self, out: CommandOutput) -> ToolResult:
        return wrk.parse(out.stdout)


@dataclass(frozen=True)
class _Oha:
    name: str = "oha"
    capabilities: Capabilities = Capabilities(
        open_loop=True, latency_histogram=True, full_handshakes=True
    )
    version: str | None = oha.VERSION
    build: str | None = oha.BUILD
    planning_rate_per_core: int = oha.PLANNING_RATE_PER_CORE
    max_rate_lag: float = oha.MAX_RATE_LAG

    def spec(self, req: LoadRequest) -> oha.OhaSpec:
        spec = oha.OhaSpec(
            url=req.url,
            rate=req.rate,
            duration_s=req.duration_s,
            connections=req.connections,
            headers=req.headers,
            keepalive=req.keepalive,
            cpus=req.cpus,
        )
        if not req.window:
            return spec
        return replace(
            spec, timeout_s=_timeout(req.duration_s), db_file=f"{req.tool_dir}/oha-results.db"
        )

    def command(self, req: LoadRequest) -> Command:
        spec = self.spec(req)
        argv = oha.argv(spec, oha=f"{req.tool_dir}/oha")
        if not spec.db_file:  # the dry run's: no raw latencies written, none to bucket
            return Command(argv)
        return Command(argv, then=[oha.hist_argv(spec, f"{req.tool_dir}/latency_hist.py")])

    def parse(self, out: CommandOutput) -> RateResult:
        if not out.then:
            raise oha.OhaParseError("latency_hist.py did not run")
        return oha.parse(out.stdout, out.then[0].stdout)


@dataclass(frozen=True)
class _Vegeta:
    name: str = "vegeta"
    capabilities: Capabilities = Capabilities(
        open_loop=True,
        latency_histogram=False,
        full_handshakes=True,
        lag_means_client_behind=True,
    )
    version: str | None = vegeta.VERSION
    build: str | None = None
    planning_rate_per_core: int = vegeta.PLANNING_RATE_PER_CORE
    max_rate_lag: float = vegeta.MAX_RATE_LAG

    def spec(self, req: LoadRequest) -> vegeta.VegetaSpec:
        spec = vegeta.VegetaSpec(
            url=req.url,
            rate=req.rate,
            duration_s=req.duration_s,
            results_file=f"{req.tool_dir}/vegeta-results.bin",
            headers=req.headers,
            cpus=req.cpus,
        )
        if not req.window:
            return spec
        return replace(spec, timeout_s=_timeout(req.duration_s), keepalive=req.keepalive)

    def command(self, req: LoadRequest) -> Command:
        spec = self.spec(req)
        binary = f"{req.tool_dir}/vegeta"
        return Command(
            vegeta.attack_argv(spec, vegeta=binary),
            stdin=vegeta.targets(spec),
            then=vegeta.report_argvs(spec, vegeta=binary),
        )

    def parse(self, out: CommandOutput) -> RateResult:
        then = out.then or []
        if len(then) < 2:
            raise vegeta.VegetaParseError("vegeta's reports did not run")
        return vegeta.parse(then[0].stdout, then[1].stdout)


WRK, OHA, VEGETA = _Wrk(), _Oha(), _Vegeta()
TOOLS: dict[str, LoadTool] = {t.name: t for t in (WRK, OHA, VEGETA)}
OPEN_LOOP: dict[str, OpenLoopTool] = {t.name: t for t in (OHA, VEGETA)}
# A fixed-rate profile whose generator runs closed loop is offered its rates by vegeta.
DEFAULT_OPEN_LOOP: OpenLoopTool = VEGETA


def tool(name: str) -> LoadTool:
    """The registered generator called ``name``, or a :class:`UsageError` naming them."""
    found = TOOLS.get(name)
    if found is None:
        raise UsageError(f"unknown load generator {name!r} (known: {', '.join(sorted(TOOLS))})")
    return found


def closed_loop_parse(generator: str, stdout: str) -> wrk.WrkResult:
    """A closed-loop window's output, parsed by its profile's generator (wrk's figures)."""
    got = tool(generator).parse(CommandOutput(argv=[], rc=0, stdout=stdout))
    if not isinstance(got, wrk.WrkResult):
        raise UsageError(f"{generator} does not measure closed-loop windows")
    return got


def open_loop_tool(generator: str) -> OpenLoopTool:
    """The tool that offers a fixed-rate profile's rates: its own generator when that runs
    open loop, else :data:`DEFAULT_OPEN_LOOP`."""
    return OPEN_LOOP.get(tool(generator).name, DEFAULT_OPEN_LOOP)
