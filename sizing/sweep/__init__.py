"""The sweep: gather facts, plan, provision NGINX, measure every point, store it.

The conductor of the stages (plan -> provision -> measure -> store): the only code that
touches all of them. A run is a list of stage functions (:data:`STAGES`, in
``sizing/sweep/stages.py``) over one typed context (:class:`RunContext`: bound once from
the options; what the run holds on the hosts is in its ``ledger``), each returning what it
made as the next :class:`Sweep` (a value). ``run_sweep`` is the one core function
behind ``sizing run``, and ``plan_sweep`` behind ``sizing run --plan``: the dry run is
the run's first stage alone (:data:`DRY_RUN`), so it cannot disagree with the run.

``run_sweep`` never raises for a point that cannot be measured: the point is stored as
skipped or failed with its reason. It raises :class:`SizingError` for what stops the whole
run (bad options, every server unreachable) and :class:`Interrupted` on Ctrl-C, after
marking the run interrupted; every point finished before that is already committed.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sizing import __version__
from sizing.errors import Interrupted, SizingError, UsageError
from sizing.measure.measure_context import Progress
from sizing.model import PointKey, RunStatus, RunSummary
from sizing.plan.document import PlanDocument
from sizing.provision.hostsafety import owner_record, process_gone
from sizing.records import LockOwner
from sizing.signals import StopSignals, shielded, signal_pending
from sizing.store import Store, leases
from sizing.sweep.options import (
    RunOptions,
    done_keys,
    resume_options,
    run_options_record,
)
from sizing.sweep.prepare import plan_of, resumed_keys
from sizing.sweep.run_context import OpenRun, Prepared, RunContext, Sweep
from sizing.sweep.stages import DRY_RUN, STAGES

__all__ = [
    "DRY_RUN",
    "STAGES",
    "OpenRun",
    "Prepared",
    "RunContext",
    "RunOptions",
    "RunSummary",
    "Sweep",
    "plan_sweep",
    "resume_options",
    "run",
    "run_options_record",
    "run_sweep",
]


# How long the run's final status waits for another process's lock: the user waits too.
FINISH_PATIENCE_S = 30.0


def run_sweep(opts: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Measure every point of ``opts`` and store it; see the module docstring."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return run(RunContext.bind(opts, progress))


def plan_sweep(
    opts: RunOptions, progress: Progress | None = None, *, detail: bool = True
) -> PlanDocument:
    """``sizing run --plan``: the dry-run document (:data:`DRY_RUN`, then
    :func:`sizing.sweep.prepare.plan_of`)."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    ctx = RunContext.bind(opts, progress)
    sweep = Sweep(done=resumed_keys(ctx))
    for _, stage in DRY_RUN:
        sweep = stage(ctx, None, sweep)
    return plan_of(ctx, sweep, detail=detail)


def run(ctx: RunContext) -> RunSummary:
    """The run from start to end: open its record, run :data:`STAGES` in order, then end
    it. Every exit path ends it ``interrupted`` (Ctrl-C, SIGTERM, SIGHUP) or ``failed``
    (any error, a bug or a full disk included) with the reason, after stopping its load
    and nginx and restoring the platforms."""
    opened = open_run(ctx)
    summary = opened.summary
    try:
        with StopSignals():
            try:
                sweep = Sweep(done=opened.done)
                for _, stage in STAGES:
                    sweep = stage(ctx, opened, sweep)
            except BaseException:
                end(ctx, summary, stopped=True)
                raise
            end(ctx, summary, stopped=False)
    except KeyboardInterrupt as exc:
        sig = str(exc) if str(exc).startswith("SIG") else "SIGINT"
        why = "interrupted by the user (Ctrl-C)" if sig == "SIGINT" else f"interrupted by {sig}"
        finish(ctx, opened, RunStatus.INTERRUPTED, why)
        kept = len(summary.points) - len(summary.recovered)
        more = f" ({len(summary.recovered)} more in the recovery file)" if summary.recovered else ""
        raise Interrupted(
            f"{why}; run {summary.run_id} keeps its {kept} finished points{more}"
        ) from None
    except SizingError as exc:
        finish(ctx, opened, RunStatus.FAILED, str(exc))
        raise
    except BaseException as exc:  # a bug, a full disk: the run still ends, saying why
        finish(ctx, opened, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    finish(ctx, opened, summary.status, "; ".join(summary.problems))
    return summary


def open_run(ctx: RunContext) -> OpenRun:
    """Start the run's record (or reopen the one ``--resume`` continues) and name its
    owner, so `sizing results` calls it abandoned if this process dies."""
    opts = ctx.opts
    store = Store.for_run(opts.db)
    store.stop = signal_pending  # Ctrl-C ends a wait for the lock (the point is kept)
    store.on_wait = lambda seconds: _waiting(ctx, seconds)
    done: frozenset[PointKey] = frozenset()
    try:
        if opts.resume_run is not None:
            run_id = opts.resume_run
            _refuse_live(store, run_id)
            done = frozenset(done_keys(store, run_id))
            store.reopen_run(run_id)
        else:
            run_id = store.start_run(
                inventory=str(Path(opts.inventory).resolve()),
                argv=opts.argv,
                tool_version=__version__,
                options=run_options_record(opts),
            )
    except BaseException:
        store.close()
        raise
    ctx.ledger.hosts_taken.locks.run_id = run_id
    try:
        store.set_owner(run_id, owner_record())  # results names it abandoned if it dies
    except SizingError:
        pass  # a store that cannot take it now fails the run at its next write
    opened = OpenRun(store, RunSummary(run_id=run_id, status=RunStatus.RUNNING), done=done)
    try:
        _take_run_lease(ctx, opened)
    except leases.LeaseHeld:
        store.close()  # another live process runs it: its record is that process's
        raise
    except BaseException as exc:
        # The run's record exists: a lease that cannot be written (a full disk, a server
        # gone) ends it failed with the reason, as a later write would.
        why = str(exc) if isinstance(exc, SizingError) else f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(SizingError):
            store.finish_run(run_id, RunStatus.FAILED, why)
        store.close()
        raise
    return opened


def _take_run_lease(ctx: RunContext, opened: OpenRun) -> None:
    """The run's lease on itself, renewed from a thread while it lives; a host lock whose
    run's lease expired or was taken over is stale, from any machine."""
    store, token = opened.store, ctx.ledger.hosts_taken.token
    took = leases.take(
        store,
        [f"run:{opened.run_id}"],
        run_id=opened.run_id,
        token=token,
        owner=owner_record(),
        gone=process_gone,
    )
    for held in took:
        line = f"run {opened.run_id}: took over its lease ({held.describe()})"
        ctx.progress.note(line.replace("; it expires in 0 s if that process is gone", ""))
    ctx.ledger.hosts_taken.locks.gone_elsewhere = lambda holder: _lease_gone(store, holder)
    opened.keeper = leases.LeaseKeeper(store.path, token, held=1).start()


def _lease_gone(store: Store, holder: LockOwner) -> bool:
    """Whether the run that holds a host lock is gone by its lease: expired, or taken over
    by another process (a ``--resume`` elsewhere). A lock without a lease (a sizing from
    before leases) is not taken for gone."""
    if holder.run_id is None:
        return False
    try:
        (held,) = leases.leases(store, [f"run:{holder.run_id}"]) or (None,)
    except SizingError:
        return False
    return held is not None and (held.expired or held.token != holder.token)


def end(ctx: RunContext, summary: RunSummary, *, stopped: bool) -> None:
    """Give back what the run took (load, nginx, locks) and let every backend undo what
    it prepared (a guest gets its settings back), whatever signal comes meanwhile."""
    with shielded(deliver=False):
        summary.problems += ctx.ledger.hosts_taken.end(
            stopped=stopped, keep_running=ctx.opts.keep_running
        )
        for server in ctx.ledger.provisioned.values():
            try:
                ctx.backend(server).teardown(server)
            except Exception as exc:  # noqa: BLE001 - every server gets its teardown
                summary.problems.append(f"teardown: {exc}")
        ctx.ledger.provisioned.clear()


def finish(ctx: RunContext, opened: OpenRun, status: RunStatus, note: str) -> None:
    """Mark the run ended; a store that cannot take it (full disk, another writer
    holding it) is said on stderr at once, whatever way the run ends."""
    store, summary = opened.store, opened.summary
    store.patience = min(store.patience, FINISH_PATIENCE_S)  # the user waits for this one
    store.stop = lambda: False
    keeper = opened.keeper
    if keeper is not None:
        keeper.halt()  # renews no more; a renewal under way ends on its own connection
    try:
        store.finish_run(summary.run_id, status, note)
        with contextlib.suppress(SizingError):  # not given back: they expire
            leases.release(store, ctx.ledger.hosts_taken.token)
    except SizingError as exc:
        why = str(exc).removeprefix(f"{store.path}: ")
        why = why.removesuffix("; try again when it has finished")
        line = (
            f"{store.path}: run {summary.run_id} could not be marked {status} ({why}); "
            "`sizing results` shows it abandoned once this process has ended"
        )
        summary.problems.append(line)
        ctx.progress.note(line)
    finally:
        if keeper is not None:
            keeper.stop()
        store.close()


def _waiting(ctx: RunContext, seconds: float) -> None:
    """The store waits for another process's lock: said once, then on the bar."""
    if not ctx.ledger.said_waiting:
        ctx.ledger.said_waiting = True
        ctx.progress.note(
            f"{ctx.opts.db}: the results database is locked by another process; the "
            "finished point waits in memory and sizing retries (Ctrl-C stops and keeps "
            "it in a recovery file)"
        )
    ctx.progress.step(f"waiting for the results database ({seconds:.0f} s so far)")


def _refuse_live(store: Store, run_id: int) -> None:
    """``--resume`` of a run whose process still measures it is refused before the run is
    touched (reopening it would let this process mark it failed or interrupted)."""
    run = store.get_run(run_id)
    owner = run.owner
    if run.status != RunStatus.RUNNING or owner is None or process_gone(owner):
        return
    (held,) = leases.leases(store, [f"run:{run_id}"]) or (None,)
    if held is not None and held.expired:
        return  # its machine stopped renewing it: taken over (open_run says so)
    if owner.pid == os.getpid():
        return
    lease = (
        ""
        if held is None
        else f"; if its machine is gone, its lease expires in {held.expires_at - held.at:.0f} s"
    )
    raise UsageError(
        f"--resume {run_id}: run {run_id} is still measuring (pid {owner.pid} on "
        f"{owner.controller_host or 'this machine'}); wait for it to end, or stop it "
        f"(Ctrl-C, or kill that pid), then resume{lease}"
    )
