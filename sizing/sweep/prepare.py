"""The first stage of a run: the inventory's servers and their facts, the plan, the
pre-flight verdicts and the pairs (:func:`prepare`, which returns them in a new
:class:`Sweep`). The run (``sizing.sweep.STAGES``) and
the dry run (that first stage alone, then :func:`plan_of`) start from it, so the dry run
cannot disagree with the run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from sizing.errors import HostError, InputError, SizingError, UsageError
from sizing.facts import HostFacts
from sizing.inventory import Host
from sizing.load.tools import client_installs
from sizing.model import PointKey, family_of
from sizing.plan.document import PlanDocument
from sizing.plan.dryrun import plan_document
from sizing.plan.estimate import Span
from sizing.plan.pairs import Pair, PairNote, find_pairs
from sizing.plan.points import PlannedPoint, build_plan
from sizing.plan.preflight import check_plan, offline_checks, same_address
from sizing.plan.settings import Schedule
from sizing.provision.ceiling import ceiling_jobs
from sizing.provision.facts import declared_facts, gather_facts
from sizing.provision.hostsafety import same_machines
from sizing.provision.platforms import INVENTORY_PLACEHOLDER
from sizing.provision.tools import build_seconds, clients_ready
from sizing.store import Store
from sizing.sweep.options import done_keys
from sizing.sweep.run_context import Prepared, RunContext, Sweep, frozen_map
from sizing.topology import Topology


def prepare(
    ctx: RunContext,
    sweep: Sweep,
    *,
    on_facts: Callable[[Mapping[str, HostFacts]], None] | None = None,
    probe: bool = True,
) -> Sweep:
    """Facts, plan and pre-flight: ``sweep`` with the facts, the placement, the plan and
    the verdicts (:class:`Prepared`). ``on_facts`` (a run's, given the facts as soon as
    they are read): the run also takes its servers' run locks in the same Ansible run,
    asks the platforms (the hypervisor topology, backend skips) and refuses what no server
    or client can carry; the dry run does none of it. ``probe=False`` (the offline
    ``--plan``): plan on the inventory's declared facts, contacting nothing, and run no
    pre-flight check (they need the real facts)."""
    inv, opts = ctx.inventory, ctx.opts
    backends = on_facts is not None
    placement = _placements(ctx)
    pool = inv.upstreams if any(p.needs_upstream for p in opts.profiles) else []
    hosts = list(
        {h.name: h for h in _fact_hosts(ctx, placement, inv.servers) + inv.clients + pool}.values()
    )
    if not probe:
        return _prepare_offline(ctx, sweep, hosts, placement)
    ctx.progress.step("reading host facts")
    # a run takes its servers' run locks in the same Ansible run (the dry run does not)
    facts, unreachable = gather_facts(
        ctx.playbooks,
        hosts,
        locks=ctx.ledger.hosts_taken.locks if backends else None,
        lock_hosts=_lock_hosts(ctx, placement) if backends else (),
        # what start_tools needs to know to skip playbooks/clients.yml (a run only)
        tool_commands=client_installs(p.generator for p in opts.profiles)[0] if backends else None,
    )
    facts = {**sweep.facts, **facts}
    for name, found in facts.items():  # the first load window's lead is learned from it
        if found.reach_s is not None:
            ctx.ledger.health.observe_reach(name, found.reach_s)
    problems = [f"{h}: {why}" for h, why in sorted(unreachable.items())]
    own = {h: f.topology for h, f in facts.items()}  # what the hosts themselves see
    topologies = dict(own)  # what the points are planned on
    if on_facts is not None:
        _require_reachable(ctx, facts, placement, unreachable)
        on_facts(facts)
    if backends:
        problems += _hypervisor_topologies(ctx, topologies)
    servers, stands_for = selected_servers(ctx, facts)
    plan = build_plan(
        inv,
        topologies,
        opts.cores,
        opts.hts,
        opts.profiles,
        servers=servers,
        clients=[c for c in inv.clients if c.name in facts],
        placement=placement,
    )
    if backends:
        plan = [_backend_skip(ctx, p) for p in plan]
    todo = [p for p in plan if p.key not in sweep.done]
    if backends and sweep.done:
        ctx.progress.note(
            f"resuming run {opts.resume_run}: {len(plan) - len(todo)} point(s) "
            f"already stored, {len(todo)} to measure"
        )
    ctx.progress.step("pre-flight checks")
    checks = _preflight(ctx, todo, facts, hosts, unreachable, own)
    checks += [c for c in same_address(servers) if c not in checks]
    return replace(
        sweep,
        prepared=Prepared(hosts, unreachable, checks, problems),
        facts=frozen_map(facts),
        placement=frozen_map(placement),
        planned=tuple(plan),
        stands_for=frozen_map(stands_for),
    )


def _preflight(
    ctx: RunContext,
    todo: list[PlannedPoint],
    facts: Mapping[str, HostFacts],
    hosts: list[Host],
    unreachable: dict[str, str],
    topologies: dict[str, Topology],
) -> list[str]:
    """The pre-flight checks of the points to measure, on the facts read (``topologies``:
    what the hosts themselves see)."""
    settings = ctx.opts.settings
    checks = check_plan(
        todo,
        {h: f.record for h, f in facts.items()},
        connections=lambda p: Schedule.of(settings, p).connections,
        duration_s=lambda p: float(Schedule.of(settings, p).duration_s),
        rates=lambda p: settings.rates or (),
        hosts=[h.name for h in hosts],
        unreachable=unreachable,
        clock={h: f.clock_window for h, f in facts.items() if f.clock_window},
        topologies=topologies,
    )
    return checks + same_machines({h.name: facts[h.name] for h in hosts if h.name in facts})


def _lock_hosts(ctx: RunContext, placement: Mapping[str, str]) -> list[str]:
    """The hosts whose run lock a run takes: its servers', a guest's hypervisor host's."""
    return sorted({placement.get(s.name, s.name) for s in selected_servers(ctx, {})[0]})


def _prepare_offline(
    ctx: RunContext, sweep: Sweep, hosts: list[Host], placement: dict[str, str]
) -> Sweep:
    """The plan on declared facts (see :func:`declared_facts`): nothing contacted."""
    facts, missing = declared_facts(hosts)
    facts = {**sweep.facts, **facts}
    servers, stands_for = selected_servers(ctx, facts)
    plan = build_plan(
        ctx.inventory,
        {h: f.topology for h, f in facts.items()},
        ctx.opts.cores,
        ctx.opts.hts,
        ctx.opts.profiles,
        servers=servers,
        clients=ctx.inventory.clients,
        placement=placement,
    )
    planned = [_undeclared(p, missing, placement) for p in plan]
    topologies = {h: f.topology for h, f in facts.items()}
    checks = offline_checks(planned, servers, topologies)
    return replace(
        sweep,
        prepared=Prepared(hosts, missing, checks, [], probed=False),
        facts=frozen_map(facts),
        placement=frozen_map(placement),
        planned=tuple(planned),
        stands_for=frozen_map(stands_for),
    )


def _require_reachable(
    ctx: RunContext,
    facts: Mapping[str, HostFacts],
    placement: Mapping[str, str],
    unreachable: dict[str, str],
) -> None:
    inv = ctx.inventory
    if not any(placement.get(s.name, s.name) in facts for s in inv.servers):
        raise HostError(
            ", ".join(s.name for s in inv.servers),
            unreachable.get(inv.servers[0].name, "unreachable"),
        )
    if not any(c.name in facts for c in inv.clients):
        raise HostError(
            ", ".join(c.name for c in inv.clients),
            unreachable.get(inv.clients[0].name, "unreachable"),
        )


def selected_servers(
    ctx: RunContext, facts: Mapping[str, HostFacts]
) -> tuple[list[Host], dict[str, tuple[str, ...]]]:
    """The inventory's servers, narrowed by ``--platform`` (a platform or a family) and
    by ``--sample N`` once their ``facts`` are known (:func:`sample_servers`), and which
    measured server stands for which others."""
    chosen = _platform_servers(ctx)
    if ctx.opts.sample is None or not facts:
        return chosen, {}
    kept, stands = sample_servers(chosen, facts, ctx.opts.sample)
    return kept, {k: tuple(v) for k, v in stands.items()}


def _platform_servers(ctx: RunContext) -> list[Host]:
    wanted = set(ctx.opts.platforms)
    servers = ctx.inventory.servers
    if not wanted:
        return servers
    chosen = [h for h in servers if str(h.platform) in wanted or family_of(h.platform) in wanted]
    if not chosen:
        have = sorted({str(h.platform) for h in servers})
        raise UsageError(
            f"--platform {','.join(sorted(wanted))}: no server of that platform in "
            f"{ctx.inventory.path} (it has: {', '.join(have)})"
        )
    return chosen


def _inventory_error(ctx: RunContext, exc: InputError) -> InputError:
    """A bad host variable is the inventory file's fault: name the file."""
    if exc.path != INVENTORY_PLACEHOLDER:
        return exc
    return InputError(str(ctx.opts.inventory), exc.problems)


def _placements(ctx: RunContext) -> dict[str, str]:
    """Guest server -> the inventory host whose facts plan it (validates the guests)."""
    out: dict[str, str] = {}
    for platform in sorted({s.platform for s in ctx.inventory.servers}):
        server = next(s for s in ctx.inventory.servers if s.platform is platform)
        try:
            backend = ctx.backend(server)
        except SizingError:
            continue  # not available: its servers say so when they are planned
        try:
            out.update(backend.placements(ctx.inventory))
        except InputError as exc:
            raise _inventory_error(ctx, exc) from None
    return out


def _fact_hosts(
    ctx: RunContext, placement: Mapping[str, str], servers: Sequence[Host]
) -> list[Host]:
    """Whose facts plan a server: its own, or its hypervisor's for a guest."""
    return [ctx.inventory.hosts[placement.get(s.name, s.name)] for s in servers]


def _hypervisor_topologies(ctx: RunContext, topologies: dict[str, Topology]) -> list[str]:
    """Replace a reachable guest's own topology by its hypervisor host's, if it has one.

    A hypervisor that cannot be asked makes its guests unplannable (skipped as
    unreachable) with one problem line; other servers go on. When no server is left,
    the first such error ends the run.
    """
    errors: list[SizingError] = []
    for server in ctx.inventory.servers:
        if server.name not in topologies:
            continue
        try:
            topo = ctx.backend(server).host_topology(server)
        except InputError as exc:  # a bad sizing_hypervisor / sizing_vm: the file's fault
            if exc.path != INVENTORY_PLACEHOLDER:
                raise
            raise _inventory_error(ctx, exc) from None
        except SizingError as exc:
            del topologies[server.name]
            errors.append(exc)
            continue
        if topo is not None:
            topologies[server.name] = topo
    if errors and not any(s.name in topologies for s in ctx.inventory.servers):
        raise errors[0]  # no server left to measure: the run fails with that one line
    for err in errors:
        ctx.progress.note(str(err))
    return [str(err) for err in errors]


def _backend_skip(ctx: RunContext, point: PlannedPoint) -> PlannedPoint:
    """A point the planner allowed (or skipped generically) that its backend must skip."""
    if point.skipped and "unreachable" in point.skip_reason:
        return point
    why = ctx.backend(point.server).skip_reason(point.server, point.key.cores, point.ht)
    if not why:
        return point
    return replace(point, skip_reason=why, allocation=None, client_cpus={})


def resumed_keys(ctx: RunContext) -> frozenset[PointKey]:
    """The dry run of ``--resume``: the points the run leaves alone, read without writing
    the store (the run reads them as it reopens its record)."""
    if ctx.opts.resume_run is None:
        return frozenset()
    with Store.open_readonly(ctx.opts.db) as store:
        return frozenset(done_keys(store, ctx.opts.resume_run))


def plan_of(ctx: RunContext, sweep: Sweep, *, detail: bool = True) -> PlanDocument:
    """``sizing run --plan``'s document once the first stage made ``sweep``: facts, plan
    and pre-flight, and the exact commands of every point, nothing provisioned or loaded
    and nothing written to the store."""
    opts = ctx.opts
    p = sweep.prepared
    if p is None:  # pragma: no cover - the dry run runs the first stage first
        raise RuntimeError("the plan's document is written before the plan is made")
    todo = [q for q in sweep.todo if not q.skipped]
    return plan_document(
        opts.settings,
        opts.resume_run,
        ctx.inventory,
        p.hosts,
        sweep.facts,
        sweep.planned,
        sweep.done,
        p.unreachable,
        p.checks,
        probed=p.probed,
        detail=detail,
        stands_for=sweep.stands_for,
        pairs=_pairs(ctx, sweep),
        once=once_parts(ctx, sweep, todo),
    )


# What the run does once before its first point, fewest to most seconds (the 2-core VM:
# the crypto ceiling's openssl speed 3 s; clients.yml 2 s when the tools are in place).
CEILING_S: Span = (2.0, 20.0)
CLIENTS_S: Span = (1.0, 40.0)
GENERATOR_COPY_S: Span = (1.0, 15.0)


def once_parts(
    ctx: RunContext, sweep: Sweep, todo: Sequence[PlannedPoint]
) -> list[tuple[str, Span]]:
    """What the run will do once before its first point, and only what it will do: a
    generator built (none when built, on PATH or in the machine's cache), the crypto
    ceiling (full-handshake points), the clients prepared (nothing when the facts show
    them ready), an open-loop generator copied to the clients."""
    if not todo:
        return []
    parts: list[tuple[str, Span]] = []
    gens = {p.profile.generator for p in todo}
    built = build_seconds(gens)
    if built[1] > 0:
        parts.append(("building the load generators", built))
    if ceiling_jobs(todo, sweep.facts, sweep.placement):
        parts.append(("the crypto ceiling", (0.0 if ctx.opts.resume_run else 2.0, CEILING_S[1])))
    if not clients_ready(todo, list(sweep.placement), sweep.facts):
        parts.append(("preparing the clients", CLIENTS_S))
    for gen in sorted({p.profile.generator for p in todo if p.profile.mode == "fixed-rate"}):
        parts.append((f"copying {gen} to the clients", GENERATOR_COPY_S))
    return parts


def _pairs(ctx: RunContext, sweep: Sweep) -> tuple[list[Pair], list[PairNote]]:
    """:func:`find_pairs` of the sweep's plan, as the run and its dry run both ask."""
    return find_pairs(
        sweep.planned, ctx.inventory, sweep.placement, sweep.done, unpaired=ctx.opts.unpaired
    )


def run_pairs(ctx: RunContext, sweep: Sweep) -> list[Pair]:
    """The run's pairs of ``sweep.planned`` (none with ``--unpaired``); why a leg that
    could have had a partner has none is said once, before any load. ``sweep.done``: the
    points ``--resume`` leaves alone."""
    pairs, notes = _pairs(ctx, sweep)
    for note in notes:
        ctx.progress.info(f"{note.point}: {note.reason}")
    if pairs:
        ctx.progress.info(
            f"{len(pairs)} pair(s) measured in alternation (A B, B A, ...): "
            + "; ".join(p.label() for p in pairs)
        )
    return pairs


def _undeclared(
    point: PlannedPoint, missing: dict[str, str], placement: Mapping[str, str]
) -> PlannedPoint:
    """An offline point skipped for a host without declared facts says what to do."""
    if not point.skipped:
        return point
    phys = placement.get(point.server.name, point.server.name)
    for name in [phys, *(c.name for c in point.clients)]:
        if name in missing:
            return replace(point, skip_reason=f"{name}: {missing[name]}")
    return point


def sample_servers(
    servers: Sequence[Host], facts: Mapping[str, HostFacts], n: int
) -> tuple[list[Host], dict[str, list[str]]]:
    """``--sample N``: the first ``n`` servers (inventory order) of each hardware identity
    (platform, CPU model, topology), and which servers each one stands for. Servers whose
    facts are unknown are kept (the run says why they cannot be planned)."""
    groups: dict[tuple[str, str, str], list[Host]] = {}
    kept: list[Host] = []
    for h in servers:
        f = facts.get(h.name)
        if f is None:
            kept.append(h)
            continue
        ident = (str(h.platform), f.cpu_model or "", f.topology.describe())
        groups.setdefault(ident, []).append(h)
    stands: dict[str, list[str]] = {}
    for members in groups.values():
        chosen, rest = members[:n], members[n:]
        kept += chosen
        for i, h in enumerate(rest):  # spread the others over the chosen ones
            stands.setdefault(chosen[i % len(chosen)].name, []).append(h.name)
    order = {h.name: i for i, h in enumerate(servers)}
    return sorted(kept, key=lambda h: order[h.name]), stands
