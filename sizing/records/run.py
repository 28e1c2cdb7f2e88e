"""What a stored run's options record says, typed: the one shape ``runs.options`` has.

The record is written from :class:`sizing.sweep.RunOptions` (``run_options_record``: each
stored option's fields, from the option's declaration) and read back by ``--resume``
(``resume_options``) and every report by attribute. A field that is None (an empty list
when the option has no value) was not recorded: an older sizing did not store it. Who
measures the run is not an option: it is the run's ``owner``
(:class:`~sizing.records.host.LockOwner`, its own column).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache

from sizing.records.codec import dump, dump_object, flat, load, verbatim

__all__ = ["ProfileDefRecord", "RunOptionsRecord", "StoredSettings"]


@dataclass(frozen=True)
class StoredSettings:
    """What the run asked of every point (``sizing.plan.settings.MeasureSettings``, field
    for field; stored at the record's level)."""

    duration_s: float | None = None
    warmup_s: float | None = None
    repeat: int | None = None
    max_repeat: int | None = None
    connections: int | None = None
    rates: tuple[int, ...] | None = None
    slo: str | None = None
    soak_s: float | None = None


@dataclass(frozen=True)
class ProfileDefRecord:
    """One profile as a run measured it (``sizing.profiles.Profile``, field for field, as
    ``model_dump(mode="json")`` writes it; ``tests/unit/test_profile_def_record.py`` keeps
    the two in step): a user's own profile file, or a bundled one as it was then, which
    ``--resume`` and the bases read back (:meth:`to_json`, validated again as a profile).
    ``verbatim_unknown`` keeps what another sizing's profile held beside these."""

    kind: str | None = None
    name: str | None = None
    description: str | None = None
    generator: str | None = None
    metric: str | None = None
    unit: str | None = None
    scheme: str | None = None
    path: str | None = None
    file_size: int | None = None
    keepalive: bool | None = None
    tls_key: str | None = None
    tls_session_reuse: bool | None = None
    connections: int | None = None
    duration_s: float | None = None
    warmup_s: float | None = None
    repetitions: int | None = None
    mode: str | None = None
    rates: str | None = None
    slo: str | None = None
    role: str | None = None
    upstream_keepalive: int | None = None
    tls_protocols: str | None = None
    workload: str | None = None
    verbatim_unknown: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: object) -> ProfileDefRecord:
        """A stored profile, leniently; anything else reads as a profile of nothing."""
        return load(cls, data) if isinstance(data, Mapping) else cls()

    def to_json(self) -> dict[str, object]:
        """The profile's fields as stored (those not recorded left out: the profile's
        defaults), for ``Profile.model_validate``."""
        return dump_object(self)


@dataclass(frozen=True)
class RunOptionsRecord:
    """The options a run was measured with (see the module); ``verbatim_unknown`` keeps
    what another sizing stored beside them, as stored."""

    cores: tuple[int, ...] | None = None
    ht: tuple[str, ...] | None = None
    profiles: tuple[str, ...] | None = None
    # each profile's definition as measured (a profile file may change after the run)
    profile_defs: tuple[ProfileDefRecord, ...] | None = None
    settings: StoredSettings = flat(StoredSettings)
    skip_preflight: bool | None = None
    platforms: tuple[str, ...] | None = None
    allow_host_reboot: bool | None = None
    insecure: bool | None = None
    keep_running: bool | None = None
    unpaired: bool | None = None
    limit: str | None = None
    extra_vars: tuple[str, ...] | None = None  # the names only: values may carry secrets
    label: str | None = None
    sample: int | None = None
    more_inventories: tuple[str, ...] | None = None  # the -i after the first, resolved
    # keys another sizing stored that this one does not declare, kept as stored
    verbatim_unknown: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: object) -> RunOptionsRecord:
        """A stored options object, leniently (:func:`~sizing.records.codec.load`);
        anything else reads as a record of nothing."""
        return load(cls, data) if isinstance(data, Mapping) else cls()

    def to_json(self) -> dict[str, object]:
        """The record as stored and as ``results --json`` shows it: every option, null when
        not recorded (the measure settings at the record's level), then the keys another sizing
        stored (``verbatim_unknown``)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "settings":
                out.update({s.name: dump(getattr(value, s.name)) for s in fields(value)})
            elif f.name != "verbatim_unknown":
                out[f.name] = dump(value)
        out.update({k: v for k, v in self.verbatim_unknown.items() if k not in out})
        return out

    def value(self, name: str) -> object:
        """A stored option by its field name: a declared one typed, one another sizing
        stored that this record does not declare as stored; None when not recorded."""
        if name in _declared():
            return getattr(self, name)
        return self.verbatim_unknown.get(name)

    @property
    def warmup_s(self) -> float | None:
        """The warm-up the run's points had (None: each profile's own)."""
        return self.settings.warmup_s


@cache
def _declared() -> frozenset[str]:
    return frozenset(f.name for f in fields(RunOptionsRecord) if f.name != "verbatim_unknown")
