"""What one ``sizing run`` works with, typed: bound once (:class:`RunContext`), changed as
it goes (:class:`RunState`), and the open run it stores into (:class:`OpenRun`).

The run is a list of stage functions over these (``sizing.sweep.STAGES``; the dry run is
its first stage alone); no stage keeps state of its own. The context is frozen: whatever a
stage changes (the facts, the plan, the hosts it takes, their health) is in its ``state``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.ceilings import HostCeilings
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory, load_inventory
from sizing.measure.measure_context import HostHealth, MeasureContext, NullProgress, Progress
from sizing.model import PointKey, RunSummary
from sizing.plan.jwt import make_token
from sizing.plan.pairs import Pair
from sizing.plan.points import PlannedPoint
from sizing.provision.ansible import Playbooks
from sizing.provision.hostsafety import RunHosts
from sizing.provision.nginx import NginxProvisioner
from sizing.provision.platforms import Backend, BackendOptions, Target, backend_for
from sizing.provision.tools import ClientTools
from sizing.provision.upstream import UpstreamProvisioner
from sizing.store import Store
from sizing.store.leases import LeaseKeeper
from sizing.sweep.options import RunOptions

Config = tuple[str, int, str]  # a point's platform configuration: (server, cores, HT)


@dataclass(frozen=True)
class Prepared:
    """The first stage's verdicts beside the facts and plan it leaves in the state: the
    hosts asked, the unreachable ones, the pre-flight checks and the run-level problems."""

    hosts: list[Host]
    unreachable: dict[str, str]
    checks: list[str]  # failed pre-flight checks
    problems: list[str]  # run-level problem lines (a hypervisor that cannot be asked)
    probed: bool = True  # False: planned offline on declared facts, no pre-flight run


@dataclass
class RunState:
    """Everything a run learns or changes while it goes, in one place.

    ``hosts_taken``: the locks, nginx and load the run gives back when it ends;
    ``health``: the hosts found broken (shared with the measuring context); ``facts`` is
    shared with the measuring context too (a booted guest's facts are added);
    ``placement``: guest -> the inventory host whose facts plan it; ``planned``: every
    point of the plan; ``done``: the keys ``--resume`` leaves alone; ``plan``: the points
    this run measures; ``stands_for``: ``--sample``'s measured server -> the others;
    ``targets``: the prepared configurations (one, or a pair's two); ``provisioned``: the
    servers whose backend prepared a point (torn down at the end); ``ceilings``: the
    crypto ceilings measured; ``reported``: broken hosts already said.
    """

    hosts_taken: RunHosts  # locks, nginx and load to give back
    health: HostHealth = field(default_factory=HostHealth)
    facts: dict[str, HostFacts] = field(default_factory=dict)
    placement: dict[str, str] = field(default_factory=dict)
    planned: list[PlannedPoint] = field(default_factory=list)  # the whole plan
    done: set[PointKey] = field(default_factory=set)
    stands_for: dict[str, list[str]] = field(default_factory=dict)
    prepared: Prepared | None = None  # the first stage's verdicts
    targets: dict[Config, Target] = field(default_factory=dict)
    provisioned: dict[str, Host] = field(default_factory=dict)
    ceilings: dict[str, HostCeilings] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)
    said_waiting: bool = False  # the store's wait for a lock was said once
    plan: list[PlannedPoint] = field(default_factory=list)  # the points this run measures
    pairs: list[Pair] = field(default_factory=list)
    ended_early: bool = False  # a dead server stopped the run: the rest is skipped

    @property
    def todo(self) -> list[PlannedPoint]:
        """The planned points left to measure (``--resume`` leaves out the stored ones)."""
        return [p for p in self.planned if p.key not in self.done]


class Backends:
    """The platform backends of one run, made on first need and kept (their sessions)."""

    def __init__(self, opts: RunOptions, inventory: Inventory, progress: Progress) -> None:
        self._options = BackendOptions(
            allow_host_reboot=opts.allow_host_reboot,
            insecure=opts.insecure,
            hts=opts.hts,
            notify=progress.note,
            inventory=inventory,
            debug=opts.debug,
        )
        self.made: dict[str, Backend] = {}  # platform -> backend

    def of(self, server: Host) -> Backend:
        """The backend of ``server``'s platform (raises :class:`SizingError` when that
        platform's SDK is missing)."""
        key = str(server.platform)
        if key not in self.made:
            self.made[key] = backend_for(server.platform, self._options)
        return self.made[key]


@dataclass(frozen=True)
class RunContext:
    """A run's parts, bound once from its options: the inventory, Ansible, the
    provisioners, the measuring context, the backends, and the run's :class:`RunState`
    (what changes)."""

    opts: RunOptions
    progress: Progress
    inventory: Inventory
    playbooks: Playbooks
    nginx: NginxProvisioner
    upstream: UpstreamProvisioner
    measure: MeasureContext
    backends: Backends
    state: RunState

    @classmethod
    def bind(cls, opts: RunOptions, progress: Progress | None = None) -> RunContext:
        """Read the inventory (through Ansible) and bind everything a run uses to it."""
        shown: Progress = progress or NullProgress()
        inventory = load_inventory(
            (opts.inventory, *opts.more_inventories), limit=opts.limit, extra_vars=opts.extra_vars
        )
        for line in inventory.warning_lines():
            shown.note(f"inventory: {line}")
        playbooks = Playbooks(
            inventory.inventories,
            opts.debug,
            extravars=opts.extra_vars,
            keep_artifacts=opts.keep_artifacts,
        )
        state = RunState(hosts_taken=RunHosts(playbooks))
        return cls(
            opts=opts,
            progress=shown,
            inventory=inventory,
            playbooks=playbooks,
            nginx=NginxProvisioner(playbooks),
            upstream=UpstreamProvisioner(playbooks, inventory, shown.step),
            measure=MeasureContext(
                inventory=inventory,
                settings=opts.settings,
                facts=state.facts,
                playbooks=playbooks,
                progress=shown,
                hosts=state.health,
                tools=ClientTools(playbooks, shown.step),
                token=make_token(),
                run_token=state.hosts_taken.token,
            ),
            backends=Backends(opts, inventory, shown),
            state=state,
        )

    def backend(self, server: Host) -> Backend:
        """The backend of ``server``'s platform."""
        return self.backends.of(server)


@dataclass
class OpenRun:
    """The run record a ``sizing run`` stores into, and what it will say when it ends."""

    store: Store
    summary: RunSummary
    keeper: LeaseKeeper | None = None  # renews the run's leases while it lives

    @property
    def run_id(self) -> int:
        return self.summary.run_id


__all__ = ["Backends", "Config", "OpenRun", "Prepared", "RunContext", "RunState"]
