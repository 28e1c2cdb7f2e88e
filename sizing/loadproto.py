"""The load windows' protocol: what a host's window runner is asked and what it returns.

Stdlib only. One module for both sides: sizing builds a :class:`LoadSpec` per host and
reads a :class:`RunnerOutput` back; ``playbooks/files/loadgen.py`` reads the spec and
writes the output. ``playbooks/files/loadproto.py`` is this file (a link), copied to every
host beside ``loadgen.py`` by ``playbooks/clients.yml``, where ``loadgen.py`` imports it.

The JSON shapes (``to_json``/``from_json``):

* spec: ``{"start_at", "run", "windows": [{"index", "offset", "duration", "commands"?}],
  "commands"?, "sample_cpu", "sample_net"?, "pidfile"?, "upstream_pidfile"?, "ports"?,
  "tls_log"?, "mix_log"?}``. A command is an argv list, or ``{"argv", "stdin"?,
  "then"?}``: ``stdin`` is written to it and each ``then`` argv runs after it exits.
* output: ``{"began", "windows": [{"index", "planned_start", "start", "end",
  "cpu_before"/"cpu_after" (/proc/stat per CPU), "commands": [{"argv", "rc", "stdout",
  "stderr", "then"?}], "net_before"/"net_after" (/proc/net/dev rx, tx bytes),
  "server_alive", "upstream_alive", "clk_tck", "established", "throttled",
  "nginx_cpu_s", "upstream"/"limit": {"cpu_s", "quota_cpus", "throttled"}, "net_softirqs",
  "tls": {"full", "reused", "suites"}, "mix": MixCounts}]}``.

``from_json`` is strict: a document of another shape raises :class:`ProtocolError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List  # noqa: UP035 - Python 3.8 on the hosts

__all__ = [
    "Command",
    "CommandOutput",
    "MIX_LOG_FORMAT",
    "LoadSpec",
    "MixCounts",
    "ProtocolError",
    "RunnerOutput",
    "TlsCounts",
    "UpstreamProbe",
    "WindowOutput",
    "WindowSpec",
]

# CPU (or interface) -> counters; typing's names: a host may run Python 3.8 (ansible-core's
# oldest), where this line is evaluated
Counters = Dict[str, List[int]]  # noqa: UP006


class ProtocolError(ValueError):
    """A document that is not the protocol's shape."""


def _get(doc: Any, key: str, kind: Any, default: Any = None, required: bool = False) -> Any:
    if not isinstance(doc, dict):
        raise ProtocolError(f"expected an object, got {type(doc).__name__}")
    if key not in doc or doc[key] is None:
        if required:
            raise ProtocolError(f"missing {key!r}")
        return default
    value = doc[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ProtocolError(f"{key!r}: expected {getattr(kind, '__name__', kind)}")
    return value


def _argv(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise ProtocolError("an argv must be a list of strings")
    return list(value)


@dataclass
class Command:
    """One command of a window: an argv, with what to write to it and run after it."""

    argv: list[str]
    stdin: str | None = None
    then: list[list[str]] = field(default_factory=list)

    def to_json(self) -> list[str] | dict[str, Any]:
        if self.stdin is None and not self.then:
            return list(self.argv)
        out: dict[str, Any] = {"argv": list(self.argv)}
        if self.stdin is not None:
            out["stdin"] = self.stdin
        if self.then:
            out["then"] = [list(a) for a in self.then]
        return out

    @classmethod
    def from_json(cls, doc: Any) -> Command:
        if isinstance(doc, list):
            return cls(_argv(doc))
        return cls(
            _argv(_get(doc, "argv", list, required=True)),
            _get(doc, "stdin", str),
            [_argv(a) for a in _get(doc, "then", list, [])],
        )


@dataclass
class WindowSpec:
    """One window of a host's spec: when it starts (after the common start), how long,
    and its commands. ``rate`` is the controller's own note (open loop) and is not sent."""

    index: int
    offset: float
    duration: float
    commands: list[Command] | None = None
    rate: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "offset": self.offset,
            "duration": self.duration,
        }
        if self.commands is not None:
            out["commands"] = [c.to_json() for c in self.commands]
        return out

    @classmethod
    def from_json(cls, doc: Any) -> WindowSpec:
        cmds = _get(doc, "commands", list)
        return cls(
            _get(doc, "index", int, required=True),
            _get(doc, "offset", float, required=True),
            _get(doc, "duration", float, required=True),
            None if cmds is None else [Command.from_json(c) for c in cmds],
        )


@dataclass
class LoadSpec:
    """What one host's window runner does (``sizing_specs[host]``)."""

    windows: list[WindowSpec]
    sample_cpu: bool = False
    sample_net: bool = False
    pidfile: str | None = None  # this host's nginx under test: alive, CPU, throttling
    upstream_pidfile: str | None = None  # an upstream nginx here: its CPU, cgroup limit
    ports: list[int] | None = None  # count ESTABLISHED connections mid-window
    tls_log: str | None = None  # nginx's side log of handshakes (full or resumed)
    mix_log: str | None = None  # nginx's log of a replayed mix (MIX_LOG_FORMAT)
    commands: list[Command] | None = None  # every window's, when a window has none
    start_at: float = 0.0  # the common start (epoch s), set when the batch runs
    run: str = ""  # the run's token: ``loadgen.py --stop RUN`` kills its runners

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start_at": self.start_at,
            "run": self.run,
            "windows": [w.to_json() for w in self.windows],
            "sample_cpu": self.sample_cpu,
        }
        for key in ("sample_net", "pidfile", "upstream_pidfile", "ports", "tls_log", "mix_log"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.commands is not None:
            out["commands"] = [c.to_json() for c in self.commands]
        return out

    @classmethod
    def from_json(cls, doc: Any) -> LoadSpec:
        cmds = _get(doc, "commands", list)
        return cls(
            windows=[WindowSpec.from_json(w) for w in _get(doc, "windows", list, [])],
            sample_cpu=_get(doc, "sample_cpu", bool, False),
            sample_net=_get(doc, "sample_net", bool, False),
            pidfile=_get(doc, "pidfile", str),
            upstream_pidfile=_get(doc, "upstream_pidfile", str),
            ports=_get(doc, "ports", list),
            tls_log=_get(doc, "tls_log", str),
            mix_log=_get(doc, "mix_log", str),
            commands=None if cmds is None else [Command.from_json(c) for c in cmds],
            start_at=_get(doc, "start_at", float, 0.0),
            run=_get(doc, "run", str, ""),
        )

    def window_commands(self, window: WindowSpec) -> list[Command]:
        """A window's commands: its own, else the spec's."""
        if window.commands is not None:
            return window.commands
        return self.commands or []


@dataclass
class CommandOutput:
    """What one command did: its exit status and output (stderr's last 2,000 characters)."""

    argv: list[str]
    rc: int
    stdout: str = ""
    stderr: str = ""
    then: list[CommandOutput] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "argv": self.argv,
            "rc": self.rc,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }
        if self.then is not None:
            out["then"] = [t.to_json() for t in self.then]
        return out

    @classmethod
    def from_json(cls, doc: Any) -> CommandOutput:
        then = _get(doc, "then", list)
        return cls(
            _argv(_get(doc, "argv", list, [])),
            _get(doc, "rc", int, required=True),
            _get(doc, "stdout", str, ""),
            _get(doc, "stderr", str, ""),
            None if then is None else [CommandOutput.from_json(t) for t in then],
        )


@dataclass
class TlsCounts:
    """Handshakes nginx logged over a window: full, resumed, and per protocol and cipher."""

    full: int = 0
    reused: int = 0
    suites: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"full": self.full, "reused": self.reused, "suites": dict(self.suites)}

    @classmethod
    def from_json(cls, doc: Any) -> TlsCounts:
        return cls(
            _get(doc, "full", int, 0),
            _get(doc, "reused", int, 0),
            {str(k): int(v) for k, v in _get(doc, "suites", dict, {}).items()},
        )


# The lab nginx's log of a replayed workload (templates/nginx.conf.j2 writes it; nginx
# writes "-" for an empty variable: $ssl_session_reused on a plain connection).
MIX_LOG_FORMAT = (
    "$msec $request_time $connection $connection_requests $ssl_session_reused"
    " $bytes_sent $body_bytes_sent $status"
)
MIX_MAX_KEYS = 512  # distinct sizes (or requests-per-connection counts) a window keeps


def _bump(counts: Dict[str, int], key: str, cap: int) -> bool:  # noqa: UP006
    if key in counts or len(counts) < cap:
        counts[key] = counts.get(key, 0) + 1
        return True
    return False


@dataclass
class MixCounts:
    """A window of the lab's mix log, tallied line by line in bounded memory: the histogram
    of ``$connection_requests``, how connections began (``-`` plain, ``.`` full handshake,
    ``r`` resumed), sizes, status classes; values past the cap count in ``overflow``."""

    requests: int = 0
    unparsed: int = 0
    overflow: int = 0
    per_conn: Dict[str, int] = field(default_factory=dict)  # noqa: UP006
    first: Dict[str, int] = field(default_factory=dict)  # noqa: UP006 - "-", ".", "r"
    sizes: Dict[str, int] = field(default_factory=dict)  # noqa: UP006 - $bytes_sent
    body_sizes: Dict[str, int] = field(default_factory=dict)  # noqa: UP006
    status: Dict[str, int] = field(default_factory=dict)  # noqa: UP006 - "2xx" ...

    def add_line(self, line: str) -> None:
        """Count one line of :data:`MIX_LOG_FORMAT` (a line of another shape: ``unparsed``)."""
        parts = line.split()
        digits = parts[3] + parts[5] + parts[6] + parts[7] if len(parts) == 8 else ""
        if not (digits.isascii() and digits.isdigit()):
            self.unparsed += 1
            return
        k, reused = int(parts[3]), parts[4]
        self.requests += 1
        if not _bump(self.per_conn, str(k), MIX_MAX_KEYS):
            self.overflow += 1
        if k == 1:
            key = reused if reused in (".", "r") else "-"
            self.first[key] = self.first.get(key, 0) + 1
        for counts, value in ((self.sizes, parts[5]), (self.body_sizes, parts[6])):
            if not _bump(counts, str(int(value)), MIX_MAX_KEYS):
                self.overflow += 1
        cls = parts[7][0] + "xx"
        self.status[cls] = self.status.get(cls, 0) + 1

    def merge(self, other: MixCounts) -> MixCounts:
        """Both tallies as one (several windows of a point)."""

        a, b = self.to_json(), other.to_json()
        return MixCounts.from_json(
            {n: a[n] + b[n] if n in _MIX_INTS else _added(a[n], b[n]) for n in a}
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {n: getattr(self, n) for n in _MIX_INTS}
        out.update({n: dict(getattr(self, n)) for n in _MIX_DICTS})
        return out

    @classmethod
    def from_json(cls, doc: Any) -> MixCounts:
        def counts(name: str) -> Dict[str, int]:  # noqa: UP006
            return {str(k): int(v) for k, v in _get(doc, name, dict, {}).items()}

        return cls(*(_get(doc, n, int, 0) for n in _MIX_INTS), *(counts(n) for n in _MIX_DICTS))


_MIX_INTS = ("requests", "unparsed", "overflow")
_MIX_DICTS = ("per_conn", "first", "sizes", "body_sizes", "status")


def _added(a: Dict[str, int], b: Dict[str, int]) -> Dict[str, int]:  # noqa: UP006
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


@dataclass
class UpstreamProbe:
    """An upstream nginx over a window: CPU seconds, its cgroup's CPU limit, throttling (a
    window's ``limit``: its host's processes' cgroup limits, no CPU seconds)."""

    cpu_s: float | None = None
    quota_cpus: float | None = None
    throttled: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cpu_s": self.cpu_s, "quota_cpus": self.quota_cpus, "throttled": self.throttled}

    @classmethod
    def from_json(cls, doc: Any) -> UpstreamProbe:
        return cls(
            _get(doc, "cpu_s", float), _get(doc, "quota_cpus", float), _get(doc, "throttled", int)
        )


def _counters(doc: Any, key: str) -> Counters | None:
    got = _get(doc, key, dict)
    return None if got is None else {str(k): [int(x) for x in v] for k, v in got.items()}


@dataclass
class WindowOutput:
    """One window as a host's runner reports it (see the module for the JSON)."""

    index: int
    start: float
    end: float
    planned_start: float | None = None
    commands: list[CommandOutput] = field(default_factory=list)
    cpu_before: Counters | None = None  # /proc/stat per CPU
    cpu_after: Counters | None = None
    net_before: Counters | None = None  # /proc/net/dev: interface -> [rx, tx] bytes
    net_after: Counters | None = None
    server_alive: bool | None = None  # the pidfile's nginx master lived at the end
    upstream_alive: bool | None = None
    clk_tck: int | None = None
    established: int | None = None  # connections ESTABLISHED mid-window
    throttled: int | None = None  # thermal throttling events over the window
    nginx_cpu_s: float | None = None  # the nginx master's and workers' CPU seconds
    upstream: UpstreamProbe | None = None
    limit: UpstreamProbe | None = None  # this host's cgroup CPU limits: least quota, throttling
    net_softirqs: dict[str, dict[str, int]] | None = None  # NET_RX/NET_TX -> CPU -> n
    tls: TlsCounts | None = None
    mix: MixCounts | None = None

    @property
    def span_s(self) -> float:
        return self.end - self.start

    @property
    def sampled_cpu(self) -> bool:
        return bool(self.cpu_before) and bool(self.cpu_after)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "planned_start": self.planned_start,
            "start": self.start,
            "end": self.end,
            "cpu_before": self.cpu_before,
            "cpu_after": self.cpu_after,
            "commands": [c.to_json() for c in self.commands],
            "net_before": self.net_before,
            "net_after": self.net_after,
            "server_alive": self.server_alive,
            "upstream_alive": self.upstream_alive,
            "clk_tck": self.clk_tck,
            "established": self.established,
            "throttled": self.throttled,
            "nginx_cpu_s": self.nginx_cpu_s,
            "upstream": None if self.upstream is None else self.upstream.to_json(),
            "limit": None if self.limit is None else self.limit.to_json(),
            "net_softirqs": self.net_softirqs,
            "tls": None if self.tls is None else self.tls.to_json(),
            "mix": None if self.mix is None else self.mix.to_json(),
        }

    @classmethod
    def from_json(cls, doc: Any) -> WindowOutput:
        up, tls, mix = _get(doc, "upstream", dict), _get(doc, "tls", dict), _get(doc, "mix", dict)
        lim = _get(doc, "limit", dict)
        sirq = _get(doc, "net_softirqs", dict)
        return cls(
            index=_get(doc, "index", int, required=True),
            start=_get(doc, "start", float, required=True),
            end=_get(doc, "end", float, required=True),
            planned_start=_get(doc, "planned_start", float),
            commands=[CommandOutput.from_json(c) for c in _get(doc, "commands", list, [])],
            cpu_before=_counters(doc, "cpu_before"),
            cpu_after=_counters(doc, "cpu_after"),
            net_before=_counters(doc, "net_before"),
            net_after=_counters(doc, "net_after"),
            server_alive=_get(doc, "server_alive", bool),
            upstream_alive=_get(doc, "upstream_alive", bool),
            clk_tck=_get(doc, "clk_tck", int),
            established=_get(doc, "established", int),
            throttled=_get(doc, "throttled", int),
            nginx_cpu_s=_get(doc, "nginx_cpu_s", float),
            upstream=None if up is None else UpstreamProbe.from_json(up),
            limit=None if lim is None else UpstreamProbe.from_json(lim),
            net_softirqs=None
            if sirq is None
            else {str(k): {str(c): int(n) for c, n in v.items()} for k, v in sirq.items()},
            tls=None if tls is None else TlsCounts.from_json(tls),
            mix=None if mix is None else MixCounts.from_json(mix),
        )


@dataclass
class RunnerOutput:
    """What a host's window runner prints: when it began (the start lead Ansible needed)
    and its windows (it stops after a window whose nginx died)."""

    began: float
    windows: list[WindowOutput]

    def to_json(self) -> dict[str, Any]:
        return {"began": self.began, "windows": [w.to_json() for w in self.windows]}

    @classmethod
    def from_json(cls, doc: Any) -> RunnerOutput:
        return cls(
            _get(doc, "began", float, 0.0),
            [WindowOutput.from_json(w) for w in _get(doc, "windows", list, required=True)],
        )
