"""The prepared state of a run: the inventory's servers and their facts, the plan, the
pre-flight verdicts, the platform backends and the pairs (:class:`Conductor`). The run
(:class:`sizing.sweep.Sweep`) and the dry run (:meth:`Conductor.dry_run`) start from it,
so the dry run cannot disagree with the run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from sizing.ceilings import HostCeilings
from sizing.errors import (
    HostError,
    InputError,
    SizingError,
    UsageError,
)
from sizing.facts import HostFacts
from sizing.inventory import Host, load_inventory
from sizing.measure.context import HostHealth, MeasureContext, NullProgress, Progress
from sizing.model import (
    PointKey,
    family_of,
)
from sizing.plan.document import PlanDocument
from sizing.plan.dryrun import plan_document
from sizing.plan.jwt import make_token
from sizing.plan.pairs import Pair, find_pairs
from sizing.plan.points import PlannedPoint, build_plan
from sizing.plan.preflight import check_plan, offline_checks, same_address
from sizing.plan.settings import Schedule
from sizing.provision.ansible import Playbooks
from sizing.provision.facts import declared_facts, gather_facts
from sizing.provision.hostsafety import (
    RunHosts,
    same_machines,
)
from sizing.provision.nginx import NginxProvisioner
from sizing.provision.platforms import (
    INVENTORY_PLACEHOLDER,
    Backend,
    BackendOptions,
    Target,
    backend_for,
)
from sizing.provision.tools import ClientTools
from sizing.provision.upstream import UpstreamProvisioner
from sizing.store import Store
from sizing.sweep.options import (
    RunOptions,
    done_keys,
)
from sizing.topology import Topology


@dataclass(frozen=True)
class Prepared:
    """Facts, plan and pre-flight verdicts: what the run and the dry run share."""

    hosts: list[Host]
    facts: dict[str, HostFacts]
    plan: list[PlannedPoint]
    unreachable: dict[str, str]
    done: set[PointKey]
    checks: list[str]  # failed pre-flight checks
    problems: list[str]  # run-level problem lines (a hypervisor that cannot be asked)
    probed: bool = True  # False: planned offline on declared facts, no pre-flight run

    @property
    def todo(self) -> list[PlannedPoint]:
        """The points left to measure (``--resume`` leaves out the stored ones)."""
        return [p for p in self.plan if p.key not in self.done]


class Conductor:
    """What a run knows before it measures: its options, the inventory, Ansible, the
    hosts' health and facts, the backends and where each guest is planned."""

    def __init__(self, opts: RunOptions, progress: Progress | None = None) -> None:
        self.opts = opts
        self.progress: Progress = progress or NullProgress()
        self.inventory = load_inventory(
            opts.inventory, limit=opts.limit, extra_vars=opts.extra_vars
        )
        self.playbooks = Playbooks(
            self.inventory.path,
            opts.debug,
            extravars=opts.extra_vars,
            keep_artifacts=opts.keep_artifacts,
        )
        self.facts: dict[str, HostFacts] = {}
        self.health = HostHealth()
        self.nginx = NginxProvisioner(self.playbooks)
        self.upstream = UpstreamProvisioner(self.playbooks, self.inventory, self.progress.step)
        self.targets: dict[tuple[str, int, str], Target] = {}  # point config -> target
        self.backends: dict[str, Backend] = {}  # platform -> backend (keeps its sessions)
        self.prepared: dict[str, Host] = {}  # servers whose backend prepared a point
        self.placement: dict[str, str] = {}  # guest -> the inventory host that plans it
        self.reported: set[str] = set()  # broken hosts already reported (once per run)
        self.done: set[PointKey] = set()  # --resume: keys the run already has
        self.stands_for: dict[str, list[str]] = {}  # --sample: measured server -> the others
        self.ceilings: dict[str, HostCeilings] = {}  # server -> what the run measured
        self.said_waiting = False  # the store's wait for a lock was said once
        self.hosts_taken = RunHosts(self.playbooks)  # locks, nginx and load to give back
        self.ctx = MeasureContext(
            inventory=self.inventory,
            settings=opts.settings,
            facts=self.facts,
            playbooks=self.playbooks,
            progress=self.progress,
            hosts=self.health,
            tools=ClientTools(self.playbooks, self.progress.step),
            token=make_token(),
            run_token=self.hosts_taken.token,
        )

    def prepare(
        self,
        *,
        backends: bool,
        on_facts: Callable[[dict[str, HostFacts]], None] | None = None,
        probe: bool = True,
    ) -> Prepared:
        """Facts, plan and pre-flight. ``backends``: ask the platforms too (the hypervisor
        topology, backend skips) and refuse a run no server or client can carry.
        ``probe=False`` (the offline ``--plan``): plan on the inventory's declared facts,
        contacting nothing, and run no pre-flight check (they need the real facts)."""
        inv = self.inventory
        self.placement = self._placements()
        pool = inv.upstreams if any(p.needs_upstream for p in self.opts.profiles) else []
        hosts = list(
            {h.name: h for h in self._fact_hosts(inv.servers) + inv.clients + pool}.values()
        )
        if not probe:
            return self._prepare_offline(hosts)
        self.progress.step("reading host facts")
        facts, unreachable = gather_facts(self.playbooks, hosts)
        self.facts.update(facts)
        problems = [f"{h}: {why}" for h, why in sorted(unreachable.items())]
        own = {h: f.topology for h, f in self.facts.items()}  # what the hosts themselves see
        topologies = dict(own)  # what the points are planned on
        if backends:
            self._require_reachable(unreachable)
            if on_facts is not None:
                on_facts(self.facts)
            problems += self._hypervisor_topologies(topologies)
        plan = build_plan(
            inv,
            topologies,
            self.opts.cores,
            self.opts.hts,
            self.opts.profiles,
            servers=self._selected_servers(),
            clients=[c for c in inv.clients if c.name in self.facts],
            placement=self.placement,
        )
        if backends:
            plan = [self._backend_skip(p) for p in plan]
        todo = [p for p in plan if p.key not in self.done]
        if backends and self.done:
            self.progress.note(
                f"resuming run {self.opts.resume_run}: {len(plan) - len(todo)} point(s) "
                f"already stored, {len(todo)} to measure"
            )
        self.progress.step("pre-flight checks")
        settings = self.opts.settings
        checks = check_plan(
            todo,
            {h: f.record for h, f in self.facts.items()},
            connections=lambda p: Schedule.of(settings, p).connections,
            duration_s=lambda p: float(Schedule.of(settings, p).duration_s),
            rates=lambda p: settings.rates or (),
            hosts=[h.name for h in hosts],
            unreachable=unreachable,
            clock={h: f.clock_window for h, f in self.facts.items() if f.clock_window},
            topologies=own,
        )
        checks += same_machines({h.name: self.facts[h.name] for h in hosts if h.name in self.facts})
        checks += [c for c in same_address(self._selected_servers()) if c not in checks]
        return Prepared(hosts, self.facts, plan, unreachable, set(self.done), checks, problems)

    def _prepare_offline(self, hosts: list[Host]) -> Prepared:
        """The plan on declared facts (see :func:`declared_facts`): nothing contacted."""
        facts, missing = declared_facts(hosts)
        self.facts.update(facts)
        plan = build_plan(
            self.inventory,
            {h: f.topology for h, f in facts.items()},
            self.opts.cores,
            self.opts.hts,
            self.opts.profiles,
            servers=self._selected_servers(),
            clients=self.inventory.clients,
            placement=self.placement,
        )
        plan = [_undeclared(p, missing, self.placement) for p in plan]
        checks = offline_checks(
            plan, self._selected_servers(), {h: f.topology for h, f in facts.items()}
        )
        return Prepared(hosts, self.facts, plan, missing, set(self.done), checks, [], probed=False)

    def _require_reachable(self, unreachable: dict[str, str]) -> None:
        inv = self.inventory
        if not any(self.placement.get(s.name, s.name) in self.facts for s in inv.servers):
            raise HostError(
                ", ".join(s.name for s in inv.servers),
                unreachable.get(inv.servers[0].name, "unreachable"),
            )
        if not any(c.name in self.facts for c in inv.clients):
            raise HostError(
                ", ".join(c.name for c in inv.clients),
                unreachable.get(inv.clients[0].name, "unreachable"),
            )

    def _selected_servers(self) -> list[Host]:
        """The inventory's servers, narrowed by ``--platform`` (a platform or a family) and
        by ``--sample N`` (once their facts are known: :func:`sample_servers`)."""
        chosen = self._platform_servers()
        if self.opts.sample is None or not self.facts:
            return chosen
        kept, self.stands_for = sample_servers(chosen, self.facts, self.opts.sample)
        return kept

    def _platform_servers(self) -> list[Host]:
        wanted = set(self.opts.platforms)
        servers = self.inventory.servers
        if not wanted:
            return servers
        chosen = [
            h for h in servers if str(h.platform) in wanted or family_of(h.platform) in wanted
        ]
        if not chosen:
            have = sorted({str(h.platform) for h in servers})
            raise UsageError(
                f"--platform {','.join(sorted(wanted))}: no server of that platform in "
                f"{self.inventory.path} (it has: {', '.join(have)})"
            )
        return chosen

    def _backend(self, server: Host) -> Backend:
        key = str(server.platform)
        if key not in self.backends:
            self.backends[key] = backend_for(
                server.platform,
                BackendOptions(
                    allow_host_reboot=self.opts.allow_host_reboot,
                    insecure=self.opts.insecure,
                    hts=self.opts.hts,
                    notify=self.progress.note,
                    inventory=self.inventory,
                    debug=self.opts.debug,
                ),
            )
        return self.backends[key]

    def _inventory_error(self, exc: InputError) -> InputError:
        """A bad host variable is the inventory file's fault: name the file."""
        if exc.path != INVENTORY_PLACEHOLDER:
            return exc
        return InputError(str(self.opts.inventory), exc.problems)

    def _placements(self) -> dict[str, str]:
        """Guest server -> the inventory host whose facts plan it (validates the guests)."""
        out: dict[str, str] = {}
        for platform in sorted({s.platform for s in self.inventory.servers}):
            server = next(s for s in self.inventory.servers if s.platform is platform)
            try:
                backend = self._backend(server)
            except SizingError:
                continue  # not available: its servers say so when they are planned
            try:
                out.update(backend.placements(self.inventory))
            except InputError as exc:
                raise self._inventory_error(exc) from None
        return out

    def _fact_hosts(self, servers: Sequence[Host]) -> list[Host]:
        """Whose facts plan a server: its own, or its hypervisor's for a guest."""
        return [self.inventory.hosts[self.placement.get(s.name, s.name)] for s in servers]

    def _hypervisor_topologies(self, topologies: dict[str, Topology]) -> list[str]:
        """Replace a reachable guest's own topology by its hypervisor host's, if it has one.

        A hypervisor that cannot be asked makes its guests unplannable (skipped as
        unreachable) with one problem line; other servers go on. When no server is left,
        the first such error ends the run.
        """
        errors: list[SizingError] = []
        for server in self.inventory.servers:
            if server.name not in topologies:
                continue
            try:
                topo = self._backend(server).host_topology(server)
            except InputError as exc:  # a bad sizing_hypervisor / sizing_vm: the file's fault
                if exc.path != INVENTORY_PLACEHOLDER:
                    raise
                raise self._inventory_error(exc) from None
            except SizingError as exc:
                del topologies[server.name]
                errors.append(exc)
                continue
            if topo is not None:
                topologies[server.name] = topo
        if errors and not any(s.name in topologies for s in self.inventory.servers):
            raise errors[0]  # no server left to measure: the run fails with that one line
        for err in errors:
            self.progress.note(str(err))
        return [str(err) for err in errors]

    def _backend_skip(self, point: PlannedPoint) -> PlannedPoint:
        """A point the planner allowed (or skipped generically) that its backend must skip."""
        if point.skipped and "unreachable" in point.skip_reason:
            return point
        why = self._backend(point.server).skip_reason(point.server, point.key.cores, point.ht)
        if not why:
            return point
        return replace(point, skip_reason=why, allocation=None, client_cpus={})

    def dry_run(self, *, detail: bool = True) -> PlanDocument:
        """``sizing run --plan``: facts, plan and pre-flight, and the exact commands of every
        point, without provisioning or loading anything and without writing the store."""
        if self.opts.resume_run is not None:
            with Store.open_readonly(self.opts.db) as store:
                self.done = done_keys(store, self.opts.resume_run)
        p = self.prepare(backends=False, probe=self.opts.probe)
        pairs = find_pairs(
            p.plan, self.inventory, self.placement, p.done, unpaired=self.opts.unpaired
        )
        return plan_document(
            self.opts.settings,
            self.opts.resume_run,
            self.inventory,
            p.hosts,
            p.facts,
            p.plan,
            p.done,
            p.unreachable,
            p.checks,
            probed=p.probed,
            detail=detail,
            stands_for=self.stands_for,
            pairs=pairs,
        )

    def _pairs(self, plan: Sequence[PlannedPoint], done: set[PointKey]) -> list[Pair]:
        """The run's pairs (none with ``--unpaired``); why a leg that could have had a
        partner has none is said once, before any load. ``done``: the points ``--resume``
        leaves alone."""
        pairs, notes = find_pairs(
            plan, self.inventory, self.placement, done, unpaired=self.opts.unpaired
        )
        for note in notes:
            self.progress.info(f"{note.point}: {note.reason}")
        if pairs:
            self.progress.info(
                f"{len(pairs)} pair(s) measured in alternation (A B, B A, ...): "
                + "; ".join(p.label() for p in pairs)
            )
        return pairs


def _undeclared(
    point: PlannedPoint, missing: dict[str, str], placement: dict[str, str]
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
