"""What ``sizing run`` was asked (:class:`RunOptions`), what it did (:class:`RunSummary`),
the options stored with a run and restored by ``--resume``, and the exit status.

``--resume`` lives here and only here: each field of :class:`RunOptions` says in its
metadata how it is stored with a run (:class:`Stored`), and from that one declaration come
the record (:func:`run_options_record`), the options ``--resume`` restores
(:func:`resume_options`) and the ``sizing run`` options it refuses when typed beside it
(:func:`resume_refuses`). Adding a ``run`` option touches two files: its field of
``RunArgs`` in ``cli/run_args.py`` (flag and help) and its field of the same name here.
Records written by an older sizing lack some keys: those keep the options given now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from sizing import profiles as profiles_mod
from sizing.errors import (
    SizingError,
    UsageError,
)
from sizing.model import (
    Ht,
    PointKey,
    Status,
)
from sizing.paths import Database
from sizing.plan.settings import MeasureSettings
from sizing.profiles import Profile
from sizing.records import RunOptionsRecord
from sizing.records.run import ProfileDefRecord, StoredSettings
from sizing.store import Store

Fields = dict[str, Any]  # some fields of a RunOptionsRecord, by name


@dataclass(frozen=True)
class Stored:
    """How one :class:`RunOptions` field is stored with a run and read back by ``--resume``.

    ``encode`` gives the field's fields of the :class:`RunOptionsRecord`; ``decode`` reads
    them back given the value asked for now (a record without them keeps it). ``cli``: the
    ``sizing run`` option that sets it ("" for the field's own name), refused beside
    ``--resume`` when typed (the stored value is the request) unless ``refused`` is False;
    ``each``: the field is a group of options, each refused by its own name (the group's
    field names, less a unit suffix ``_s``).
    """

    encode: Callable[[str, Any], Fields]
    decode: Callable[[str, RunOptionsRecord, Any], Any]
    cli: str = ""
    refused: bool = True
    each: type[Any] | None = None

    def refuses(self, name: str) -> tuple[str, ...]:
        if self.each is not None:
            return tuple(_cli_name(f.name.removesuffix("_s")) for f in fields(self.each))
        return (_cli_name(self.cli or name),) if self.refused else ()


def _cli_name(name: str) -> str:
    return name.replace("_", "-")


def _plain(name: str, value: Any) -> Fields:
    return {name: value}


def _restored(name: str, record: RunOptionsRecord, now: Any) -> Any:
    got = record.value(name)
    return now if got is None else got


def _either(name: str, record: RunOptionsRecord, now: Any) -> Any:
    return record.value(name) or now


def stored(
    default: Any = MISSING,
    *,
    cli: str = "",
    refused: bool = True,
    encode: Callable[[str, Any], Fields] = _plain,
    decode: Callable[[str, RunOptionsRecord, Any], Any] = _restored,
) -> Any:
    """A :class:`RunOptions` field stored with the run (see :class:`Stored`)."""
    return field(default=default, metadata={"stored": Stored(encode, decode, cli, refused)})


def _settings_record(name: str, s: MeasureSettings) -> Fields:
    return {name: StoredSettings(**{f.name: getattr(s, f.name) for f in fields(s)})}


def _settings_back(name: str, record: RunOptionsRecord, now: MeasureSettings) -> MeasureSettings:
    got = getattr(record, name)
    back = {f.name: getattr(got, f.name) for f in fields(StoredSettings)}
    # an older record lacks some: those keep the value asked for now (the defaults: the
    # settings are refused beside --resume)
    return replace(now, **{k: v for k, v in back.items() if v is not None})


def _profiles_record(_: str, ps: tuple[Profile, ...]) -> Fields:
    return {
        "profiles": tuple(p.name for p in ps),
        "profile_defs": tuple(ProfileDefRecord.parse(p.model_dump(mode="json")) for p in ps),
    }


def _profiles_back(
    _: str, record: RunOptionsRecord, now: tuple[Profile, ...]
) -> tuple[Profile, ...]:
    if defs := record.profile_defs:
        return tuple(Profile.model_validate(d.to_json()) for d in defs)
    return tuple(profiles_mod.load(n) for n in record.profiles or ()) or now


def _names(name: str, value: dict[str, Any]) -> Fields:
    return {name: tuple(sorted(value))}


def _flag_back(name: str, record: RunOptionsRecord, now: bool) -> bool:
    got = record.value(name)
    return now if got is None else bool(got)


def _flag(cli: str = "", refused: bool = True) -> Any:
    return stored(False, cli=cli, refused=refused, decode=_flag_back)


def _tuple(name: str, value: tuple[Any, ...]) -> Fields:
    return {name: tuple(value)}


@dataclass(frozen=True)
class RunOptions:
    """Everything ``sizing run`` was asked to do."""

    inventory: Path  # stored with the run itself, restored by --resume
    cores: tuple[int, ...] = field(metadata={"stored": Stored(_tuple, _restored)})
    hts: tuple[Ht, ...] = field(
        metadata={
            "stored": Stored(
                lambda n, v: {"ht": tuple(str(h) for h in v)},
                lambda n, r, now: tuple(Ht(h) for h in r.ht) if r.ht is not None else now,
                cli="ht",
            )
        }
    )
    profiles: tuple[Profile, ...] = field(
        metadata={"stored": Stored(_profiles_record, _profiles_back, cli="profile")}
    )
    db: Database
    # --duration, --warmup, --repeat, ...: each refused by its own name
    settings: MeasureSettings = field(
        default_factory=MeasureSettings,
        metadata={"stored": Stored(_settings_record, _settings_back, each=MeasureSettings)},
    )
    # warn about failed pre-flight checks instead of refusing
    skip_preflight: bool = _flag()
    # --platform: only servers of these platforms (or families)
    platforms: tuple[str, ...] = stored((), cli="platform", encode=_tuple)
    argv: tuple[str, ...] = ()
    debug: bool = False
    allow_host_reboot: bool = _flag()  # hypervisor backends may reboot hosts (ESXi HT)
    insecure: bool = _flag()  # hypervisor APIs without TLS verification (warned)
    resume_run: int | None = None  # --resume: measure only what this run is missing
    # --keep-running: leave nginx and the upstream running (asked for now, or then)
    keep_running: bool = stored(
        False, refused=False, decode=lambda n, r, now: bool(r.keep_running) or now
    )
    unpaired: bool = _flag()  # --unpaired: measure paired legs one after the other
    probe: bool = True  # --plan reads the real facts (--probe); False: the declared ones
    # --limit: Ansible host patterns narrowing the inventory
    limit: str | None = stored(None, decode=_either)
    # -e: every playbook, inventory. Only the names are stored: the values may carry
    # secrets (give them again to --resume)
    extra_vars: dict[str, Any] = field(
        default_factory=dict,
        metadata={"stored": Stored(_names, lambda n, r, now: now, refused=False)},
    )
    # the -i after the first (Ansible merges repeated -i in order); --resume reads them again
    more_inventories: tuple[Path, ...] = stored(
        (),
        refused=False,  # -i: refused beside --resume as "inventory" already
        encode=lambda n, v: {n: tuple(str(Path(p).resolve()) for p in v)} if v else {},
        decode=lambda n, r, now: tuple(Path(p) for p in r.more_inventories or ()) or now,
    )
    keep_artifacts: Path | None = None  # --keep-artifacts: ansible-runner's artifacts kept
    label: str = stored("", refused=False, decode=_either)  # --label: a name stored with the run
    sample: int | None = stored(None, decode=_either)  # --sample N: N servers per hardware identity


def done_keys(store: Store, run_id: int) -> set[PointKey]:
    """The points ``--resume`` leaves alone: all it stored, less failed points and points
    skipped for an unreachable host (the host may be back)."""
    retry = {
        p.result.key
        for p in store.points(run_id)
        if p.result.status is Status.SKIPPED and "unreachable" in p.result.reason
    }
    return store.done_keys(run_id) - retry


def _stored_fields() -> list[tuple[str, Stored]]:
    return [(f.name, f.metadata["stored"]) for f in fields(RunOptions) if "stored" in f.metadata]


def run_options_record(opts: RunOptions) -> RunOptionsRecord:
    """The options stored with a run: what ``--resume`` needs to plan it again."""
    record: Fields = {}
    for name, how in _stored_fields():
        record.update(how.encode(name, getattr(opts, name)))
    # every stored option is a field of the record (test_run_options_record checks it)
    return RunOptionsRecord(**record)


def resume_refuses() -> tuple[str, ...]:
    """The ``sizing run`` options (without ``--``) that ``--resume`` refuses when typed: its
    stored options are the request."""
    declared = _stored_fields()
    # the options a field stands for alone, then those of groups (the settings)
    ordered = [*(d for d in declared if d[1].each is None), *(d for d in declared if d[1].each)]
    return ("inventory", *(c for name, how in ordered for c in how.refuses(name)))


def resume_options(opts: RunOptions, run_id: int) -> RunOptions:
    """``opts`` for ``--resume RUN_ID``: the stored run's inventory, points and settings."""
    if not Store.exists(opts.db):
        raise UsageError(f"--resume: {opts.db} does not exist (no run {run_id} to resume)")
    with Store.open_readonly(opts.db) as store:
        try:
            run = store.get_run(run_id)
        except SizingError:
            raise UsageError(f"--resume: no run {run_id} in {opts.db}") from None
    back = {
        name: how.decode(name, run.options, getattr(opts, name)) for name, how in _stored_fields()
    }
    return replace(opts, **back, inventory=Path(run.inventory), resume_run=run_id)
