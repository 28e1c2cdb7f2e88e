"""What ``sizing run`` was asked (:class:`RunOptions`), what it did (:class:`RunSummary`),
the options stored with a run and restored by ``--resume``, and the exit status."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sizing.errors import (
    ExitStatus,
    SizingError,
    UsageError,
)
from sizing.model import (
    Ht,
    PointKey,
    PointResult,
    RunStatus,
    Status,
)
from sizing.plan.options import options_record, restore_options
from sizing.plan.settings import MeasureSettings
from sizing.profiles import Profile
from sizing.store import Store


@dataclass(frozen=True)
class RunOptions:
    """Everything ``sizing run`` was asked to do."""

    inventory: Path
    cores: tuple[int, ...]
    hts: tuple[Ht, ...]
    profiles: tuple[Profile, ...]
    db: Path
    settings: MeasureSettings = field(default_factory=MeasureSettings)
    skip_preflight: bool = False  # warn about failed pre-flight checks instead of refusing
    platforms: tuple[str, ...] = ()  # --platform: only servers of these platforms (or families)
    argv: tuple[str, ...] = ()
    debug: bool = False
    allow_host_reboot: bool = False  # hypervisor backends may reboot hosts (ESXi HT)
    insecure: bool = False  # hypervisor APIs without TLS verification (warned)
    resume_run: int | None = None  # --resume: measure only what this run is missing
    keep_running: bool = False  # --keep-running: leave nginx and the upstream running
    unpaired: bool = False  # --unpaired: measure paired legs one after the other
    probe: bool = True  # --plan reads the real facts (--probe); False: the declared ones
    limit: str | None = None  # --limit: Ansible host patterns narrowing the inventory
    extra_vars: dict[str, Any] = field(default_factory=dict)  # -e: every playbook, inventory
    keep_artifacts: Path | None = None  # --keep-artifacts: ansible-runner's artifacts kept
    label: str = ""  # --label: a name stored with the run
    sample: int | None = None  # --sample N: N servers per hardware identity


@dataclass
class RunSummary:
    """What a run did, for rendering."""

    run_id: int
    status: RunStatus
    points: list[PointResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    already: int = 0  # --resume: points the run had before this invocation
    recovered: list[str] = field(default_factory=list)  # points kept in a recovery file


def done_keys(store: Store, run_id: int) -> set[PointKey]:
    """The points ``--resume`` leaves alone: all it stored, less failed points and points
    skipped for an unreachable host (the host may be back)."""
    retry = {
        p.result.key
        for p in store.points(run_id)
        if p.result.status is Status.SKIPPED and "unreachable" in p.result.reason
    }
    return store.done_keys(run_id) - retry


def run_options_record(opts: RunOptions) -> dict[str, Any]:
    """The options stored with a run: what ``--resume`` needs to plan it again."""
    return {
        **options_record(opts),
        "label": opts.label,
        "limit": opts.limit,
        "sample": opts.sample,
        # -e values are not stored: they may carry secrets (give them again to --resume)
        "extra_vars": sorted(opts.extra_vars),
    }


def resume_options(opts: RunOptions, run_id: int) -> RunOptions:
    """``opts`` for ``--resume RUN_ID``: the stored run's inventory, points and settings."""
    if not Store.exists(opts.db):
        raise UsageError(f"--resume: {opts.db} does not exist (no run {run_id} to resume)")
    with Store.open_readonly(opts.db) as store:
        try:
            run = store.get_run(run_id)
        except SizingError:
            raise UsageError(f"--resume: no run {run_id} in {opts.db}") from None
    o = run.options
    return replace(
        restore_options(opts, o),
        inventory=Path(run.inventory),
        resume_run=run_id,
        label=o.get("label") or opts.label,
        limit=o.get("limit") or opts.limit,
        sample=o.get("sample") or opts.sample,
    )


def exit_status(summary: RunSummary) -> ExitStatus:
    """A run with a failed point, or one that did not complete, exits non-zero: what was
    measured is stored, the exit code says a host or nginx failed."""
    failed = any(p.status is Status.FAILED for p in summary.points)
    if failed or summary.status is not RunStatus.COMPLETE:
        return ExitStatus.HOST
    return ExitStatus.OK
