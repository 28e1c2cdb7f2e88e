"""A customer's workload turned into what the lab serves and what the generator sends
(pure): the content files of the size classes, and the weighted targets of
:mod:`sizing.load.replay` (sizes, closes, schemes, resumption, redirects).

What is reproduced, and how (``docs/workload.md``):

* a size class is served as one file whose response lands in the middle of the class (its
  geometric middle; an open last class at twice its lower edge, capped at 1 MiB). When the
  customer counted whole responses (``$bytes_sent``) the file is smaller by the response
  headers nginx adds (:data:`HEADER_BYTES`); a class narrower than the headers cannot be
  reproduced, and the comparison says so;
* requests per connection: the mean, as a close share ``1 / mean`` (a geometric shape);
* TLS share of connections, and the resumed share of TLS connections: two TLS listeners,
  the server's ``https_port`` (session reuse off) and ``resume_port`` (tickets and cache);
* status: 3xx as a redirect the generator does not follow. 4xx and 5xx are not replayed
  (the error guards would refuse the point): a customer's share of them shows in the
  status row of the comparison.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sizing.errors import InputError, UsageError
from sizing.load.replay import REPLAY, ReplayTarget, target_list
from sizing.plan.points import PlannedPoint
from sizing.plan.workload_spec import (
    MAX_DEMAND_BYTES,
    PROFILE_ROLE,
    REPLAY_CONNECTIONS,
    load_workload,
    profile_mix,
)
from sizing.profiles import Profile
from sizing.workload import ROLE_WORDS, Role, WorkloadMix
from sizing.yamlfile import read_yaml

__all__ = [
    "HEADER_BYTES",
    "MAX_FILE_BYTES",
    "REDIRECT_PATH",
    "ReplayPlan",
    "ReplayPorts",
    "body_size",
    "lab_ports",
    "point_plan",
    "point_targets",
    "replay_plan",
    "workload_profile",
]

# The headers of nginx's 200 response for a static file (server_tokens off): status line,
# Server, Date, Content-Type, Content-Length, Last-Modified, Connection, ETag, Accept-Ranges.
# Measured from the lab log by benchmarks/replay ($bytes_sent - $body_bytes_sent: 237 to
# 249, by the length of the size, of Connection's value and of the ETag); the middle.
HEADER_BYTES = 243
MAX_FILE_BYTES = 1024 * 1024  # an open last class is served at most this large
REDIRECT_PATH = "/mix-redirect"  # templates/nginx.conf.j2: return 301
# Where each role's requests go (the template's locations): the file, proxied or not.
ROLE_PREFIX = {
    Role.STATIC: "",
    Role.LOAD_BALANCE: "/lb",
    Role.PROXY: "/proxy",
    Role.API_JWT: "/api",
}


@dataclass(frozen=True)
class ReplayPorts:
    """Where the lab nginx listens: plain, TLS without resumption, TLS with resumption."""

    address: str
    http: int
    https: int
    resume: int

    def base(self, channel: str) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        if channel == "full" and _ipv4(self.address):
            # The same server by a second name: Go's client session cache is keyed by the
            # host name, and a full handshake under the resuming listener's name clears the
            # session it keeps (resumption fell from 40% to 13%, tests/integration).
            host = f"[::ffff:{self.address}]"
        scheme, port = {
            "plain": ("http", self.http),
            "full": ("https", self.https),
            "resumed": ("https", self.resume),
        }[channel]
        return f"{scheme}://{host}:{port}"


def _ipv4(address: str) -> bool:
    parts = address.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)


@dataclass(frozen=True)
class ReplayPlan:
    """The files the lab serves (name -> bytes) and the generator's weighted targets."""

    files: dict[str, int]
    targets: tuple[ReplayTarget, ...]
    close_share: float
    tls_share: float
    resumption_share: float

    def target_list(self) -> str:
        """The generator's list (:func:`sizing.load.replay.target_list`)."""
        return target_list(self.targets, close_share=self.close_share)


def body_size(low: int, high: int | None, size_field: str) -> int:
    """The body of the file that stands for the size class ``low..high`` (see the module)."""
    # a bounded class at its geometric middle (1 to 4 MiB: 2 MiB, not its lower edge); the
    # open last class up to MAX_FILE_BYTES, or just above its lower edge when that is more
    # (the readers bound every class at MAX_CLASS_BYTES: nothing absurd reaches the lab)
    top = high if high is not None else min(2 * max(low, 1), max(low, MAX_FILE_BYTES))
    middle = round(math.sqrt(max(low, 1) * max(top, 1)))
    middle = min(max(middle, low), top)
    if size_field != "body_bytes_sent":
        middle -= HEADER_BYTES
    return max(0, middle)


def _mean(mix: WorkloadMix) -> float:
    mean = mix.figure("requests_per_connection")
    if mean is None and mix.per_connection:
        # the mean of the classes at their lower edges: a floor, used when none was given
        mean = sum(lo * s for lo, _, s in mix.per_connection) / sum(
            s for _, _, s in mix.per_connection
        )
    if mean is None or not math.isfinite(mean) or mean < 1:
        raise UsageError(
            "the workload gives no requests per connection: state it "
            "(sizing demand --assume requests-per-connection=N --assume-source ...)"
        )
    return mean


def replay_plan(
    mix: WorkloadMix,
    ports: ReplayPorts,
    *,
    headers: tuple[str, ...] = (),
    close_share: float | None = None,
) -> ReplayPlan:
    """The files and targets that replay ``mix`` on ``ports``; ``close_share`` overrides
    the mix's (a deliberately wrong replay, for the tests of the comparison)."""
    if not mix.sizes:
        raise UsageError("the workload has no response sizes to replay")
    role = mix.role or Role.STATIC
    p = 1.0 / _mean(mix) if close_share is None else close_share
    tls = mix.figure("tls_share")
    if tls is None:  # never replayed as 0: plain HTTP would under-size a TLS workload
        raise UsageError(
            "the workload gives no TLS share of connections: state it "
            "(sizing demand --assume tls-share=S --assume-source ...)"
        )
    resumed = mix.figure("resumption_share")
    if resumed is None and tls > 0:
        raise UsageError(
            "the workload gives no resumption share of its TLS connections: state it "
            "(sizing demand --assume resumption-share=S --assume-source ...)"
        )
    resumed = resumed or 0.0
    redirect = dict(mix.status).get("3xx", 0.0)
    files: dict[str, int] = {}
    kinds: list[tuple[str, float]] = []
    served = sum(s for _, _, s in mix.sizes)
    for low, high, share in mix.sizes:
        size = body_size(low, high, mix.size_field)
        name = f"mix-{size}b"
        files[name] = size
        kinds.append((f"{ROLE_PREFIX[role]}/{name}", share / served * (1 - redirect)))
    if redirect > 0:
        kinds.append((REDIRECT_PATH, redirect))
    channels = (("plain", 1 - tls), ("full", tls * (1 - resumed)), ("resumed", tls * resumed))
    targets = [
        ReplayTarget(ports.base(channel) + path, kind_share * channel_share, headers)
        for path, kind_share in kinds
        for channel, channel_share in channels
        if kind_share * channel_share > 0
    ]
    return ReplayPlan(files, tuple(targets), p, tls, resumed)


def lab_ports(point: PlannedPoint, address: str) -> ReplayPorts:
    """Where ``point``'s server listens for a replay: its HTTP and HTTPS ports, and the
    resuming TLS listener on the port after its HTTPS port."""
    sz = point.server.sizing
    return ReplayPorts(address, sz.http_port, sz.https_port, sz.https_port + 1)


def point_plan(point: PlannedPoint, address: str, headers: tuple[str, ...] = ()) -> ReplayPlan:
    """The replay of ``point``'s workload on its server at ``address``."""
    return replay_plan(profile_mix(point.profile), lab_ports(point, address), headers=headers)


def point_targets(point: PlannedPoint, url: str, headers: tuple[str, ...] = ()) -> str:
    """The generator's target list for ``point`` (its server's address from ``url``)."""
    address = urlsplit(url).hostname or ""
    return point_plan(point, address, headers).target_list()


def workload_profile(path: Path) -> Profile:
    """The profile that replays the demand file's workload: named by its basis key
    (:func:`~sizing.workload.workload_key`), measured by the replay generator
    (:mod:`sizing.load.replay`), in the customer's own requests per second; the workload
    carried as canonical JSON."""
    doc = read_yaml(path, "demand", max_bytes=MAX_DEMAND_BYTES)
    mix, key = load_workload(path)
    if mix.role is None:
        raise InputError(str(path), ["workload.role: not given (sizing demand --role ROLE)"])
    try:  # what the replay cannot serve is refused here, at the edge, naming the file
        replay_plan(mix, ReplayPorts("127.0.0.1", 1, 2, 3))
    except UsageError as exc:
        raise InputError(str(path), [f"workload: {exc}"]) from None
    section = doc["workload"]
    return Profile(
        kind="workload",
        name=key,
        description=f"your workload, replayed: {ROLE_WORDS[mix.role]}, your mix of sizes,"
        " connections, TLS and resumption",
        generator=REPLAY.name,
        metric="requests_per_second",
        unit="requests/s",
        scheme="http",
        path="/",
        file_size=0,
        role=PROFILE_ROLE[mix.role],  # type: ignore[arg-type]
        # connections close after the customer's requests per connection and reopen: not
        # every connection is open at every instant, so the keepalive profiles' guard that
        # the server held them all does not apply (the replay generator still reuses a
        # connection until its close: sizing.load.replay)
        keepalive=False,
        connections=REPLAY_CONNECTIONS,
        workload=json.dumps(section, sort_keys=True, separators=(",", ":"), default=str),
    )
