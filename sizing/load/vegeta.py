"""The vegeta driver: argv builders and a pure parser of vegeta's reports.

vegeta (github.com/tsenart/vegeta, pinned to v12.12.0 by ``scripts/install-vegeta``) is
the open-loop generator of the latency profiles: it offers a constant request rate whether
or not earlier requests have returned.

**Why vegeta, and why its latencies are free of coordinated omission.** wrk2, which the
latency article used, is not packaged anywhere we can install from; vegeta is, through the
Go module proxy. Read from its ``lib/attack.go`` (v12.12.0):

* The pacer goroutine emits one tick per scheduled send time (``time.Sleep(wait)`` until
  the next one). A tick is handed to an idle worker; when every worker is blocked on an
  outstanding request, the pacer **starts another worker at once** instead of waiting
  (unless ``-max-workers`` caps them, which this driver never does). Each worker uses its
  own connection, and ``-max-connections`` is left unlimited, so a stalled server cannot
  hold back the next send.
* A result's latency is ``time.Since(res.Timestamp)`` where ``Timestamp`` is taken when
  the worker takes the tick. Because a tick never waits for a worker, that is the
  scheduled send time up to the pacer's sleep jitter: a request that waits on a stalled
  server is charged all of its wait, which is what wrk2 achieves by measuring from the
  intended send time on a fixed set of connections.
* The one way vegeta can still omit is a generator too slow to keep its own schedule (a
  saturated client CPU): the pacer then sends late and in bursts, and the lateness is not
  in the latencies. vegeta reports the rate it really sent at (``rate``); the sweep flags
  a point whose sent rate falls short of the offered rate
  (:meth:`~sizing.load.result.LoadResult.lag`).

``tests/integration/test_latency.py`` proves it against a server paused for a known time
(its percentiles meet the bounds computed from the pause, wrk's closed loop does not).

A window runs ``vegeta attack -output FILE`` with the target on stdin, then two reports of
the same results file: ``report -type=json`` (counts, rate, mean and percentiles, all in
nanoseconds) and ``report -type=hdrplot`` (the latency distribution at a fine percentile
grid, for merging several clients' distributions), read by
:mod:`sizing.load.vegeta_report` (shared with the replay generator, which runs vegeta too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sizing.errors import UsageError
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall, window_timeout
from sizing.load.latency import LatencyReport
from sizing.load.result import LoadResult
from sizing.load.vegeta_report import BUILT, VERSION, VegetaParseError, parse, parse_hdrplot
from sizing.loadproto import Command, CommandOutput
from sizing.topology import cpulist

__all__ = [
    "MAX_RATE_LAG",
    "VEGETA",
    "PLANNING_RATE_PER_CORE",
    "BUILT",
    "VERSION",
    "VegetaParseError",
    "VegetaSpec",
    "VegetaTool",
    "attack_argv",
    "parse",
    "parse_hdrplot",
    "report_argvs",
    "targets",
]

MAX_RATE_LAG = 0.02  # sent rate more than 2% below the offered rate: the client fell behind
# The planning figure for sizing clients (requests/s one client core offers on schedule):
# from benchmarks/generators on the 2-core development machine (7,500 sustained, collapsing
# by 8,300), rounded down.
PLANNING_RATE_PER_CORE = 7_000


@dataclass(frozen=True)
class VegetaSpec:
    """One constant-rate attack. ``cpus`` pins the client; empty means no pinning."""

    url: str
    rate: int  # requests per second, offered on schedule
    duration_s: float
    results_file: str  # where the attack writes its results on the client
    timeout_s: float = 10.0
    headers: tuple[str, ...] = ()
    keepalive: bool = True
    insecure: bool = True  # sizing's own self-signed certificates
    cpus: tuple[int, ...] = ()


def _check(spec: VegetaSpec) -> None:
    if spec.rate < 1:
        raise UsageError(f"vegeta needs a rate of at least 1 request/s, not {spec.rate}")
    for name, v in (("duration", spec.duration_s), ("timeout", spec.timeout_s)):
        if not math.isfinite(v) or v <= 0:
            raise UsageError(f"vegeta {name} must be a positive number of seconds, not {v}")
    if not spec.url.startswith(("http://", "https://")):
        raise UsageError(f"vegeta URL must start with http:// or https://, not {spec.url!r}")
    for header in spec.headers:
        if "\r" in header or "\n" in header or ":" not in header:
            raise UsageError(f"not a single HTTP header line 'Name: value': {header!r}")


def _go_duration(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def targets(spec: VegetaSpec) -> str:
    """The attack's target in vegeta's http format (given on stdin): method, URL, headers."""
    _check(spec)
    return "\n".join([f"GET {spec.url}", *spec.headers]) + "\n"


def _pin(spec: VegetaSpec) -> list[str]:
    return ["taskset", "-c", cpulist(spec.cpus)] if spec.cpus else []


def attack_argv(spec: VegetaSpec, *, vegeta: str = "vegeta") -> list[str]:
    """``[taskset -c CPUS] vegeta attack -rate N/1s -duration Dms ... -output FILE``.

    Workers and connections are left unbounded (open loop, see the module docstring);
    HTTP/2 is off (the article measures HTTP/1.1); keepalive as the spec says.
    """
    _check(spec)
    argv = [
        *_pin(spec),
        vegeta,
        "attack",
        f"-rate={spec.rate}/1s",
        f"-duration={_go_duration(spec.duration_s)}",
        f"-timeout={_go_duration(spec.timeout_s)}",
        "-http2=false",
        f"-keepalive={'true' if spec.keepalive else 'false'}",
        "-redirects=-1",
        f"-output={spec.results_file}",
    ]
    if spec.insecure and spec.url.startswith("https://"):
        argv.insert(argv.index("-http2=false"), "-insecure")
    return argv


def report_argvs(spec: VegetaSpec, *, vegeta: str = "vegeta") -> list[list[str]]:
    """The two reports of the results file, run after the attack: json, then hdrplot."""
    return [
        [vegeta, "report", "-type=json", spec.results_file],
        [vegeta, "report", "-type=hdrplot", spec.results_file],
    ]


@dataclass(frozen=True)
class VegetaTool:
    """vegeta as a :class:`~sizing.load.base.LoadTool`: open loop, HTTP/1.1 and TLS; built
    and copied by sizing (``scripts/install-vegeta``), pinned."""

    name: str = "vegeta"
    capabilities: Capabilities = Capabilities(
        open_loop=True,
        full_handshakes=True,
        lag_means_client_behind=True,
    )
    install: ToolInstall | None = None  # built and copied by sizing: its ``built``
    built: ToolBuild | None = BUILT
    ships: tuple[str, ...] = ()
    version: str | None = VERSION
    build: str | None = None
    planning_rate_per_core: int = PLANNING_RATE_PER_CORE
    max_rate_lag: float = MAX_RATE_LAG

    def spec(self, req: LoadRequest) -> VegetaSpec:
        spec = VegetaSpec(
            url=req.url,
            rate=req.rate,
            duration_s=req.duration_s,
            results_file=f"{req.tool_dir}/vegeta-results.bin",
            headers=req.headers,
            cpus=req.cpus,
        )
        if not req.window:
            return spec
        return replace(spec, timeout_s=window_timeout(req.duration_s), keepalive=req.keepalive)

    def summary(self, req: LoadRequest) -> list[str]:
        return self.command(req).argv

    def command(self, req: LoadRequest) -> Command:
        spec = self.spec(req)
        binary = f"{req.tool_dir}/vegeta"
        return Command(
            attack_argv(spec, vegeta=binary),
            stdin=targets(spec),
            then=report_argvs(spec, vegeta=binary),
        )

    def parse(self, out: CommandOutput) -> LoadResult:
        then = out.then or []
        if len(then) < 2:
            raise VegetaParseError("vegeta's reports did not run")
        return parse(then[0].stdout, then[1].stdout)

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        return self.parse(out).latency_report()

    def read_version(self, out: CommandOutput) -> str | None:
        return self.version


VEGETA = VegetaTool()
