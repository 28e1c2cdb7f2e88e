"""The customer's workload as ``sizing run --workload DEMAND.yml`` reads it: the demand
file's ``workload:`` section (written by ``sizing demand``, issue 57) as a
:class:`~sizing.workload.WorkloadMix`, and the key of the basis its replayed points belong
to (:func:`~sizing.workload.workload_key` of that section).

The shape::

    workload:
      role: web                       # web | load-balance | proxy | api-jwt (or an alias)
      role_source: stated with --role
      size_field: bytes_sent          # or body_bytes_sent
      sizes: [{upto: 128, share: 0.5}, {upto: 4096, share: 0.3}, {upto: null, share: 0.2}]
      per_connection: [{from: 1, to: 1, share: 0.2}, {from: 2, to: null, share: 0.8}]
      requests_per_connection: 8.0
      tls_share: 0.6
      resumption_share: 0.4
      status: {2xx: 0.95, 3xx: 0.03, 4xx: 0.02}
      assumed: [{figure: tls_share, value: 0.6, source: "customer's statement"}]
      missing: []

Every problem is one :class:`~sizing.errors.InputError` line naming the file and the
field; no value of the file is echoed (a demand is the customer's).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sizing.errors import InputError, UsageError
from sizing.profiles import Profile
from sizing.workload import (
    ASSUMABLE,
    Assumed,
    Bin,
    Role,
    WorkloadMix,
    parse_role,
)
from sizing.yamlfile import read_yaml

__all__ = [
    "MAX_DEMAND_BYTES",
    "PROFILE_ROLE",
    "REPLAY_CONNECTIONS",
    "load_workload",
    "profile_mix",
    "workload_from_mapping",
]

# a demand file is small; anything larger is not one: the limit of sizing.demand.file
# (MAX_BYTES), which this layer may not import (tests/unit/test_replay_sizes.py holds them equal)
MAX_DEMAND_BYTES = 4 << 20
# the largest size class a workload may bound (sizing demand's histogram ends at 4 MiB, then
# an open class); the demand file's schema holds the same limit
MAX_CLASS_BYTES = 64 << 20
_STATUS = ("1xx", "2xx", "3xx", "4xx", "5xx")
_SIZE_FIELDS = ("bytes_sent", "body_bytes_sent")


class _Bad(ValueError):
    """One problem, with the field it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"workload.{field}: {message}")


def load_workload(path: Path) -> tuple[WorkloadMix, str]:
    """The demand file's workload and the key of its basis, or an InputError naming the
    file and the field."""
    doc = read_yaml(path, "demand", max_bytes=MAX_DEMAND_BYTES)
    if not isinstance(doc, Mapping) or doc.get("workload") is None:
        raise InputError(str(path), ["no workload: section (write it with sizing demand --role)"])
    section = doc["workload"]
    try:
        mix = workload_from_mapping(section)
    except _Bad as exc:
        raise InputError(str(path), [str(exc)]) from None
    return mix, mix.key()


# A replay's run settings: the generator's workers (closed loop), as the article profiles'
# connections; repetitions as theirs.
REPLAY_CONNECTIONS = 50
# What a replay is sized as, by role: a gateway's figures never size (Profile.sizing_metric).
PROFILE_ROLE = {
    Role.STATIC: "web",
    Role.LOAD_BALANCE: "load-balance",
    Role.PROXY: "proxy",
    Role.API_JWT: "api-jwt",
}


def profile_mix(profile: Profile) -> WorkloadMix:
    """The workload a replay profile carries (a UsageError for a profile without one)."""
    if not profile.workload:
        raise UsageError(f"profile {profile.name} replays no workload")
    try:
        return workload_from_mapping(json.loads(profile.workload))
    except (ValueError, _Bad) as exc:
        raise UsageError(f"profile {profile.name}: {exc}") from None


def _share(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(field, "expected a share between 0 and 1")
    share = float(value)
    if not math.isfinite(share) or not 0.0 <= share <= 1.0:
        raise _Bad(field, "expected a share between 0 and 1")
    return share


def _count(value: Any, field: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(field, "expected a whole number of 0 or more" + (" or null" * optional))
    return int(value)


def _items(section: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    raw = section.get(name) or []
    if not isinstance(raw, list) or not all(isinstance(b, Mapping) for b in raw):
        raise _Bad(name, "expected a list of mappings")
    return list(raw)


def _shares_add_up(shares: list[float], field: str) -> None:
    if shares and abs(sum(shares) - 1.0) > 0.01:
        raise _Bad(field, f"the shares add up to {sum(shares):.3f}, not 1")


def _sizes(section: Mapping[str, Any]) -> tuple[Bin, ...]:
    bins: list[Bin] = []
    low = 0
    items = _items(section, "sizes")
    for i, item in enumerate(items):
        where = f"sizes[{i}]"
        upto = _count(item.get("upto"), f"{where}.upto", optional=True)
        if upto is not None and upto > MAX_CLASS_BYTES:
            raise _Bad(f"{where}.upto", f"above {MAX_CLASS_BYTES:,} bytes: no lab serves it")
        if upto is None and i != len(items) - 1:
            raise _Bad(f"{where}.upto", "only the last size class may be open (null)")
        if upto is not None and upto < low:
            raise _Bad(f"{where}.upto", "the size classes must rise")
        bins.append((low, upto, _share(item.get("share"), f"{where}.share")))
        low = (upto or 0) + 1
    _shares_add_up([b[2] for b in bins], "sizes")
    return tuple(bins)


def _per_connection(section: Mapping[str, Any]) -> tuple[Bin, ...]:
    bins: list[Bin] = []
    items = _items(section, "per_connection")
    above = 1  # sizing demand leaves out a class no connection fell in: gaps are allowed
    for i, item in enumerate(items):
        where = f"per_connection[{i}]"
        low = _count(item.get("from"), f"{where}.from")
        high = _count(item.get("to"), f"{where}.to", optional=True)
        if low is None or low < above:
            raise _Bad(f"{where}.from", "the classes must start at 1 or more and rise")
        if high is None and i != len(items) - 1:
            raise _Bad(f"{where}.to", "only the last class may be open (null)")
        if high is not None and high < low:
            raise _Bad(f"{where}.to", "below its from")
        assert low is not None
        bins.append((low, high, _share(item.get("share"), f"{where}.share")))
        above = (high or 0) + 1
    _shares_add_up([b[2] for b in bins], "per_connection")
    return tuple(bins)


def _status(section: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    raw = section.get("status") or {}
    if not isinstance(raw, Mapping):
        raise _Bad("status", "expected a mapping of status class (2xx ...) to share")
    out: list[tuple[str, float]] = []
    for key, value in raw.items():
        if str(key) not in _STATUS:
            raise _Bad("status", f"a key is not one of {', '.join(_STATUS)}")
        out.append((str(key), _share(value, f"status.{key}")))
    _shares_add_up([s for _, s in out], "status")
    return tuple(sorted(out))


def _assumed(section: Mapping[str, Any]) -> tuple[Assumed, ...]:
    out: list[Assumed] = []
    for i, item in enumerate(_items(section, "assumed")):
        figure = item.get("figure")
        if figure not in ASSUMABLE:
            raise _Bad(f"assumed[{i}].figure", f"expected one of {', '.join(ASSUMABLE)}")
        value = item.get("value")
        if figure == "requests_per_connection":
            value = _mean(value, f"assumed[{i}].value")
        else:
            value = _share(value, f"assumed[{i}].value")
        out.append(Assumed(str(figure), float(value), str(item.get("source") or "")))
    return tuple(out)


def _mean(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(field, "expected a number of 1 or more")
    mean = float(value)
    if not math.isfinite(mean) or mean < 1.0:
        raise _Bad(field, "expected a number of 1 or more")
    return mean


def _optional(section: Mapping[str, Any], name: str, kind: str) -> float | None:
    value = section.get(name)
    if value is None:
        return None
    return _mean(value, name) if kind == "mean" else _share(value, name)


def workload_from_mapping(section: Any) -> WorkloadMix:
    """A :class:`WorkloadMix` from the ``workload:`` mapping; ValueError naming the field."""
    if not isinstance(section, Mapping):
        raise _Bad("", "expected a mapping")
    role = None
    if section.get("role") is not None:
        try:
            role = parse_role(str(section["role"]))
        except ValueError:
            raise _Bad("role", "not a role (web, load-balance, proxy, api-jwt)") from None
    size_field = str(section.get("size_field") or "")
    if size_field and size_field not in _SIZE_FIELDS:
        raise _Bad("size_field", f"expected one of {', '.join(_SIZE_FIELDS)}")
    missing = section.get("missing") or []
    if not isinstance(missing, list):
        raise _Bad("missing", "expected a list of figure names")
    return WorkloadMix(
        role=role,
        role_source=str(section.get("role_source") or ""),
        sizes=_sizes(section),
        size_field=size_field,
        per_connection=_per_connection(section),
        requests_per_connection=_optional(section, "requests_per_connection", "mean"),
        tls_share=_optional(section, "tls_share", "share"),
        resumption_share=_optional(section, "resumption_share", "share"),
        status=_status(section),
        assumed=_assumed(section),
        missing=tuple(str(m) for m in missing),
    )
