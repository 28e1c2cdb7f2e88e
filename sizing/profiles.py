"""Workload profiles: YAML files in ``profiles/`` with ``kind: workload``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationError,
)

from sizing import paths
from sizing.errors import InputError, SizingError, UsageError
from sizing.filemodel import FileModel
from sizing.load import DEFAULT_GENERATOR
from sizing.model import SIZING_METRICS, SizingMetric
from sizing.yamlfile import read_yaml

FILE_SIZES = {128: "/128b", 1024: "/1k", 10240: "/10k", 102400: "/100k"}

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_URL_PATH = re.compile(r"/[A-Za-z0-9._~/%-]*\Z")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def _text(value: str) -> str:
    m = _CONTROL.search(value.replace("\n", ""))  # descriptions may span lines
    if m:
        raise ValueError(f"control character {m.group()!r} not allowed")
    return value


def _url_path(value: str) -> str:
    if not _URL_PATH.match(value):
        raise ValueError(f"{value!r} is not a URL path (/ then letters, digits, . _ ~ % - /)")
    return value


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"{value!r} is not a profile name (letters, digits, . _ -)")
    return value


Text = Annotated[str, AfterValidator(_text)]


class Profile(FileModel):
    """One workload: what the load generator sends and which figure it yields."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    kind: Literal["workload"]
    name: Annotated[str, AfterValidator(_name)]
    description: Text
    # a registered load generator (sizing.load.tools.TOOLS; checked when a run plans it)
    generator: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")] = DEFAULT_GENERATOR
    metric: Text
    unit: Text
    scheme: Literal["http", "https"]
    path: Annotated[str, AfterValidator(_url_path)] = "/128b"
    file_size: int = Field(default=128, ge=0, le=1 << 40)
    keepalive: bool = True
    tls_key: Literal["rsa2048", "ecdsa-p256"] | None = None
    tls_session_reuse: bool = False
    connections: int = Field(default=50, ge=1, le=100000)
    duration_s: float = Field(default=10, ge=1, le=3600)
    warmup_s: float = Field(default=3, ge=0, le=600)
    repetitions: int = Field(default=3, ge=1, le=100)
    # -- latency, proxy and API-gateway profiles (sizing.measure: fixedrate, gateway) --
    # max-rate: closed loop as fast as the server answers; fixed-rate: constant offered
    # rates, open loop (sizing.load.tools.open_loop_tool), latency per rate, knee and SLO
    # capacity.
    mode: Literal["max-rate", "fixed-rate"] = "max-rate"
    rates: Text | None = None  # fixed-rate: "1000:10000:1000" or "500,1000"; --rates wins
    slo: Text | None = None  # fixed-rate: "p95=10ms"; --slo wins
    # web: nginx serves the files; load-balance: nginx balances (round robin) over the
    # upstream pool (the sizing article's rps/tps); proxy: nginx proxies to an upstream
    # nginx (keepalive); api-jwt: as proxy, after validating an HS256 JWT (njs) per request.
    role: Literal["web", "load-balance", "proxy", "api-jwt"] = "web"
    # Idle keepalive connections each nginx worker caches to the upstreams (the latency
    # article: 100); unset: 64.
    upstream_keepalive: int | None = Field(default=None, ge=1, le=100000)
    # e.g. "TLSv1.2" to get the article's ECDHE-ECDSA suite; goes into nginx.conf
    tls_protocols: Annotated[str, Field(pattern=r"^TLSv1(\.[0-3])?( TLSv1(\.[0-3])?)*$")] | None = (
        None
    )
    # A replayed customer workload (``sizing run --workload DEMAND.yml``, issue 57): the
    # demand file's workload section as canonical JSON; the profile's name is its basis key.
    workload: str | None = Field(default=None, max_length=1 << 20)

    @property
    def is_gateway(self) -> bool:
        """A proxy or API-gateway profile: nginx in front of an upstream nginx."""
        return self.role in ("proxy", "api-jwt")

    @property
    def needs_upstream(self) -> bool:
        """NGINX forwards every request to the upstream pool (load-balance, proxy, api-jwt)."""
        return self.role != "web"

    @property
    def sizing_metric(self) -> SizingMetric | None:
        """How this profile's figures size, from its ``metric:`` (:data:`SIZING_METRICS`);
        None for a profile that sizes nothing. A gateway's (proxy, api-jwt) requests or
        calls per second size a demand of its own role only: its bases carry the role,
        and the choice never sizes one role on another's figures unasked
        (:mod:`sizing.engine.roles`)."""
        return SIZING_METRICS.get(self.metric)

    @property
    def is_cpu_curve(self) -> bool:
        """A gateway's CPU curve (``metric: gateway_cpu_curve``): server CPU against calls
        per second at fixed rates. The latency profiles also proxy at fixed rates, but their
        figure is latency: they are not CPU curves."""
        return self.metric == "gateway_cpu_curve"


def available() -> list[str]:
    """Names of the bundled workload profiles (files that cannot be read are left out)."""
    names = []
    for f in sorted(paths.PROFILES.glob("*.yml")):
        try:
            data = read_yaml(f, "profile")
        except SizingError:
            continue
        if isinstance(data, dict) and data.get("kind") == "workload":
            names.append(str(data.get("name", f.stem)))
    return names


def load_file(path: Path) -> Profile:
    """Load and validate one profile file, or raise :class:`InputError` naming the file
    and the field."""
    data = read_yaml(path, "profile")
    if not isinstance(data, dict):
        raise InputError(str(path), ["expected a mapping of profile fields (kind: workload, ...)"])
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            str(path),
            [
                f"{'.'.join(str(p) for p in e['loc']) or 'profile'}: "
                + str(e["msg"]).removeprefix("Value error, ")
                for e in exc.errors()
            ],
        ) from exc


def load(name: str) -> Profile:
    """Load a bundled profile by name, or a profile file by path."""
    found, named = paths.profile_file(name)
    if found is not None:
        prof = load_file(found)
        if named is not None and prof.name != named:
            raise InputError(str(found), [f"name: {prof.name!r} does not match the file name"])
        return prof
    known = ", ".join(available()) or "none"
    raise UsageError(f"unknown profile {name!r} (available: {known})")


def parse_list(text: str) -> list[Profile]:
    """Parse ``--profile rps,tps``."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--profile: give at least one profile name")
    seen: list[Profile] = []
    for n in names:
        p = load(n)
        if any(s.name == p.name for s in seen):
            raise UsageError(f"--profile: {n!r} given twice")
        seen.append(p)
    return seen
