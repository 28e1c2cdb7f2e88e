"""The stages of a run, in order (:data:`STAGES`): each a plain function of the run's
context (:class:`RunContext`), the open run it stores into (:class:`OpenRun`) and what the
stages before it made (:class:`Sweep`), returning the next :class:`Sweep`: the facts, the
plan, the pairs and the ceilings pass by value, so a stage can be run and tested alone.

read the facts, take the servers' locks, plan and check -> refuse what the pre-flight
refused, pair and estimate -> start the generators, ceilings and clients -> measure each
point -> conclude. The end (give back the hosts, tear the platforms down, mark the run)
follows whatever way the stages stop: :func:`sizing.sweep.run`. The dry run
(``run --plan``) is the same pipeline cut after its first stage (:data:`DRY_RUN`), run
with no open run (esrally's pipeline variants): it takes no lock and stores nothing.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from sizing.ceilings import HostCeilings
from sizing.errors import ExitStatus, HostError, PreflightError
from sizing.facts import HostFacts
from sizing.measure.checks import against_ceiling
from sizing.model import SERVER_DIED, PointKey, PointResult, RunStatus, Status
from sizing.plan.dryrun import estimate_of, estimate_words
from sizing.plan.estimate import budget
from sizing.provision.ceiling import CeilingJob, ceiling_jobs, measure_ceilings
from sizing.provision.hostsafety import owner_record, process_gone, took_over_text
from sizing.provision.tools import build_generators, prepare_clients
from sizing.records import DeclaredRecord, HostRecord
from sizing.signals import SignalStop, shielded
from sizing.store import StoreError, keep_for_recovery, leases
from sizing.sweep.measuring import measure_legs, measure_point
from sizing.sweep.prepare import once_parts, prepare, run_pairs, selected_servers
from sizing.sweep.run_context import OpenRun, Prepared, RunContext, Sweep, frozen_map

Stage = Callable[[RunContext, OpenRun, Sweep], Sweep]
FirstStage = Callable[[RunContext, OpenRun | None, Sweep], Sweep]  # the dry run: no open run


def facts_and_plan(ctx: RunContext, run: OpenRun | None, sweep: Sweep) -> Sweep:
    """Read the hosts' facts, plan, run the pre-flight. A run (``run``: the open run)
    takes its servers' run locks in the same Ansible run (a dead run's stale ones taken
    over, said), keeps the facts with the run at once and asks the platforms; the dry run
    (no open run) reads and plans only."""
    if run is None:
        return prepare(ctx, sweep, probe=ctx.opts.probe)
    made = prepare(ctx, sweep, on_facts=lambda facts: keep_environment(ctx, run, facts))
    taken = ctx.ledger.hosts_taken
    _take_host_leases(ctx, run)
    for host, holder in taken.locks.took_over:
        # the dead run's nginx and upstream there are this run's to stop when it ends,
        # whether or not it needs them itself (an rps run killed, a static-rps run next)
        taken.servers.add(host)
        taken.upstreams.add(host)
        line = took_over_text(host, holder)
        run.summary.problems.append(line)
        ctx.progress.note(line)
    return made


def _take_host_leases(ctx: RunContext, run: OpenRun) -> None:
    """The leases on the hosts whose run lock the run took, in the results database: the
    lock of every machine of a team (:mod:`sizing.store.leases`). A host another live run
    holds is refused as a held run lock is; an expired lease is taken over, said."""
    hosts = sorted(ctx.ledger.hosts_taken.locks.held)
    if not hosts:
        return
    try:
        took = leases.take(
            run.store,
            [f"host:{h}" for h in hosts],
            run_id=run.run_id,
            token=ctx.ledger.hosts_taken.token,
            owner=owner_record(),
            gone=process_gone,
        )
    except leases.LeaseHeld as exc:
        host = exc.lease.name.removeprefix("host:")
        raise HostError(
            host, f"another sizing run holds its lease in {run.store.path} ({exc.lease.describe()})"
        ) from None
    if run.keeper is not None:
        run.keeper.held += len(hosts)
    said = {host for host, _ in ctx.ledger.hosts_taken.locks.took_over}  # the lock's line
    for held in took:
        host = held.name.removeprefix("host:")
        if held.run_id != run.run_id and host not in said:
            line = f"{host}: took over the lease of {held.describe()}"
            run.summary.problems.append(line)
            ctx.progress.note(line)


def check_and_pair(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
    """Refuse a run the pre-flight refused, find the pairs and say the estimated time:
    ``sweep`` with the points this run measures and their pairs."""
    summary = run.summary
    prepared = _prepared(sweep)
    summary.problems += prepared.problems  # unreachable hosts, hypervisors: said once
    plan = sweep.todo
    summary.already = len(sweep.planned) - len(plan)
    if prepared.checks:
        if not ctx.opts.skip_preflight:
            raise PreflightError(prepared.checks)
        for line in prepared.checks:
            ctx.progress.note(f"pre-flight (ignored by --skip-preflight): {line}")
    todo = [p for p in plan if not p.skipped]
    pairs = run_pairs(ctx, sweep)
    made = replace(sweep, plan=tuple(plan), pairs=tuple(pairs))
    if not todo:
        ctx.progress.start(len(plan))
        return made
    # one estimate (sizing.plan.estimate): the plan's, the first line's and the time left
    b = budget(ctx.opts.settings, todo, pairs, once_parts(ctx, sweep, todo))
    ctx.progress.info(estimate_words(estimate_of(b)))
    ctx.progress.start(len(plan), b)
    return made


def start_tools(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
    """Build the load generators the points need, measure the crypto ceilings and prepare
    the clients (the window runner, the load generators): ``sweep`` with the ceilings."""
    plan = sweep.plan
    todo = [p for p in plan if not p.skipped]
    if not todo:
        return sweep
    needed = [(p.profile.generator, p.profile.name) for p in todo]
    for gen, why in build_generators(needed, ctx.progress.step).items():
        run.summary.problems.append(f"{why}: the points that need {gen} are not measured")
    ceilings = _ceilings(ctx, run, sweep)
    ctx.progress.step("preparing load generators")
    guests = list(sweep.placement)
    for host, why in prepare_clients(ctx.playbooks, plan, guests, sweep.facts).items():
        ctx.ledger.health.mark_broken(host, why)
    return replace(sweep, ceilings=frozen_map(ceilings))


def measure_points(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
    """Measure and store every point in order (a pair's legs together). A dead server
    ends the run early (``sweep`` with ``ended_early``): the rest is stored as skipped."""
    plan, summary = sweep.plan, run.summary
    partner = {leg.key: p for p in sweep.pairs for leg in p.legs}
    finished: set[PointKey] = set()
    for point in plan:
        if point.key in finished:
            continue  # the second leg of a pair, measured with its first
        pair = partner.get(point.key)
        measured = (
            measure_legs(ctx, sweep, pair)
            if pair is not None
            else [(point, *measure_point(ctx, sweep, point))]
        )
        died = False
        for leg, result, samples in measured:
            finished.add(leg.key)
            ceiling = sweep.ceilings.get(leg.server.name)
            result = against_ceiling(ceiling, leg, result, samples)
            store_point(ctx, run, result, samples)
            ctx.progress.advance(result)
            _report_broken(ctx, run)
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
            return replace(sweep, ended_early=True)
    return sweep


def conclude(ctx: RunContext, run: OpenRun, sweep: Sweep) -> Sweep:
    """The run's status: complete, or failed when every point tried failed (provisioning
    or every host failed: never "complete"); a run a dead server ended stays interrupted
    (``--resume`` may continue it)."""
    summary = run.summary
    if sweep.ended_early:
        return sweep
    tried = [p for p in summary.points if p.status is not Status.SKIPPED]
    if tried and all(p.status is Status.FAILED for p in tried):
        summary.status = RunStatus.FAILED
        summary.problems.insert(0, f"every point failed: {tried[0].reason}")
        return sweep
    summary.status = RunStatus.COMPLETE
    return sweep


# The run, top to bottom. The end follows whatever way these stop (sizing.sweep.run).
FIRST: tuple[str, FirstStage] = (
    "read the facts, take the servers' locks, plan and check",
    facts_and_plan,
)
STAGES: tuple[tuple[str, Stage], ...] = (
    FIRST,
    ("refuse what the pre-flight refused, pair and estimate", check_and_pair),
    ("start the generators, ceilings and clients", start_tools),
    ("measure each point", measure_points),
    ("conclude", conclude),
)
# The dry run (run --plan): the run's first stage alone, with no open run.
DRY_RUN: tuple[tuple[str, FirstStage], ...] = (FIRST,)


def keep_environment(ctx: RunContext, run: OpenRun, facts: Mapping[str, HostFacts]) -> None:
    """Store the hosts' facts with the run, with what the inventory declares. A resumed
    run keeps the crypto ceilings its first part measured on a host of the same build."""
    env = {h: HostRecord.parse(f.raw) for h, f in facts.items()}
    before = run.store.get_run(run.run_id).environment if ctx.opts.resume_run else {}
    for h, rec in env.items():
        kept = before.get(h)
        if kept is not None and kept.ceilings is not None and _same_build(kept, rec):
            env[h] = replace(rec, ceilings=kept.ceilings)
    declared = ctx.inventory.declared()
    # every host, hosts without facts too (a guest's hypervisor: the basis' price),
    # and an empty entry where nothing is declared: the record is then complete,
    # and no read-only command ever re-reads the inventory (through Ansible)
    for name in [*ctx.inventory.hosts, *declared]:
        env[name] = replace(
            env.get(name, HostRecord()), declared=DeclaredRecord.parse(declared.get(name, {}))
        )
    if ctx.opts.sample is not None:  # which measured server stands for which
        for name, others in selected_servers(ctx, facts)[1].items():
            env[name] = replace(env.get(name, HostRecord()), stands_for=tuple(others))
    run.store.set_environment(run.run_id, env)


def store_point(ctx: RunContext, run: OpenRun, result: PointResult, samples: list[Any]) -> None:
    """Store a finished point; one that cannot be stored is kept in the recovery file,
    said with the command that imports it, and the run stops (interrupted when a
    signal ended the wait)."""
    store, summary = run.store, run.summary
    try:
        if run.keeper is not None and run.keeper.lost:
            raise StoreError(
                store.path,
                f"run {summary.run_id}'s lease was taken over by another process (its "
                "renewal failed for longer than the lease time): this run stores no more",
                code=ExitStatus.STORE,
            )
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
        ctx.progress.note(
            f"{result.key.label()}: {result.status} but not stored ({failure}); it is kept "
            f"in {where}: import it with `sizing import {where} --db {store.path}`"
        )
    else:
        ctx.progress.note(
            f"{result.key.label()}: {result.status} but neither stored nor written to a "
            f"recovery file; save this line to a file and import it with "
            f"`sizing import FILE --db {store.path}`:\n{line}"
        )
    if failure.stopped:
        raise SignalStop(signal.SIGINT)
    raise failure


def _prepared(sweep: Sweep) -> Prepared:
    prepared = sweep.prepared
    if prepared is None:  # pragma: no cover - the stages' order says it cannot be
        raise RuntimeError("the plan is checked before it is made")
    return prepared


def _ceilings(ctx: RunContext, run: OpenRun, sweep: Sweep) -> dict[str, HostCeilings]:
    """Measure the crypto ceiling of the servers of full-handshake points, once per
    run and before any nginx runs there, and keep it with the hosts' facts; returns what
    each point is checked against. A resumed run keeps what its first part measured of the
    same operations on the same CPUs."""
    plan, placement = sweep.plan, sweep.placement
    jobs = ceiling_jobs(plan, sweep.facts, placement)
    if not jobs:
        return {}
    env = run.store.get_run(run.run_id).environment
    kept = {h: HostCeilings.of(env.get(h)) for h in jobs}
    have = {h: c for h, c in kept.items() if c is not None and _covers(c, jobs[h])}
    todo = {h: js for h, js in jobs.items() if h not in have}
    got: dict[str, HostCeilings] = {}
    if todo:
        what = "; ".join(
            f"{h}: {', '.join(f'{j.alg} on cpus {j.cpus}' for j in js)}" for h, js in todo.items()
        )
        ctx.progress.step(f"measuring the crypto ceiling (openssl speed, {what})")
        got, _ = measure_ceilings(ctx.playbooks, todo)
    have.update(got)
    patch: dict[str, HostRecord] = {}
    # a container runs on its host's CPUs: the host's ceiling is its own
    sharing = {
        p.server.name: placement[p.server.name]
        for p in plan
        if p.server.name in placement and p.server.platform.shares_host_cpus
    }
    measured = {**have, **{ctr: have[host] for ctr, host in sharing.items() if host in have}}
    for h, c in measured.items():
        patch[h] = replace(env.get(h, HostRecord()), ceilings=c.record())
    run.store.set_environment(run.run_id, patch)
    for h, c in got.items():
        if c.missing:
            run.summary.problems.append(f"{h}: crypto ceiling not measured: {c.missing}")
    return measured


def _same_build(a: HostRecord, b: HostRecord) -> bool:
    """The same CPU and OpenSSL builds: what a crypto ceiling measured on one holds on the
    other."""
    return (a.cpu_model, a.openssl_version, a.nginx_openssl) == (
        b.cpu_model,
        b.openssl_version,
        b.nginx_openssl,
    )


def _covers(kept: HostCeilings, jobs: list[CeilingJob]) -> bool:
    """True when what a run kept of a host's ceilings has every one of ``jobs``."""
    done = {(r.alg, r.cpus, r.threads) for r in kept.crypto}
    return not kept.missing and all((j.alg, j.cpus, j.threads) in done for j in jobs)


def _report_broken(ctx: RunContext, run: OpenRun) -> None:
    """Report each host that failed mid-sweep once; its later points fail fast."""
    for host, why in ctx.ledger.health.broken.items():
        if host in ctx.ledger.reported:
            continue
        ctx.ledger.reported.add(host)
        line = f"{host}: {why}; the points that need it are not measured"
        run.summary.problems.append(line)  # shown once, when the run ends
        ctx.progress.step(line)
