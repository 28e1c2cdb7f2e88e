"""Workload profiles: YAML files in ``profiles/`` with ``kind: workload``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sizing import paths
from sizing.errors import InputError, UsageError

FILE_SIZES = {128: "/128b", 1024: "/1k", 10240: "/10k", 102400: "/100k"}


class Profile(BaseModel):
    """One workload: what the load generator sends and which figure it yields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["workload"]
    name: str
    description: str
    generator: Literal["wrk", "vegeta"] = "wrk"
    metric: str
    unit: str
    scheme: Literal["http", "https"]
    path: str = "/128b"
    file_size: int = Field(default=128)
    keepalive: bool = True
    tls_key: Literal["rsa2048", "ecdsa-p256"] | None = None
    tls_session_reuse: bool = False
    connections: int = Field(default=50, ge=1, le=100000)
    duration_s: float = Field(default=10, ge=1, le=3600)
    warmup_s: float = Field(default=3, ge=0, le=600)
    repetitions: int = Field(default=3, ge=1, le=100)
    # -- latency, proxy and API-gateway profiles (sizing.measure: fixedrate, gateway) --
    # max-rate: closed loop as fast as the server answers (wrk); fixed-rate: constant
    # offered rates, open loop (vegeta), latency per rate, knee and SLO capacity.
    mode: Literal["max-rate", "fixed-rate"] = "max-rate"
    rates: str | None = None  # fixed-rate: "1000:10000:1000" or "500,1000"; --rates wins
    slo: str | None = None  # fixed-rate: "p95=10ms"; --slo wins
    # web: nginx serves the files; proxy: nginx proxies to an upstream nginx (keepalive);
    # api-jwt: as proxy, after validating an HS256 JWT (njs) on every request.
    role: Literal["web", "proxy", "api-jwt"] = "web"
    tls_protocols: str | None = None  # e.g. "TLSv1.2" to get the article's ECDHE-ECDSA suite

    @property
    def is_gateway(self) -> bool:
        """A proxy or API-gateway profile: nginx in front of an upstream nginx."""
        return self.role in ("proxy", "api-jwt")


def available() -> list[str]:
    """Names of the bundled workload profiles."""
    names = []
    for f in sorted(paths.PROFILES.glob("*.yml")):
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data.get("kind") == "workload":
            names.append(str(data.get("name", f.stem)))
    return names


def load_file(path: Path) -> Profile:
    """Load and validate one profile file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(str(path), [f"cannot read profile: {exc}"]) from exc
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            str(path),
            [
                f"{'.'.join(str(p) for p in e['loc']) or 'profile'}: {e['msg']}"
                for e in exc.errors()
            ],
        ) from exc


def load(name: str) -> Profile:
    """Load a bundled profile by name, or a profile file by path."""
    candidate = Path(name)
    if candidate.suffix in (".yml", ".yaml") and candidate.exists():
        return load_file(candidate)
    for f in sorted(paths.PROFILES.glob("*.yml")):
        if f.stem == name:
            prof = load_file(f)
            if prof.name != name:
                raise InputError(str(f), [f"name: {prof.name!r} does not match the file name"])
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
