"""Sizing bases from the store and the reference data (issue 12): what one measured
basis is (host, platform, hardware, workload, software, physical host), its figures with
the 95% interval of their median, what its inventory declared, and its price.

Pure functions over :class:`sizing.sources.RunData`; :func:`sizing.sources.load_bases`
does the reading.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import paths
from sizing.catalog import REFERENCE_BASES
from sizing.ceilings import Bound, HostCeilings, crypto_bound, nic_bound
from sizing.engine.basis import Basis, Hardware, Workload
from sizing.errors import SizingError, ToolError
from sizing.intervals import interval_words, median_coverage, median_interval, repetition_flags
from sizing.load import DEFAULT_GENERATOR
from sizing.model import Figure, FigureKind, SizingMetric, Status, basis_platform, client_floor
from sizing.profile_facts import ProfileFacts, bundled_facts, facts_of
from sizing.records import DeclaredCpu, HostRecord, PointMeta
from sizing.sources.pooling import combine, pool_hosts
from sizing.topology import Topology

if TYPE_CHECKING:
    from sizing.catalog import Reference
    from sizing.engine import CostCatalog
    from sizing.engine.basis import Basis, Hardware, Price
    from sizing.engine.choice import Choice
    from sizing.model import Figure
    from sizing.sources.rundata import RunData
    from sizing.store import StoredPoint


# A profile's role as a basis workload role: "web" means nginx serves the file itself.
ROLES = {"web": "static", "load-balance": "load-balance", "proxy": "proxy", "api-jwt": "api-jwt"}


@dataclass(frozen=True)
class Declared:
    """What an inventory declares about one host (``sizing_price_usd``, ``sizing_cpu``,
    ``sizing_cost_ref``), as recorded with its run or read back from the inventory file."""

    price_usd: float | None = None
    cpu: DeclaredCpu | None = None
    cost_ref: str | None = None
    where: str = ""  # "run 3" | "inventory inventories/lab.yml"


@dataclass(frozen=True)
class BasisInputs:
    """What ``recommend``, ``table`` and ``guide`` size from: every basis (measured and
    reference), the chosen ones and why, the prices found, the catalog and the reference."""

    bases: tuple[Basis, ...]
    choice: Choice
    prices: Mapping[str, Price]
    catalog: CostCatalog
    reference: Reference
    article_prices: bool
    runs: tuple[RunData, ...] = ()
    note: str = ""
    inventories: Mapping[int, str] = field(default_factory=dict)  # run id -> its inventory
    # (run id, host) of every server that was its own load generator in that run (the
    # bundled local inventory): kept without ``runs``, so recommend's hints can say it
    own_clients: frozenset[tuple[int, str]] = frozenset()

    @property
    def chosen(self) -> tuple[Basis, ...]:
        return self.choice.bases


def software_label(nginx: Any, openssl: Any) -> str:
    """``nginx 1.22, OpenSSL 3.0``: major.minor of each, what is known."""
    parts = []
    for name, v in (("nginx", nginx), ("OpenSSL", openssl)):
        if v:
            parts.append(f"{name} {'.'.join(str(v).split('.')[:2])}")
    return ", ".join(parts)


def hardware_of(facts: HostRecord | None, declared: Declared | None = None) -> Hardware:
    """A host's hardware from its facts (``cpu_model``, ``lscpu``); the inventory's
    ``sizing_cpu`` fills what the facts lack."""
    facts = facts or HostRecord()
    model = facts.cpu_model or ""
    sockets = cores = threads = None
    if facts.lscpu:
        got = _lscpu_shape(facts.lscpu)
        if got is not None:
            sockets, cores, threads = got
    cpu = declared.cpu if declared is not None else None
    if cpu is not None:
        model = model or cpu.model or ""
        if sockets is None and cpu.cores_per_socket is not None:
            sockets = cpu.sockets or 1
            cores = cpu.cores_per_socket
            threads = cpu.threads_per_core or 1
    return Hardware(model, sockets, cores, threads)


@functools.lru_cache(maxsize=64)
def _lscpu_shape(lscpu: str) -> tuple[int, int, int] | None:
    """(sockets, cores per socket, threads per core) of an ``lscpu`` text, None where it
    cannot be read; once per distinct text (every point of a host stores the same one, and
    recommend reads them all)."""
    try:
        topo = Topology.from_lscpu(lscpu)
    except ToolError:
        return None
    return topo.sockets, len(topo.physical_cores()) // max(1, topo.sockets), topo.threads_per_core


def sizing_metric(profile: str) -> SizingMetric | None:
    """How a bundled profile sizes: its ``metric:``
    (:attr:`sizing.profiles.Profile.sizing_metric`: the load-balancing rps/tps, the
    static-file variants and the gateways', their role keeping them apart); None when it
    sizes nothing or is not a bundled profile. A stored point sizes by its run's own
    definition first (:func:`stored_profiles`)."""
    return _bundled_metric(paths.PROFILES, profile)


@functools.cache
def _bundled_metric(root: Path, profile: str) -> SizingMetric | None:
    # once per profiles folder and name: every stored point asks, the YAML does not change
    if not (root / f"{profile}.yml").is_file():
        return None
    try:
        return bundled_facts(profile).sizing_metric
    except (SizingError, OSError):
        return None


def stored_profiles(run: RunData) -> dict[str, ProfileFacts]:
    """What sizes of the profiles a run measured, as its options stored them
    (``profile_defs``): a user's own profile file, or a bundled one as it was then. One
    that no longer validates is left out (its points size by the bundled profile of its
    name). Read without pydantic where the document is certainly valid
    (:mod:`sizing.profile_facts`)."""
    out: dict[str, ProfileFacts] = {}
    for doc in run.record.options.profile_defs or ():
        prof = facts_of(doc.to_json())
        if prof is not None:
            out[prof.name] = prof
    return out


def _metric_of(defs: Mapping[str, ProfileFacts], profile: str) -> SizingMetric | None:
    got = defs.get(profile)
    return got.sizing_metric if got is not None else sizing_metric(profile)


def _profile_field(
    name: str, attr: str, default: Any, defs: Mapping[str, ProfileFacts] | None = None
) -> Any:
    """A profile's field, the run's stored definition first, else the bundled profile's
    (where a point's metadata lacks it)."""
    if defs and name in defs:
        return getattr(defs[name], attr)
    try:
        return getattr(bundled_facts(name), attr)
    except (SizingError, OSError):
        return default


def _workload_of(
    profile: str, meta: PointMeta, defs: Mapping[str, ProfileFacts]
) -> tuple[str, int, bool]:
    """(role, file size, keepalive) of a point (older records were completed by the store's
    migration: :func:`sizing.store.upgrade_point_record`)."""
    w = meta.workload
    role = w.role or _profile_field(profile, "role", "web", defs)
    size = w.file_size or _profile_field(profile, "file_size", 128, defs)
    keepalive = w.keepalive
    if keepalive is None:
        tps = _metric_of(defs, profile) is SizingMetric.TPS
        keepalive = _profile_field(profile, "keepalive", not tps, defs)
    return ROLES.get(str(role), str(role)), int(size), bool(keepalive)


def measured_figure(
    r: Any, reps: Sequence[float], platform: str, profile: str, origin: str
) -> Figure:
    """The engine's figure of one stored point: its median, the distribution-free interval
    of the median with its true coverage (:mod:`sizing.intervals`), its repetitions,
    its ``drift`` flag as the store decided it across the run, and ``erratic`` when a
    repetition is far from the others (stored before that flag existed)."""
    ci = median_interval(reps)
    extra, _ = repetition_flags(reps)
    pair = r.metadata.pair
    return Figure(
        pair=pair.id if pair else "",
        pair_ratios=pair.ratios if pair else (),
        pair_role=pair.role if pair else "",
        pair_c_ratios=pair.c_ratios if pair else (),
        platform=platform,
        cores=r.key.cores,
        ht=r.key.ht,
        profile=profile,
        value=float(r.value),
        unit=r.unit,
        source=FigureKind.MEASURED,
        origin=origin,
        emulated="emulated" in r.flags,
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        flags=tuple(dict.fromkeys((*r.flags, *extra))),
        reps=tuple(float(v) for v in reps),
        coverage=median_coverage(len(reps)) if len(reps) >= 2 else None,
        interval=interval_words(len(reps)),
        bound="lower" if client_floor(r) else "",
    )


# host, basis platform, hardware, software, physical host, role, file size, emulated and
# the generator ("" for the default one: sizing.load.DEFAULT_GENERATOR)
GroupKey = tuple[str, str, "Hardware", str, str, str, int, bool, str, str]


@dataclass
class _Group:
    """One measured basis' points as they are read: per (profile, cores, HT) the points of
    every run, the TLS keys, the RPS points' keepalive, the newest crypto ceiling of its
    host and the records of each series (their NIC bound)."""

    keepalive: bool = True
    tls_keys: set[str] = field(default_factory=set)
    slots: dict[tuple[str, int, str], list[tuple[StoredPoint, RunData]]] = field(
        default_factory=dict
    )
    ceiling: HostCeilings | None = None
    ceiling_run: int = -1
    metas: dict[tuple[str, str], list[tuple[PointMeta, float | None]]] = field(default_factory=dict)


def measured_bases(
    runs: Sequence[RunData], declared: Mapping[str, Declared] | None = None
) -> list[Basis]:
    """Every measured basis of the given runs (see the module docstring).

    A basis is one host × basis platform × hardware × software × workload (× emulated);
    its figures are the newest valid point per (profile, cores, HT), with the 95% interval
    of the median from the point's stored repetitions. Guests take the hardware of their
    physical host when that host's facts are known.
    """
    groups = _groups(runs, declared or {})
    out: list[Basis] = []
    ids: set[str] = set()
    for key, g in groups.items():
        out.append(_basis(key, g, ids))
    return sorted(pool_hosts(out), key=lambda b: b.id)


def _groups(runs: Sequence[RunData], declared: Mapping[str, Declared]) -> dict[GroupKey, _Group]:
    """The valid sizing points of the runs, grouped by basis."""
    facts_of: dict[str, HostRecord] = {}
    for run in sorted(runs, key=lambda r: r.record.id):
        for host, facts in run.record.environment.items():
            if facts.lscpu or facts.cpu_model:
                facts_of[host] = facts
    groups: dict[GroupKey, _Group] = {}
    for run in runs:
        env = run.record.environment
        defs = stored_profiles(run)
        for p in run.points:
            r = p.result
            sized = _metric_of(defs, r.key.profile)
            usable = r.status is Status.MEASURED or client_floor(r)
            if sized is None or not usable or r.value is None:
                continue
            metric = sized.value  # the engine's profile of the figure
            meta = r.metadata
            host = r.key.host
            phys = meta.env.physical_host(host, r.key.platform)
            facts = env.get(host) or HostRecord()
            hw_facts = facts_of.get(phys) if phys != host and phys in facts_of else facts
            hardware = hardware_of(hw_facts, declared.get(phys) or declared.get(host))
            if phys != host and phys not in facts_of:
                hardware = hardware_of(HostRecord(cpu_model=facts.cpu_model))
            software = software_label(
                meta.env.nginx_version or facts.nginx_version,
                meta.env.openssl_version or facts.nginx_build_openssl,
            )
            role, size, keepalive = _workload_of(r.key.profile, meta, defs)
            # RPS figures carry keepalive; TPS ones never do: the basis keeps the RPS one.
            key: GroupKey = (
                host,
                basis_platform(r.key.platform, r.flags),
                hardware,
                software,
                phys,
                role,
                size,
                "emulated" in r.flags,
                _generator(meta),
                meta.workload.customer or "",  # a replayed customer workload: its own basis
            )
            g = groups.setdefault(key, _Group())
            if phys == host and run.record.id >= g.ceiling_run:
                got = HostCeilings.of(facts)  # a guest's own ceiling is not measured
                if got is not None:
                    g.ceiling, g.ceiling_run = got, run.record.id
            g.metas.setdefault((metric, r.key.ht), []).append((meta, r.value))
            if sized is SizingMetric.RPS:
                g.keepalive = keepalive
            else:
                g.tls_keys.add(
                    str(
                        meta.workload.tls_key
                        or _profile_field(r.key.profile, "tls_key", None, defs)
                        or ""
                    )
                )
            g.slots.setdefault((metric, r.key.cores, r.key.ht), []).append((p, run))
    return groups


def _generator(meta: PointMeta) -> str:
    """The generator that measured a point, "" for the default one (every point
    stored before the tool was recorded ran it)."""
    return "" if meta.env.tool in (None, DEFAULT_GENERATOR) else str(meta.env.tool)


def _basis(key: GroupKey, g: _Group, ids: set[str]) -> Basis:
    """One measured basis from its group (``ids``: those given so far, kept unique)."""
    host, platform, hardware, software, phys, role, size, emulated, generator, customer = key
    figures = []
    for (profile, _cores, _ht), entries in sorted(g.slots.items(), key=lambda kv: kv[0]):
        exact = [e for e in entries if not client_floor(e[0].result)]
        entries = exact or entries  # a figure measured whole replaces the lower bounds
        per_run = [
            measured_figure(
                p.result,
                run.timed(p.id),
                platform,
                profile,
                f"run {p.run_id}, {host}",
            )
            for p, run in sorted(entries, key=lambda e: e[0].id)
        ]
        figures.append(combine(per_run, "run"))
    keys = sorted(k for k in g.tls_keys if k)
    workload = Workload(
        role=role,
        file_size=size,
        keepalive=g.keepalive,
        tls_key=keys[0] if len(keys) == 1 else "/".join(keys),
        generator=generator,
        customer=customer,
    )
    slug = f"{role}-{size}b" if size < 1024 or size % 1024 else f"{role}-{size // 1024}k"
    slug = customer or slug + (f"-{generator}" if generator else "")
    basis_id = f"{host}/{platform}/{slug}" + ("-emulated" if emulated else "")
    runs_of = tuple(sorted({p.run_id for e in g.slots.values() for p, _ in e}))
    if basis_id in ids:  # same host and workload, other hardware or software
        basis_id += f"@run{runs_of[0]}"
    ids.add(basis_id)
    figs = tuple(replace(f, basis=basis_id) for f in figures)
    bounds: list[Bound] = []
    for (metric, ht), metas in sorted(g.metas.items(), key=lambda kv: kv[0]):
        if metric == SizingMetric.TPS and len(keys) == 1:
            c = crypto_bound(metric, ht, keys[0], g.ceiling)
            if c is not None:
                bounds.append(c)
        n = nic_bound(metric, ht, metas)
        if n is not None:
            bounds.append(n)
    # simulated: an example store's made-up figures (examples/simulated.py), said as such
    shared = ("emulated", "virtualized-host", "simulated")
    flags = [f for f in shared if all(f in x.flags for x in figs)]
    if platform == "virtualized-host" and "virtualized-host" not in flags:
        flags.append("virtualized-host")
    return Basis(
        id=basis_id,
        origin=FigureKind.MEASURED,
        platform=platform,
        hardware=hardware,
        workload=workload,
        software=software,
        physical_host=phys,
        hosts=(host,),
        runs=runs_of,
        figures=figs,
        flags=tuple(flags),
        bounds=tuple(bounds),
    )


def reference_bases(reference: Reference) -> list[Basis]:
    """The bundled reference data as bases: ``reference/baremetal`` and ``reference/esxi``
    (one group: the same testbed) and ``reference/kubernetes``."""
    cpu = reference.hardware.get("cpu_model", "")
    system = reference.hardware.get("system", "")
    # The source names its servers, not their CPU: the label says so.
    hardware = Hardware(cpu or (f"{system} (CPU model not stated)" if system else ""))
    platforms = {"baremetal": "baremetal", "hypervisor": "esxi", "kubernetes": "kubernetes"}
    out: list[Basis] = []
    for table_platform, (arch, basis_id) in REFERENCE_BASES.items():
        figs = tuple(
            replace(f, platform=platforms[table_platform])
            for f in reference.figures
            if f.basis == basis_id
        )
        if not figs:
            continue
        w = reference.workloads.get(arch) or {}
        out.append(
            Basis(
                id=basis_id,
                origin=FigureKind.REFERENCE,
                platform=platforms[table_platform],
                hardware=hardware,
                workload=Workload(
                    role=str(w.get("role", "load-balance")),
                    file_size=int(w.get("file_size", 128)),
                    tls_key=str(w.get("tls_key", "")),
                    protocol=str(w.get("protocol", "HTTP/1.1")),
                    keepalive=True,
                ),
                software=reference.software.get(arch, ""),
                physical_host=f"reference testbed ({arch})",
                figures=figs,
                citation=reference.citation(),
            )
        )
    return out
