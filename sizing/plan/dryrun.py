"""``sizing run --plan``: the points, hosts, CPU sets and exact commands, as one document.

Built from the facts and the plan only: nothing is installed, provisioned or loaded, and
the results store is not written. Offline (the default) the facts are the inventory's
declared ones (``sizing_cpu``) and no host is contacted; ``--probe`` reads the real ones.
The generators' argv lists are the very ones the sweep would run (``sizing.plan.loadspec``), so a
large lab can be checked before it is used.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sizing.errors import SizingError
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory
from sizing.load.tools import open_loop_tool
from sizing.model import PointKey
from sizing.plan.document import (
    PlanClient,
    PlanDocument,
    PlanEstimate,
    PlanHost,
    PlanOffered,
    PlanPair,
    PlanPlaybook,
    PlanPoint,
    PlanPointRun,
    PlanServer,
    PlanSkip,
    PlanUnpaired,
    PlanUpstream,
    PlanWindows,
)
from sizing.plan.estimate import Span, TimeBudget, budget
from sizing.plan.loadspec import (
    client_ceiling,
    client_request,
    client_summary,
    closed_request,
    url_for,
)
from sizing.plan.pairs import Pair, PairNote, leg_order
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import MeasureSettings, Schedule
from sizing.topology import affinity_masks, cpulist

__all__ = [
    "estimate",
    "estimate_of",
    "estimate_words",
    "nothing_to_measure",
    "open_loop_plan_argv",
    "plan_document",
    "span_words",
]


def _windows(schedule: Schedule) -> PlanWindows:
    return PlanWindows(schedule.warmup_s, schedule.duration_s, schedule.first_reps)


def open_loop_plan_argv(
    schedule: Schedule, point: PlannedPoint, client: Host, url: str, duration: float
) -> list[str] | str:
    """A latency point's dry run: its open-loop tool's argv (one window)
    for the first offered rate on ``client``."""
    try:
        req = client_request(point, client, url, schedule.rates()[0], duration, window=False)
        return open_loop_tool(point.profile.generator).command(req).argv
    except SizingError as exc:
        return f"cannot build: {exc}"


def _point(settings: MeasureSettings, point: PlannedPoint, done: Collection[PointKey]) -> PlanPoint:
    k = point.key
    doc = PlanPoint(
        host=k.host,
        platform=k.platform,
        cores=k.cores,
        ht=k.ht,
        profile=k.profile,
        status=("stored" if k in done else "skipped" if point.skipped else "planned"),
        reason=point.skip_reason or ("already in the resumed run" if k in done else ""),
    )
    if point.skipped or point.allocation is None:
        return doc
    schedule = Schedule.of(settings, point.profile)
    connections = schedule.connections
    url = url_for(point, point.server.address)
    windows = _windows(schedule)
    clients = []
    for c in point.clients:
        req = closed_request(point, c, url, connections, float(windows.duration_s))
        try:
            argv: list[str] | str = client_summary(
                point, c, url, connections, float(windows.duration_s)
            )
        except Exception as exc:  # noqa: BLE001 - shown, and the pre-flight says it too
            argv = f"cannot build: {exc}"
        if point.profile.mode == "fixed-rate":  # latency profiles: open loop, one window per rate
            argv = open_loop_plan_argv(schedule, point, c, url, float(windows.duration_s))
        clients.append(
            PlanClient(
                c.name,
                cpulist(req.cpus) or "any",  # what the generator is pinned to
                req.threads,
                connections,
                argv,
            )
        )
    run = PlanPointRun(
        server_cpus=cpulist(point.allocation.server_cpus),
        nginx_workers=len(point.allocation.server_cpus),
        worker_cpu_affinity=affinity_masks(point.allocation.server_cpus),
        url=url,
        windows=windows,
        clients=clients,
    )
    offered = None
    if point.profile.mode == "fixed-rate":  # what the clients can offer (sizing.knee climb)
        ceiling, cores, per_core = client_ceiling(point)
        fixed = (
            bool(settings.rates)
            or schedule.slo() is not None
            or point.profile.metric == "gateway_cpu_curve"
        )
        offered = PlanOffered(
            rates=list(schedule.rates()) if fixed else None,
            climb_from=None if fixed else schedule.rates()[0],
            client_ceiling=ceiling,
            client_cores=cores,
            planning_rate_per_core=per_core,
            generator=point.profile.generator,
        )
    # where the upstream nginx pool runs (never on the measured cores)
    upstreams = [
        PlanUpstream(u.host, cpulist(u.cpus) or "all", u.describe()) for u in point.upstreams
    ]
    return replace(doc, run=run, offered=offered, upstreams=upstreams or None)


def plan_document(
    settings: MeasureSettings,
    resume_run: int | None,
    inventory: Inventory,
    hosts: Sequence[Host],
    facts: Mapping[str, HostFacts],
    plan: Sequence[PlannedPoint],
    done: Collection[PointKey],
    unreachable: Mapping[str, str],
    checks: Sequence[str],
    *,
    probed: bool = True,
    detail: bool = True,
    stands_for: Mapping[str, Sequence[str]] | None = None,
    pairs: tuple[Sequence[Pair], Sequence[PairNote]] | None = None,
    once: Sequence[tuple[str, Span]] = (),
) -> PlanDocument:
    """The dry run as one typed document. ``probed``: the facts were read from the
    hosts (``--probe``) rather than declared, and the pre-flight checks ran. ``detail``:
    every point with every client's command (``--plan --verbose``, ``--json``); without
    it (the default text) ``points`` is None and the per-server summary and the estimate
    say it all, in time and memory that grow with the points, not points × clients."""
    host_docs = []
    for h in hosts:
        f = facts.get(h.name)
        host_docs.append(
            PlanHost(
                name=h.name,
                roles=sorted(h.roles),
                address=h.address,
                facts=(f.record.facts or "probed") if f else None,
                reachable=(f is not None) if probed else None,
                problem=unreachable.get(h.name),
                cpus=len(f.topology.cpus) if f else None,
                topology=f.topology.describe() if f else None,
                cpu_model=f.record.cpu_model if f else None,
                platform=str(h.platform),
            )
        )
    measured = [p for p in plan if not p.skipped and p.key not in done]
    configs = sorted({p.config for p in measured})
    return PlanDocument(
        nothing_to_measure=None if measured else nothing_to_measure(plan, done),
        inventory=" + ".join(str(p) for p in inventory.inventories),
        resume_run=resume_run,
        probed=probed,
        hosts=host_docs,
        points=[_point(settings, p, done) for p in plan] if detail else None,
        servers=_servers(plan, done, stands_for or {}, facts),
        estimate=estimate(settings, measured, len(configs), pairs[0] if pairs else (), once),
        playbooks=[
            PlanPlaybook("facts.yml", 1 if probed else 0, done=probed),
            PlanPlaybook(
                "clients.yml",
                1 if measured else 0,
                note="at most: not run when the facts show the tools in place",
            ),
            PlanPlaybook("nginx.yml", len(configs), note="at most, once per config"),
            _load_runs(settings, measured, pairs[0] if pairs else ()),
        ],
        preflight=list(checks),
        pairs=None if pairs is None else [_pair(settings, p) for p in pairs[0]],
        unpaired=None if pairs is None else [PlanUnpaired(n.point, n.reason) for n in pairs[1]],
    )


def nothing_to_measure(plan: Sequence[PlannedPoint], done: Collection[PointKey]) -> str:
    """Why a plan measures nothing, in one line: every point stored, or skipped (with the
    distinct reasons), or no point at all."""
    if not plan:
        return "no point planned: no server in the inventory or --limit has the asked cores"
    if all(p.key in done for p in plan):
        return f"all {len(plan)} point(s) are already stored in the resumed run"
    reasons: list[str] = []
    for p in plan:
        if p.key not in done and p.skip_reason and p.skip_reason not in reasons:
            reasons.append(p.skip_reason)
    shown = "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else "")
    return f"every point is skipped: {shown}"


def _load_runs(
    settings: MeasureSettings, measured: Sequence[PlannedPoint], pairs: Sequence[Pair]
) -> PlanPlaybook:
    """load.yml once per point, and once per window of a pair's legs (at the fewest)."""
    windows = sum(
        len(p.legs) * (s.fixed_reps or s.min_reps)
        for p, s in ((p, Schedule.of(settings, p.a.profile)) for p in pairs)
    )
    legs = sum(len(p.legs) for p in pairs)
    note = "at least: a pair's legs run one window per load.yml" if pairs else None
    return PlanPlaybook("load.yml", len(measured) - legs + windows, note=note)


def _pair(settings: MeasureSettings, pair: Pair) -> PlanPair:
    """One pair of the plan: its legs and the order their windows alternate in."""
    sch = Schedule.of(settings, pair.a.profile)
    first = sch.fixed_reps or sch.min_reps
    order = " ".join("".join(leg_order(i, len(pair.legs))).upper() for i in range(min(first, 4)))
    return PlanPair(
        kind=str(pair.kind),
        figure=pair.kind.figure if pair.c is None else "HT gain (b / a) and overhead (c / a)",
        a=pair.a.key.label(),
        b=pair.b.key.label(),
        c=None if pair.c is None else pair.c.key.label(),
        order=order + (" ..." if (sch.fixed_reps or sch.max_reps) > 4 else ""),
        pairs=f"{sch.fixed_reps}" if sch.fixed_reps else f"{sch.min_reps} to {sch.max_reps}",
    )


def estimate(
    settings: MeasureSettings,
    measured: Sequence[PlannedPoint],
    configs: int | None = None,
    pairs: Sequence[Pair] = (),
    once: Sequence[tuple[str, Span]] = (),
) -> PlanEstimate:
    """How long the points left to measure take, fewest to most repetitions, with the
    one-time parts that will happen (``once``): :func:`sizing.plan.estimate.budget`, the
    one estimate the run's first line and its progress say too. ``configs`` is read from
    the points (kept for callers that pass it)."""
    return estimate_of(budget(settings, measured, pairs, once))


def estimate_of(b: TimeBudget) -> PlanEstimate:
    """A time budget as the plan's document states it."""
    low, high = b.total
    return PlanEstimate(
        points=len(b.points),
        configs=b.configs,
        low_s=round(low),
        high_s=round(high),
        overhead_s=round(b.assumed_s),
    )


def estimate_words(e: PlanEstimate) -> str:
    """The estimate in one sentence, the same in ``run --plan`` and in the run's log."""
    return (
        f"estimated time: {span_words(e.low_s, e.high_s)} "
        f"({e.points} point(s) in {e.configs} configuration(s); fewest to most "
        f"repetitions, {duration_words(e.overhead_s)} of it assumed for provisioning and "
        "Ansible)"
    )


def span_words(low_s: float, high_s: float) -> str:
    """``4 min 20 s to 9 min 10 s``, or ``about 23 s`` when both ends round alike."""
    low, high = duration_words(low_s), duration_words(high_s)
    return f"about {low}" if low == high else f"{low} to {high}"


def duration_words(seconds: float) -> str:
    """``1 h 05 min``, ``4 min 20 s``, ``45 s``."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def _servers(
    plan: Sequence[PlannedPoint],
    done: Collection[PointKey],
    stands_for: Mapping[str, Sequence[str]],
    facts: Mapping[str, HostFacts] | None = None,
) -> list[PlanServer]:
    """Per server: its points (planned, stored, skipped), the CPU sets of its
    configurations, and the clients that load it, each named once."""
    out: dict[str, dict[str, Any]] = {}
    lists: dict[tuple[int, ...], str] = {}  # a CPU set shared by many points is written once
    named: dict[tuple[int, int], dict[str, str]] = {}  # one map for servers sharing clients
    for p in plan:
        s = out.setdefault(
            p.key.host,
            {
                "host": p.key.host,
                "planned": 0,
                "stored": 0,
                "skipped": 0,
                "configs": {},
                "clients": {},
                "skip_reasons": {},
                "stands_for": list(stands_for.get(p.key.host, ())),
            },
        )
        if p.key in done:
            s["stored"] += 1
        elif p.skipped or p.allocation is None:
            s["skipped"] += 1
            s["skip_reasons"][p.skip_reason] = s["skip_reasons"].get(p.skip_reason, 0) + 1
            continue
        else:
            s["planned"] += 1
        if p.allocation is not None:
            s["configs"][f"{p.key.cores}c HT {p.key.ht}"] = cpulist(p.allocation.server_cpus)
            if s["clients"]:
                continue  # a server's points share its clients: the first planned one names them
            s["clients"] = _client_map(p, lists, named)
    for p in plan:
        s = out[p.key.host]
        if "sockets" not in s and p.allocation is not None:
            s["sockets"] = socket_boundary(plan, p.key.host, facts or {})
    return [
        PlanServer(**{**s, "skip_reasons": [PlanSkip(r, n) for r, n in s["skip_reasons"].items()]})
        for s in out.values()
    ]


def socket_boundary(plan: Sequence[PlannedPoint], host: str, facts: Mapping[str, HostFacts]) -> str:
    """Where the socket boundary falls for ``host``'s points (empty on one socket): the
    cores of socket 0, the points on one socket and those that span both (the server
    takes one socket first, then the next; client cores are never a server core's)."""
    f = facts.get(host)
    if f is None or f.topology.sockets < 2:
        return ""
    socket_of = {c.id: c.socket for c in f.topology.cpus}
    per = len({(c.socket, c.core) for c in f.topology.cpus if c.socket == min(socket_of.values())})
    one: list[int] = []
    both: list[int] = []
    for p in plan:
        if p.key.host != host or p.allocation is None:
            continue
        used = {socket_of.get(cpu) for cpu in p.allocation.server_cpus}
        (both if len(used) > 1 else one).append(p.key.cores)
    text = (
        f"socket boundary: {f.topology.sockets} sockets of {per} cores; nginx takes socket 0 "
        f"first, then the next (client cores never share a server core); one socket: "
        f"{_counts(one)}; across sockets (NUMA): {_counts(both)}"
    )
    if not both:
        text += (
            f"; to size two-socket servers add counts across it, e.g. --cores "
            f"{','.join(str(n) for n in sorted({min(16, per), per, min(2 * per, 32), 2 * per}))}"
        )
    return text


def _counts(cores: Sequence[int]) -> str:
    return ", ".join(f"{n}c" for n in sorted(set(cores))) or "none"


def _client_map(
    p: PlannedPoint, lists: dict[tuple[int, ...], str], named: dict[tuple[int, int], dict[str, str]]
) -> dict[str, str]:
    """Each client of a point with its CPU list; one map (never mutated) for the servers
    whose points share the same clients tuple and CPU sets, so a plan's document costs
    servers + clients, not servers x clients."""
    key = (id(p.clients), id(p.client_cpus))  # the plan keeps both alive: ids stay theirs
    if key not in named:
        by_set: dict[int, str] = {}  # by the CPU set's identity: hashing 80 CPUs per client
        out: dict[str, str] = {}
        for c in p.clients:
            cpus = p.client_cpus.get(c.name, ())
            if id(cpus) not in by_set:
                if cpus not in lists:
                    lists[cpus] = cpulist(cpus) or "any"
                by_set[id(cpus)] = lists[cpus]
            out[c.name] = by_set[id(cpus)]
        named[key] = out
    return named[key]


def names_text(names: Sequence[str]) -> str:
    """``load000, load001, ... load099 (100 hosts)`` for long lists."""
    if len(names) <= 4:
        return ", ".join(names)
    return f"{names[0]}, {names[1]}, ... {names[-1]} ({len(names)} hosts)"
