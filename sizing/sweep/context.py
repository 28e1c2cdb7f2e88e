"""What one ``sizing run`` works with, typed: bound once (:class:`RunContext`), changed as
it goes (:class:`RunState`), and the open run it stores into (:class:`OpenRun`).

The run is a list of stage functions over these (``sizing.sweep.STAGES``); no stage keeps
state of its own, and nothing is set on the context after it is bound but through its
``state``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.ceilings import HostCeilings
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory, load_inventory
from sizing.measure.context import HostHealth, MeasureContext, NullProgress, Progress
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
from sizing.sweep.options import RunOptions

Config = tuple[str, int, str]  # a point's platform configuration: (server, cores, HT)


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


@dataclass
class RunState:
    """Everything a run learns or changes while it goes, in one place.

    ``facts`` is shared with the measuring context (a booted guest's facts are added);
    ``placement``: guest -> the inventory host whose facts plan it; ``done``: the keys
    ``--resume`` leaves alone; ``stands_for``: ``--sample``'s measured server -> the
    others; ``targets``: the prepared configurations (one, or a pair's two);
    ``provisioned``: the servers whose backend prepared a point (torn down at the end);
    ``ceilings``: the crypto ceilings measured; ``reported``: broken hosts already said.
    """

    facts: dict[str, HostFacts] = field(default_factory=dict)
    placement: dict[str, str] = field(default_factory=dict)
    done: set[PointKey] = field(default_factory=set)
    stands_for: dict[str, list[str]] = field(default_factory=dict)
    prepared: Prepared | None = None  # the first stage's facts, plan and verdicts
    targets: dict[Config, Target] = field(default_factory=dict)
    provisioned: dict[str, Host] = field(default_factory=dict)
    ceilings: dict[str, HostCeilings] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)
    said_waiting: bool = False  # the store's wait for a lock was said once
    plan: list[PlannedPoint] = field(default_factory=list)  # the points this run measures
    pairs: list[Pair] = field(default_factory=list)
    ended_early: bool = False  # a dead server stopped the run: the rest is skipped


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


@dataclass
class RunContext:
    """A run's parts, bound once from its options: the inventory, Ansible, the hosts'
    health, the provisioners, what the run takes on its hosts, the measuring context, the
    backends, and the run's :class:`RunState`."""

    opts: RunOptions
    progress: Progress
    inventory: Inventory
    playbooks: Playbooks
    health: HostHealth
    nginx: NginxProvisioner
    upstream: UpstreamProvisioner
    hosts_taken: RunHosts  # locks, nginx and load to give back
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
        state = RunState()
        health = HostHealth()
        hosts_taken = RunHosts(playbooks)
        return cls(
            opts=opts,
            progress=shown,
            inventory=inventory,
            playbooks=playbooks,
            health=health,
            nginx=NginxProvisioner(playbooks),
            upstream=UpstreamProvisioner(playbooks, inventory, shown.step),
            hosts_taken=hosts_taken,
            measure=MeasureContext(
                inventory=inventory,
                settings=opts.settings,
                facts=state.facts,
                playbooks=playbooks,
                progress=shown,
                hosts=health,
                tools=ClientTools(playbooks, shown.step),
                token=make_token(),
                run_token=hosts_taken.token,
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

    @property
    def run_id(self) -> int:
        return self.summary.run_id


__all__ = ["Backends", "Config", "OpenRun", "Prepared", "RunContext", "RunState"]
