"""The options stored with a run, and read back by ``--resume`` (pure).

Every option that shapes what a run measures is stored: core counts, HT modes, the
profiles (their whole definitions, so a profile file need not exist any more), every
measurement setting, ``--platform``, ``--skip-preflight``, the hypervisor switches,
``--keep-running`` and ``--unpaired``. The inventory is stored as an absolute path with
the run itself. Records written by an older sizing lack some keys: those keep the options
given now.
"""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from typing import Any, Protocol, TypeVar

from sizing import profiles as profiles_mod
from sizing.model import Ht
from sizing.plan.settings import MeasureSettings
from sizing.profiles import Profile

__all__ = ["RunOptionsLike", "options_record", "restore_options"]

FLAGS = ("skip_preflight", "allow_host_reboot", "insecure", "keep_running", "unpaired")


class RunOptionsLike(Protocol):
    """What :class:`sizing.sweep.RunOptions` offers here (the plan cannot import it)."""

    @property
    def cores(self) -> tuple[int, ...]: ...
    @property
    def hts(self) -> tuple[Ht, ...]: ...
    @property
    def profiles(self) -> tuple[Profile, ...]: ...
    @property
    def settings(self) -> MeasureSettings: ...
    @property
    def platforms(self) -> tuple[str, ...]: ...


OptsT = TypeVar("OptsT", bound=RunOptionsLike)


def options_record(opts: RunOptionsLike) -> dict[str, Any]:
    """The options stored with a run: what ``--resume`` needs to plan it again."""
    settings = asdict(opts.settings)
    if settings.get("rates") is not None:
        settings["rates"] = list(settings["rates"])
    return {
        "cores": list(opts.cores),
        "ht": [str(h) for h in opts.hts],
        "profiles": [p.name for p in opts.profiles],
        "profile_defs": [p.model_dump(mode="json") for p in opts.profiles],
        **settings,
        "platforms": list(opts.platforms),
        **{flag: bool(getattr(opts, flag, False)) for flag in FLAGS},
    }


def _profiles(record: dict[str, Any], default: tuple[Profile, ...]) -> tuple[Profile, ...]:
    defs = record.get("profile_defs")
    if defs:
        return tuple(Profile.model_validate(d) for d in defs)
    return tuple(profiles_mod.load(n) for n in record.get("profiles", [])) or default


def restore_options(opts: OptsT, record: dict[str, Any]) -> OptsT:
    """``opts`` with the stored ``record`` applied (keys it lacks keep ``opts``' values)."""
    s = opts.settings
    stored = {f.name: record[f.name] for f in fields(MeasureSettings) if f.name in record}
    if stored.get("rates") is not None:
        stored["rates"] = tuple(int(r) for r in stored["rates"])
    flags = {flag: bool(record[flag]) for flag in FLAGS if flag in record}
    if "keep_running" in flags:  # asked for now, or then
        flags["keep_running"] = flags["keep_running"] or bool(getattr(opts, "keep_running", 0))
    return replace(  # type: ignore[type-var]
        opts,
        cores=tuple(int(c) for c in record.get("cores", opts.cores)),
        hts=tuple(Ht(h) for h in record.get("ht", [str(h) for h in opts.hts])),
        profiles=_profiles(record, opts.profiles),
        settings=replace(s, **stored),
        platforms=tuple(record.get("platforms", opts.platforms)),
        **flags,
    )
