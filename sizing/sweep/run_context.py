"""What one ``sizing run`` works with, typed: bound once (:class:`RunContext`), what its
stages make (:class:`Sweep`, a value), what it holds on the hosts until it ends
(:class:`RunLedger`), and the open run it stores into (:class:`OpenRun`).

The run is a list of stage functions (``sizing.sweep.STAGES``; the dry run is its first
stage alone), each given the :class:`Sweep` so far and returning the next one
(``dataclasses.replace``): the facts, the plan, the pairs and the crypto ceilings pass from
stage to stage by value, never changed in place, so a stage can be read, tested and
reordered on its own (esrally's pipeline over a context it does not mutate). The context
is frozen. What is not a product but a holding (the locks, nginx and load the run must
give back, the platforms it prepared, the hosts found broken) is the ledger's: the end
gives it back whichever way the stages stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TypeVar

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


K = TypeVar("K")
V = TypeVar("V")


def frozen_map(items: Mapping[K, V] | None = None) -> Mapping[K, V]:
    """A read-only copy of ``items``: a :class:`Sweep`'s mappings are values too."""
    return MappingProxyType(dict(items or {}))


@dataclass(frozen=True)
class Sweep:
    """What the stages have made so far, a value: each stage returns a new one.

    ``done``: the keys ``--resume`` leaves alone (read before the first stage);
    ``prepared``: the first stage's verdicts; ``facts``: every host's facts it read;
    ``placement``: guest -> the inventory host whose facts plan it; ``planned``: every
    point of the plan; ``stands_for``: ``--sample``'s measured server -> the others;
    ``plan``: the points this run measures and ``pairs`` the legs measured together
    (the second stage's); ``ceilings``: the crypto ceilings each point is checked against
    (the third's); ``ended_early``: a dead server stopped the measuring (the fourth's).
    """

    done: frozenset[PointKey] = frozenset()
    prepared: Prepared | None = None
    facts: Mapping[str, HostFacts] = field(default_factory=frozen_map)
    placement: Mapping[str, str] = field(default_factory=frozen_map)
    planned: tuple[PlannedPoint, ...] = ()
    stands_for: Mapping[str, tuple[str, ...]] = field(default_factory=frozen_map)
    plan: tuple[PlannedPoint, ...] = ()
    pairs: tuple[Pair, ...] = ()
    ceilings: Mapping[str, HostCeilings] = field(default_factory=frozen_map)
    ended_early: bool = False

    @property
    def todo(self) -> list[PlannedPoint]:
        """The planned points left to measure (``--resume`` leaves out the stored ones)."""
        return [p for p in self.planned if p.key not in self.done]


@dataclass
class RunLedger:
    """What the run holds until it ends, not what its stages make: given back by the end
    whichever way the stages stop.

    ``hosts_taken``: the locks, nginx and load to give back; ``health``: the hosts found
    broken while measuring (their later points fail fast); ``targets``: the prepared
    configurations (one, or a pair's two); ``provisioned``: the servers whose backend
    prepared a point (torn down at the end); ``reported``: broken hosts already said;
    ``said_waiting``: the store's wait for a lock was said once.
    """

    hosts_taken: RunHosts
    health: HostHealth = field(default_factory=HostHealth)
    targets: dict[Config, Target] = field(default_factory=dict)
    provisioned: dict[str, Host] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)
    said_waiting: bool = False


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
    provisioners, the measuring context (its facts are the first stage's:
    :meth:`measuring`), the backends, and the run's :class:`RunLedger` (what it holds)."""

    opts: RunOptions
    progress: Progress
    inventory: Inventory
    playbooks: Playbooks
    nginx: NginxProvisioner
    upstream: UpstreamProvisioner
    measure: MeasureContext
    backends: Backends
    ledger: RunLedger

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
        ledger = RunLedger(hosts_taken=RunHosts(playbooks))
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
                facts=frozen_map(),  # none read yet: measuring() gives the sweep's
                playbooks=playbooks,
                progress=shown,
                hosts=ledger.health,
                tools=ClientTools(playbooks, shown.step),
                token=make_token(),
                run_token=ledger.hosts_taken.token,
            ),
            backends=Backends(opts, inventory, shown),
            ledger=ledger,
        )

    def measuring(self, sweep: Sweep) -> MeasureContext:
        """The measuring context with the facts the first stage read."""
        return replace(self.measure, facts=sweep.facts)

    def backend(self, server: Host) -> Backend:
        """The backend of ``server``'s platform."""
        return self.backends.of(server)


@dataclass
class OpenRun:
    """The run record a ``sizing run`` stores into, and what it will say when it ends."""

    store: Store
    summary: RunSummary
    keeper: LeaseKeeper | None = None  # renews the run's leases while it lives
    done: frozenset[PointKey] = frozenset()  # --resume: the points stored before

    @property
    def run_id(self) -> int:
        return self.summary.run_id


__all__ = [
    "Backends",
    "Config",
    "OpenRun",
    "Prepared",
    "RunContext",
    "RunLedger",
    "Sweep",
    "frozen_map",
]
