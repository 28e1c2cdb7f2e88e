"""The sweep: gather facts, plan, provision NGINX, measure every point, store it.

The conductor of the stages (plan -> provision -> measure -> store): the only code that
touches all of them. ``run_sweep`` is the one core function behind ``sizing run``, and
``plan_sweep`` behind ``sizing run --plan``; both start from the same prepared state
(:meth:`Sweep.prepare`), so the dry run cannot disagree with the run.

``run_sweep`` never raises for a point that cannot be measured: the point is stored as
skipped or failed with its reason. It raises :class:`SizingError` for what stops the whole
run (bad options, every server unreachable) and :class:`Interrupted` on Ctrl-C, after
marking the run interrupted; every point finished before that is already committed.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing import __version__
from sizing.ceilings import HostCeilings, crypto_ceiling, far_below
from sizing.errors import Interrupted, PreflightError, SizingError, UsageError
from sizing.facts import HostFacts
from sizing.measure.context import Progress
from sizing.measure.cpu import cpu_split
from sizing.model import SERVER_DIED, PointKey, PointResult, RunStatus, RunSummary, Sample, Status
from sizing.plan.document import PlanDocument
from sizing.plan.dryrun import estimate, span_words
from sizing.plan.pairs import Pair
from sizing.plan.points import PlannedPoint
from sizing.provision.ceiling import ceiling_jobs, measure_ceilings
from sizing.provision.hostsafety import owner_record, process_gone, took_over_text
from sizing.provision.tools import build_generators, prepare_clients
from sizing.records import DeclaredRecord, HostRecord
from sizing.signals import SignalStop, StopSignals, shielded, signal_pending
from sizing.store import Store, StoreError, keep_for_recovery
from sizing.sweep.measuring import PointMeasurer
from sizing.sweep.options import (
    RunOptions,
    done_keys,
    resume_options,
    run_options_record,
)
from sizing.sweep.prepare import Prepared

__all__ = [
    "Prepared",
    "against_ceiling",
    "RunOptions",
    "RunSummary",
    "Sweep",
    "plan_sweep",
    "resume_options",
    "run_options_record",
    "run_sweep",
]


# How long the run's final status waits for another process's lock: the user waits too.
FINISH_PATIENCE_S = 30.0


class Sweep(PointMeasurer):
    """One ``sizing run``: prepares (:class:`Conductor`), then measures every point in
    order."""

    def _teardown(self, summary: RunSummary) -> None:
        """Let every backend undo what it prepared (a guest gets its settings back)."""
        for server in self.prepared.values():
            try:
                self._backend(server).teardown(server)
            except Exception as exc:  # noqa: BLE001 - every server gets its teardown
                summary.problems.append(f"teardown: {exc}")
        self.prepared.clear()

    # -- the whole run -------------------------------------------------------------------

    def run(self) -> RunSummary:
        """The run from start to end. Every exit path ends it ``interrupted`` (Ctrl-C,
        SIGTERM, SIGHUP) or ``failed`` (any error, a bug or a full disk included) with the
        reason, after stopping its load and nginx and restoring the platforms."""
        opts = self.opts
        store = Store.for_run(opts.db)
        store.stop = signal_pending  # Ctrl-C ends a wait for the lock (the point is kept)
        store.on_wait = self._waiting
        try:
            if opts.resume_run is not None:
                run_id = opts.resume_run
                _refuse_live(store, run_id)
                self.done = done_keys(store, run_id)
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
        summary = RunSummary(run_id=run_id, status=RunStatus.RUNNING)
        self.hosts_taken.locks.run_id = run_id
        try:
            store.set_owner(run_id, owner_record())  # results names it abandoned if it dies
        except SizingError:
            pass  # a store that cannot take it now fails the run at its next write
        try:
            with StopSignals():
                try:
                    self._run(store, summary)
                except BaseException:
                    self._end(summary, stopped=True)
                    raise
                self._end(summary, stopped=False)
        except KeyboardInterrupt as exc:
            sig = str(exc) if str(exc).startswith("SIG") else "SIGINT"
            why = "interrupted by the user (Ctrl-C)" if sig == "SIGINT" else f"interrupted by {sig}"
            self._finish(store, summary, RunStatus.INTERRUPTED, why)
            kept = len(summary.points) - len(summary.recovered)
            raise Interrupted(
                f"{why}; run {run_id} keeps its {kept} finished points"
                + (
                    f" ({len(summary.recovered)} more in the recovery file)"
                    if summary.recovered
                    else ""
                )
            ) from None
        except SizingError as exc:
            self._finish(store, summary, RunStatus.FAILED, str(exc))
            raise
        except BaseException as exc:  # a bug, a full disk: the run still ends, saying why
            self._finish(store, summary, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
            raise
        self._finish(store, summary, summary.status, "; ".join(summary.problems))
        return summary

    def _end(self, summary: RunSummary, *, stopped: bool) -> None:
        """Give back what the run took (load, nginx, locks) and restore the platforms,
        whatever signal comes meanwhile."""
        with shielded(deliver=False):
            summary.problems += self.hosts_taken.end(
                stopped=stopped, keep_running=self.opts.keep_running
            )
            self._teardown(summary)

    def _finish(self, store: Store, summary: RunSummary, status: RunStatus, note: str) -> None:
        """Mark the run ended; a store that cannot take it (full disk, another writer
        holding it) is said on stderr at once, whatever way the run ends."""
        store.patience = min(store.patience, FINISH_PATIENCE_S)  # the user waits for this one
        store.stop = lambda: False
        try:
            store.finish_run(summary.run_id, status, note)
        except SizingError as exc:
            why = str(exc).removeprefix(f"{store.path}: ")
            why = why.removesuffix("; try again when it has finished")
            line = (
                f"{store.path}: run {summary.run_id} could not be marked {status} ({why}); "
                "`sizing results` shows it abandoned once this process has ended"
            )
            summary.problems.append(line)
            self.progress.note(line)
        finally:
            store.close()

    def _waiting(self, seconds: float) -> None:
        """The store waits for another process's lock: said once, then on the bar."""
        if not self.said_waiting:
            self.said_waiting = True
            self.progress.note(
                f"{self.opts.db}: the results database is locked by another process; the "
                "finished point waits in memory and sizing retries (Ctrl-C stops and keeps "
                "it in a recovery file)"
            )
        self.progress.step(f"waiting for the results database ({seconds:.0f} s so far)")

    def _store_point(
        self, store: Store, summary: RunSummary, result: PointResult, samples: list[Any]
    ) -> None:
        """Store a finished point; one that cannot be stored is kept in the recovery file,
        said with the command that imports it, and the run stops (interrupted when a
        signal ended the wait)."""
        try:
            with shielded():  # a signal now stops the run once this point is stored
                store.add_point(summary.run_id, result, samples)
                summary.points.append(result)
            return
        except StoreError as exc:
            failure = exc
        summary.points.append(result)
        where, line = keep_for_recovery(store.path, summary.run_id, result, samples)
        summary.recovered.append(result.key.label())
        if where is not None:
            self.progress.note(
                f"{result.key.label()}: {result.status} but not stored ({failure}); it is kept "
                f"in {where}: import it with `sizing import {where} --db {store.path}`"
            )
        else:
            self.progress.note(
                f"{result.key.label()}: {result.status} but neither stored nor written to a "
                f"recovery file; save this line to a file and import it with "
                f"`sizing import FILE --db {store.path}`:\n{line}"
            )
        if failure.stopped:
            raise SignalStop(signal.SIGINT)
        raise failure

    def _run(self, store: Store, summary: RunSummary) -> None:
        prepared = self.prepare(
            backends=True, on_facts=lambda facts: self._keep_environment(store, summary, facts)
        )
        plan, pairs = self._start(store, summary, prepared)
        if not self._measure_plan(store, summary, plan, pairs):
            return  # interrupted: what is measured stays, `--resume` may continue later
        tried = [p for p in summary.points if p.status is not Status.SKIPPED]
        if tried and all(p.status is Status.FAILED for p in tried):
            # nothing measured: provisioning or every host failed; never "complete"
            summary.status = RunStatus.FAILED
            summary.problems.insert(0, f"every point failed: {tried[0].reason}")
            return
        summary.status = RunStatus.COMPLETE

    def _keep_environment(self, store: Store, summary: RunSummary,
                          facts: dict[str, HostFacts]) -> None:  # fmt: skip
        """Store the hosts' facts with the run, with what the inventory declares."""
        env = {h: HostRecord.parse(f.raw) for h, f in facts.items()}
        declared = self.inventory.declared()
        # every host, hosts without facts too (a guest's hypervisor: the basis' price),
        # and an empty entry where nothing is declared: the record is then complete,
        # and no read-only command ever re-reads the inventory (through Ansible)
        for name in [*self.inventory.hosts, *declared]:
            env[name] = replace(env.get(name, HostRecord()),
                                declared=DeclaredRecord.parse(declared.get(name, {})))  # fmt: skip
        if self.opts.sample is not None:  # which measured server stands for which
            self._selected_servers()
            for name, others in self.stands_for.items():
                env[name] = replace(env.get(name, HostRecord()), stands_for=tuple(others))
        store.set_environment(summary.run_id, env)

    def _start(self, store: Store, summary: RunSummary,
               prepared: Prepared) -> tuple[list[PlannedPoint], list[Pair]]:  # fmt: skip
        """Take the hosts, say what was found, the pairs and the estimated time, build the
        load generators, measure the crypto ceilings and prepare the clients; the points to
        measure and the pairs."""
        servers = {
            self.placement.get(p.server.name, p.server.name) for p in prepared.todo if not p.skipped
        }
        self.hosts_taken.locks.acquire(servers)
        for host, holder in self.hosts_taken.locks.took_over:
            # the dead run's nginx and upstream there are this run's to stop when it ends,
            # whether or not it needs them itself (an rps run killed, a static-rps run next)
            self.hosts_taken.servers.add(host)
            self.hosts_taken.upstreams.add(host)
            line = took_over_text(host, holder)
            summary.problems.append(line)
            self.progress.note(line)
        summary.problems += prepared.problems  # unreachable hosts, hypervisors: said once
        plan = prepared.todo
        summary.already = len(prepared.plan) - len(plan)
        if prepared.checks:
            if not self.opts.skip_preflight:
                raise PreflightError(prepared.checks)
            for line in prepared.checks:
                self.progress.note(f"pre-flight (ignored by --skip-preflight): {line}")
        todo = [p for p in plan if not p.skipped]
        pairs = self._pairs(prepared.plan, prepared.done)
        if todo:
            e = estimate(self.opts.settings, todo, len({p.config for p in todo}), pairs)
            self.progress.info(
                f"estimated time: {span_words(e.low_s, e.high_s)} for {e.points} "
                "point(s) (fewest to most repetitions)"
            )
            self.progress.start(len(plan), (e.low_s + e.high_s) / 2)
        else:
            self.progress.start(len(plan))
        if todo:
            needed = [(p.profile.generator, p.profile.name) for p in todo]
            for gen, why in build_generators(needed, self.progress.step).items():
                summary.problems.append(f"{why}: the points that need {gen} are not measured")
            self._ceilings(store, summary, plan)
            self.progress.step("preparing load generators")
            for host, why in prepare_clients(self.playbooks, plan, list(self.placement)).items():
                self.health.mark_broken(host, why)
        return plan, pairs

    def _measure_plan(self, store: Store, summary: RunSummary, plan: list[PlannedPoint],
                      pairs: list[Pair]) -> bool:  # fmt: skip
        """Measure and store every point in order (a pair's legs together); False when a
        dead server interrupted the run (the rest is stored as skipped)."""
        partner = {leg.key: p for p in pairs for leg in p.legs}
        finished: set[PointKey] = set()
        for point in plan:
            if point.key in finished:
                continue  # the second leg of a pair, measured with its first
            pair = partner.get(point.key)
            measured = self._pair(pair) if pair is not None else [(point, *self._point(point))]
            died = False
            for leg, result, samples in measured:
                finished.add(leg.key)
                result = against_ceiling(self.ceilings.get(leg.server.name), leg, result, samples)
                self._store_point(store, summary, result, samples)
                self.progress.advance(result)
                self._report_broken(summary)
                if SERVER_DIED in result.flags and not died:
                    died = True
                    summary.status = RunStatus.INTERRUPTED
                    summary.problems.append(result.reason)
            if died:
                for rest in plan:
                    if rest.key not in finished:
                        summary.points.append(
                            PointResult(rest.key, Status.SKIPPED, "not measured: run interrupted")
                        )
                return False
        return True

    def _ceilings(self, store: Store, summary: RunSummary, plan: list[PlannedPoint]) -> None:
        """Measure the crypto ceiling of the servers of full-handshake points, once per
        run and before any nginx runs there, and keep it with the hosts' facts."""
        jobs = ceiling_jobs(plan, self.facts, guests=list(self.placement))
        if not jobs:
            return
        what = "; ".join(
            f"{h}: {', '.join(f'{j.alg} on cpus {j.cpus}' for j in js)}" for h, js in jobs.items()
        )
        self.progress.step(f"measuring the crypto ceiling (openssl speed, {what})")
        got, _ = measure_ceilings(self.playbooks, jobs)
        env = store.get_run(summary.run_id).environment
        patch: dict[str, HostRecord] = {}
        for h, c in got.items():
            patch[h] = replace(env.get(h, HostRecord()), ceilings=c.to_dict())
            self.ceilings[h] = c  # what each point is checked against
        store.set_environment(summary.run_id, patch)
        for h, c in got.items():
            if c.missing:
                summary.problems.append(f"{h}: crypto ceiling not measured: {c.missing}")

    def _report_broken(self, summary: RunSummary) -> None:
        """Report each host that failed mid-sweep once; its later points fail fast."""
        for host, why in self.health.broken.items():
            if host in self.reported:
                continue
            self.reported.add(host)
            line = f"{host}: {why}; the points that need it are not measured"
            summary.problems.append(line)  # shown once, when the run ends
            self.progress.step(line)

    # -- paired legs ---------------------------------------------------------------------

    # -- one point -----------------------------------------------------------------------




def run_sweep(opts: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Measure every point of ``opts`` and store it; see the module docstring."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return Sweep(opts, progress).run()


def plan_sweep(
    opts: RunOptions, progress: Progress | None = None, *, detail: bool = True
) -> PlanDocument:
    """``sizing run --plan``: the dry-run document (see :meth:`Sweep.dry_run`)."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return Sweep(opts, progress).dry_run(detail=detail)


def against_ceiling(
    ceilings: HostCeilings | None,
    point: PlannedPoint,
    result: PointResult,
    samples: Sequence[tuple[int, Sample]],
) -> PointResult:
    """A valid handshake figure far below the crypto ceiling its run measured on the
    server (``ceilings``) gets the ``far-below-ceiling`` warning
    flag, with what the server's CPU did instead; any other point is returned as it is."""
    if result.status is not Status.MEASURED or result.unit != "handshakes/s":
        return result
    ceiling = crypto_ceiling(
        ceilings,
        point.profile.tls_key or "",
        point.key.cores,
        point.key.ht,
    )
    timed = [s.metadata for _, s in samples if "." not in s.metric and not s.metadata.warmup]
    why = far_below(ceiling, result.value, cpu_split(timed))
    if why is None:
        return result
    reason = f"{result.reason}; {why}" if result.reason else why
    return replace(result, flags=(*result.flags, "far-below-ceiling"), reason=reason)


def _refuse_live(store: Store, run_id: int) -> None:
    """``--resume`` of a run whose process still measures it is refused before the run is
    touched (reopening it would let this process mark it failed or interrupted)."""
    run = store.get_run(run_id)
    owner = run.owner
    if run.status != RunStatus.RUNNING or owner is None or process_gone(owner):
        return
    if owner.pid == os.getpid():
        return
    raise UsageError(
        f"--resume {run_id}: run {run_id} is still measuring (pid {owner.pid} on "
        f"{owner.controller_host or 'this machine'}); wait for it to end, or stop it "
        "(Ctrl-C, or kill that pid), then resume"
    )


