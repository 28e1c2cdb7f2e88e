"""The wrk driver: an argv builder and a pure parser of wrk's report.

Written against wrk 4.1.0 (Debian) and checked with wrk's own ``src/wrk.c`` and
``src/units.c``. What the parser relies on:

* Times are printed by ``format_time_us``: ``us`` or ``ms`` below one second, otherwise
  ``s`` or ``m`` (``h`` is defined but never reached). Units scale at 85 % of the next
  unit, so 880 us prints as ``0.88ms``.
* Sizes are printed by ``format_binary`` with 1024-based prefixes (``K M G T``) and a
  ``B`` appended, with two decimals: byte counts parsed from it are approximate.
* ``Non-2xx or 3xx responses`` counts responses with status > 399 (3xx are not counted).
* ``timeout`` in ``Socket errors`` counts responses that arrived later than ``--timeout``
  (they are also counted in the requests and left out of the latency statistics); a
  request never answered within the test is not counted anywhere.
* When no latency was recorded, the ``+/- Stdev`` column reads ``-nan%``.
* ``-d`` and ``--timeout`` take whole seconds only (``scan_time`` reads an integer).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sizing.errors import ToolError, UsageError
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall, first_version
from sizing.load.latency import LatencyReport
from sizing.load.result import LoadResult
from sizing.loadproto import Command, CommandOutput
from sizing.topology import cpulist

__all__ = [
    "WRK",
    "LatencyReport",
    "WrkTool",
    "WrkParseError",
    "WrkSpec",
    "build_argv",
    "parse",
    "parse_report",
]


class WrkParseError(ToolError):
    """wrk's output lacks a figure the run needs (wrk failed, or the text is truncated)."""


@dataclass(frozen=True)
class WrkSpec:
    """One wrk invocation. ``cpus`` pins the client; empty means no pinning."""

    url: str
    threads: int
    connections: int
    duration_s: float
    timeout_s: float = 5.0
    headers: tuple[str, ...] = ()
    latency: bool = True
    cpus: tuple[int, ...] = ()
    script: str | None = None  # a Lua script on the client (playbooks/files/wrk_report.lua)


def _whole_seconds(name: str, value: float) -> int:
    if not math.isfinite(value) or value < 1 or value != int(value):
        raise UsageError(f"wrk {name} must be a whole number of seconds >= 1, not {value}")
    return int(value)


def build_argv(spec: WrkSpec, *, wrk: str = "wrk", pin_with: str = "taskset") -> list[str]:
    """The argv that runs ``spec``, optionally pinned with ``taskset`` or ``numactl``.

    ``["taskset", "-c", "1", "wrk", "-t1", "-c50", "-d10s", "--timeout", "5s",
    "--latency", "-H", "Connection: close", url]``. An argv list only, never a shell
    string. Raises :class:`~sizing.errors.UsageError` on a spec wrk would refuse or
    misread.
    """
    if spec.threads < 1:
        raise UsageError(f"wrk needs at least 1 thread, not {spec.threads}")
    if spec.connections < spec.threads:
        raise UsageError(
            f"wrk needs at least as many connections as threads "
            f"({spec.connections} connections < {spec.threads} threads)"
        )
    duration = _whole_seconds("duration", spec.duration_s)
    timeout = _whole_seconds("timeout", spec.timeout_s)
    if not spec.url.startswith(("http://", "https://")):
        raise UsageError(f"wrk URL must start with http:// or https://, not {spec.url!r}")
    for header in spec.headers:
        if "\r" in header or "\n" in header or ":" not in header:
            raise UsageError(f"not a single HTTP header line 'Name: value': {header!r}")

    argv: list[str] = []
    if spec.cpus:
        cpus = cpulist(spec.cpus)
        if pin_with == "taskset":
            argv += ["taskset", "-c", cpus]
        elif pin_with == "numactl":
            argv += ["numactl", f"--physcpubind={cpus}", "--"]
        else:
            raise UsageError(f"unknown CPU pinning tool {pin_with!r}: use taskset or numactl")
    argv += [
        wrk,
        f"-t{spec.threads}",
        f"-c{spec.connections}",
        f"-d{duration}s",
        "--timeout",
        f"{timeout}s",
    ]
    if spec.latency:
        argv.append("--latency")
    for header in spec.headers:
        argv += ["-H", header]
    if spec.script:
        argv += ["-s", spec.script]
    argv.append(spec.url)
    return argv


_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
_BINARY = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}

_NUM = r"(\d+(?:\.\d+)?)"
_TIME = _NUM + r"(us|ms|s|m|h)"
_SIZE = _NUM + r"([KMGTP]?)B"

_RE_THREADS = re.compile(r"^\s*(\d+) threads and (\d+) connections\s*$", re.M)
_RE_LATENCY = re.compile(rf"^\s*Latency\s+{_TIME}\s+{_TIME}\s+{_TIME}\s+\S+%\s*$", re.M)
_RE_PCT = re.compile(rf"^\s*{_NUM}%\s+{_TIME}\s*$")
_RE_REQUESTS = re.compile(rf"^\s*(\d+) requests in {_TIME}, {_SIZE} read\s*$", re.M)
_RE_SOCKET = re.compile(
    r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)\s*$", re.M
)
_RE_NON2XX = re.compile(r"^\s*Non-2xx or 3xx responses: (\d+)\s*$", re.M)
_RE_RPS = re.compile(rf"^Requests/sec:\s+{_NUM}\s*$", re.M)
_RE_TRANSFER = re.compile(rf"^Transfer/sec:\s+{_SIZE}\s*$", re.M)
_RE_WRK_ERROR = re.compile(
    r"^(unable to .*|invalid URL: .*|number of connections must be >= threads)$", re.M
)


def _ms(value: str, unit: str) -> float:
    return float(value) * _TIME_MS[unit]


def _bytes(value: str, prefix: str) -> float:
    return float(value) * _BINARY[prefix]


def _percentiles(lines: Sequence[str]) -> dict[float, float]:
    """The ``Latency Distribution`` block: the percentile lines right after its title."""
    result: dict[float, float] = {}
    for line in lines:
        m = _RE_PCT.match(line)
        if m is None:
            break
        result[float(m.group(1))] = _ms(m.group(2), m.group(3))
    return result


def parse(text: str) -> LoadResult:
    """Parse wrk's report (its stdout; stderr mixed in is tolerated) as a :class:`LoadResult`.

    Raises :class:`WrkParseError` naming what is missing when the threads line, the
    Latency line, the requests line, ``Requests/sec`` or ``Transfer/sec`` is absent, or
    when a ``Latency Distribution`` block is cut short; wrk's own error message (``unable
    to connect to ...``) is quoted when the text carries one.
    """
    threads_m = _RE_THREADS.search(text)
    latency_m = _RE_LATENCY.search(text)
    requests_m = _RE_REQUESTS.search(text)
    rps_m = _RE_RPS.search(text)
    transfer_m = _RE_TRANSFER.search(text)
    found = {
        "the 'N threads and M connections' line": threads_m,
        "the Latency line of the thread stats": latency_m,
        "the 'N requests in T, S read' line": requests_m,
        "Requests/sec": rps_m,
        "Transfer/sec": transfer_m,
    }
    missing = [name for name, m in found.items() if m is None]
    if missing or not (threads_m and latency_m and requests_m and rps_m and transfer_m):
        message = "wrk output lacks " + ", ".join(missing)
        wrk_error = _RE_WRK_ERROR.search(text)
        if wrk_error is not None:
            message += f"; wrk said: {wrk_error.group(1).strip()}"
        elif not text.strip():
            message += " (the output is empty)"
        raise WrkParseError(message)

    percentiles: dict[float, float] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Latency Distribution":
            percentiles = _percentiles(lines[i + 1 :])
            if set(percentiles) != {50.0, 75.0, 90.0, 99.0}:
                raise WrkParseError(
                    "wrk output has a Latency Distribution block without its 50, 75, 90 "
                    f"and 99 % lines (found {sorted(percentiles)})"
                )
            break

    socket_m = _RE_SOCKET.search(text)
    connect, read, write, timeout = (
        (int(socket_m[1]), int(socket_m[2]), int(socket_m[3]), int(socket_m[4]))
        if socket_m
        else (0, 0, 0, 0)
    )
    non2xx_m = _RE_NON2XX.search(text)
    requests = int(requests_m.group(1))
    duration_s = _ms(requests_m.group(2), requests_m.group(3)) / 1000.0
    non_2xx_3xx = int(non2xx_m.group(1)) if non2xx_m else 0
    # answered in time and not > 399: a late answer is counted in requests and as a timeout
    succeeded = max(0, requests - non_2xx_3xx - timeout)

    return LoadResult(
        requests=requests,
        duration_s=duration_s,
        bytes_read=round(_bytes(requests_m.group(4), requests_m.group(5))),
        rate=float(rps_m.group(1)),
        throughput=succeeded / duration_s if duration_s > 0 else 0.0,
        transfer_bps=_bytes(transfer_m.group(1), transfer_m.group(2)),
        latency_mean_ms=_ms(latency_m.group(1), latency_m.group(2)),
        latency_stdev_ms=_ms(latency_m.group(3), latency_m.group(4)),
        latency_max_ms=_ms(latency_m.group(5), latency_m.group(6)),
        latency_percentiles_ms=percentiles,
        errors={"connect": connect, "read": read, "write": write, "timeout": timeout},
        non_2xx_3xx=non_2xx_3xx,
        threads=int(threads_m.group(1)),
        connections=int(threads_m.group(2)),
    )


def parse_report(text: str) -> LatencyReport:
    """Parse the JSON line of ``wrk_report.lua`` out of wrk's stdout (µs become ms).

    Raises :class:`WrkParseError` when the line is missing or malformed.
    """
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith('{"sizing_wrk_report"'):
            continue
        try:
            doc = json.loads(line)
            lat = doc["latency_us"]
            cdf = tuple(sorted((float(p), float(v) / 1000.0) for p, v in lat["cdf"]))
            errors = sum(int(v) for v in doc.get("errors", {}).values())
            return LatencyReport(
                count=int(lat["count"]),
                min_ms=float(lat["min"]) / 1000.0,
                max_ms=float(lat["max"]) / 1000.0,
                mean_ms=float(lat["mean"]) / 1000.0,
                cdf=cdf,
                requests=int(doc["requests"]),
                errors=errors,
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise WrkParseError(f"wrk report line is malformed: {exc}") from exc
    raise WrkParseError("wrk output lacks the sizing report line (wrk_report.lua did not run)")


@dataclass(frozen=True)
class WrkTool:
    """wrk as a :class:`~sizing.load.base.LoadTool`: closed loop, HTTP/1.1 and TLS, its
    latency distribution from ``wrk_report.lua``; Debian's package, its version read from
    the client's binary (``wrk -v``, after each window)."""

    name: str = "wrk"
    capabilities: Capabilities = Capabilities(
        open_loop=False,
        full_handshakes=True,
    )
    install: ToolInstall | None = ToolInstall("wrk", ("wrk",))
    built: ToolBuild | None = None
    ships: tuple[str, ...] = ("wrk_report.lua",)  # clients.yml: its latency distribution
    version: str | None = None  # the client's packaged wrk, read from it
    build: str | None = None
    planning_rate_per_core: int = 0  # closed loop: it offers what the server answers
    max_rate_lag: float = 0.0

    def spec(self, req: LoadRequest) -> WrkSpec:
        """wrk's spec: one thread per CPU it may use, never more than its connections."""
        close = () if req.keepalive else ("Connection: close",)
        return WrkSpec(
            url=req.url,
            threads=req.threads,
            connections=req.connections,
            duration_s=float(req.duration_s),
            headers=close + req.headers,
            cpus=req.cpus,
            script=f"{req.tool_dir}/wrk_report.lua",
        )

    def summary(self, req: LoadRequest) -> list[str]:
        return build_argv(self.spec(req))

    def command(self, req: LoadRequest) -> Command:
        then = [["wrk", "-v"]] if req.window else []
        return Command(self.summary(req), then=then)

    def parse(self, out: CommandOutput) -> LoadResult:
        return parse(out.stdout)

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        return parse_report(out.stdout)

    def read_version(self, out: CommandOutput) -> str | None:
        return first_version(out.then, r"\bwrk (\S+)") or self.version


WRK = WrkTool()
