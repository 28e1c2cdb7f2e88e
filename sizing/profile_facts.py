"""What sizing reads of a workload profile to size on it (its metric, role, file size,
keepalive and TLS key), without pydantic.

``recommend`` and ``table`` read, for each stored point, the profile its run stored
(``profile_defs``) or the bundled one of its name; validating each with the pydantic model
(:class:`sizing.profiles.Profile`) made defining that model a fifth of ``recommend``'s
start (issue 60). A document is read here when it is certainly valid: every field the
model declares, of exactly the type the model keeps, within its bounds and patterns, and
nothing else (:func:`fast_facts`); any other document is validated by the model itself
(:func:`facts_of`), which decides. ``tests/unit/test_profile_facts.py`` checks, over
generated documents and every bundled profile, that a document read here is one the model
accepts, with the same values.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.errors import SizingError
from sizing.model import SIZING_METRICS, SizingMetric
from sizing.yamlfile import read_yaml

__all__ = ["ProfileFacts", "bundled_facts", "facts_of", "fast_facts"]

# the model's own rules (sizing.profiles), as plain checks; \Z where it says $ (pydantic's
# patterns take no newline before the end)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_URL_PATH = re.compile(r"/[A-Za-z0-9._~/%-]*\Z")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_GENERATOR = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}\Z")
_TLS_PROTOCOLS = re.compile(r"TLSv1(\.[0-3])?( TLSv1(\.[0-3])?)*\Z")


def _text(v: Any) -> bool:
    return type(v) is str and not _CONTROL.search(v.replace("\n", ""))


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _int(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: type(v) is int and low <= v <= high


def _float(low: float, high: float) -> Callable[[Any], bool]:
    return lambda v: type(v) in (int, float) and math.isfinite(v) and low <= v <= high


def _one_of(*values: str) -> Callable[[Any], bool]:
    return lambda v: type(v) is str and v in values


def _matches(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda v: type(v) is str and pattern.match(v) is not None


def _bool(v: Any) -> bool:
    return type(v) is bool


# every field of the model: (required, the check of a value it certainly accepts as is)
FIELDS: dict[str, tuple[bool, Callable[[Any], bool]]] = {
    "kind": (True, _one_of("workload")),
    "name": (True, _matches(_NAME)),
    "description": (True, _text),
    "generator": (False, _matches(_GENERATOR)),
    "metric": (True, _text),
    "unit": (True, _text),
    "scheme": (True, _one_of("http", "https")),
    "path": (False, _matches(_URL_PATH)),
    "file_size": (False, _int(0, 1 << 40)),
    "keepalive": (False, _bool),
    "tls_key": (False, _optional(_one_of("rsa2048", "ecdsa-p256"))),
    "tls_session_reuse": (False, _bool),
    "connections": (False, _int(1, 100000)),
    "duration_s": (False, _float(1, 3600)),
    "warmup_s": (False, _float(0, 600)),
    "repetitions": (False, _int(1, 100)),
    "mode": (False, _one_of("max-rate", "fixed-rate")),
    "rates": (False, _optional(_text)),
    "slo": (False, _optional(_text)),
    "role": (False, _one_of("web", "load-balance", "proxy", "api-jwt")),
    "upstream_keepalive": (False, _optional(_int(1, 100000))),
    "tls_protocols": (False, _optional(_matches(_TLS_PROTOCOLS))),
    "workload": (False, _optional(lambda v: type(v) is str and len(v) <= 1 << 20)),
}


@dataclass(frozen=True)
class ProfileFacts:
    """The fields of a valid profile that size its figures (the model's defaults where the
    document leaves one out)."""

    name: str
    metric: str
    role: str = "web"
    file_size: int = 128
    keepalive: bool = True
    tls_key: str | None = None

    @property
    def sizing_metric(self) -> SizingMetric | None:
        """How the profile's figures size (:attr:`sizing.profiles.Profile.sizing_metric`)."""
        return SIZING_METRICS.get(self.metric)

    @classmethod
    def of(cls, profile: Any) -> ProfileFacts:
        """The facts of a validated :class:`sizing.profiles.Profile`."""
        return cls(
            profile.name,
            profile.metric,
            profile.role,
            profile.file_size,
            profile.keepalive,
            profile.tls_key,
        )


def fast_facts(doc: Any) -> ProfileFacts | None:
    """The facts of a document the model certainly accepts as it is; None for any other
    (one the model may still accept after converting a value, or refuse)."""
    if type(doc) is not dict or not all(type(k) is str and k in FIELDS for k in doc):
        return None
    for name, (required, check) in FIELDS.items():
        if name in doc:
            if not check(doc[name]):
                return None
        elif required:
            return None
    return ProfileFacts(
        name=doc["name"],
        metric=doc["metric"],
        role=doc.get("role", "web"),
        file_size=doc.get("file_size", 128),
        keepalive=doc.get("keepalive", True),
        tls_key=doc.get("tls_key"),
    )


def facts_of(doc: Any) -> ProfileFacts | None:
    """The facts of a profile document; None when the model refuses it."""
    fast = fast_facts(doc)
    if fast is not None:
        return fast
    from sizing.profiles import Profile  # deferred: pydantic, for what the checks cannot vouch

    try:
        return ProfileFacts.of(Profile.model_validate(doc))
    except ValueError:  # pydantic's ValidationError is one
        return None


def bundled_facts(name: str) -> ProfileFacts:
    """The facts of a bundled profile, or of a profile file by path (as
    :func:`sizing.profiles.load` finds it); a file that is not certainly valid, or a name
    not found, goes through :func:`sizing.profiles.load`, which raises its error."""
    return _bundled(paths.PROFILES, name)


@functools.cache
def _bundled(root: Path, name: str) -> ProfileFacts:
    # once per profiles folder and name: every stored point asks, the files do not change.
    # The file sizing.profiles.load reads (paths.profile_file, for both)
    found, named = paths.profile_file(name, root)
    if found is not None:
        try:
            fast = fast_facts(read_yaml(found, "profile"))
        except SizingError:
            fast = None
        if fast is not None and named in (None, fast.name):
            return fast
    from sizing import profiles  # deferred: pydantic, to say what is wrong with the file

    return ProfileFacts.of(profiles.load(name))
