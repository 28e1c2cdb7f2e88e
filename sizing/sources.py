"""The I/O before the engine: the store's runs and figures, the cost catalog, the reference
data, chosen by ``--source``.

``recommend``, ``table`` and ``guide`` read their inputs here and nowhere else; the engine
(:mod:`sizing.engine`) and the guide's view model (:mod:`sizing.report.data`) stay pure.
Heavy imports (pydantic, YAML, SQLite) happen inside the functions so that ``sizing --help``
starts fast. This module never imports :mod:`sizing.report`: the report reads from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import paths
from sizing.errors import UsageError

if TYPE_CHECKING:
    from sizing.catalog import Reference
    from sizing.engine import CostCatalog, Selection
    from sizing.engine.basis import Basis, Choice, Hardware, Price
    from sizing.knee import Slo
    from sizing.model import Figure, Sample
    from sizing.store import RunRecord, StoredPoint


@dataclass(frozen=True)
class Sources:
    """Where to read from."""

    db: Path | None = None  # None: $SIZING_DB or results/sizing.sqlite
    catalog: Path | None = None
    runs: tuple[str, ...] = ()  # run ids, or "latest"; empty: every run


@dataclass(frozen=True)
class RunData:
    """One stored run with its points and each point's samples (by point id)."""

    record: RunRecord
    points: tuple[StoredPoint, ...]
    samples: Mapping[int, tuple[tuple[int, Sample], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Inputs:
    """What the engine sizes from: the catalog, the reference data, the chosen figures,
    the runs read (guide only) and, when nothing measured is used, why."""

    catalog: CostCatalog
    reference: Reference
    selection: Selection
    runs: tuple[RunData, ...] = ()
    note: str = ""


def db_path(db: Path | None) -> Path:
    """The results database: ``db`` when given, else the default."""
    return db if db is not None else paths.default_db()


def read_runs(db: Path, selectors: Sequence[str]) -> list[RunData]:
    """The runs the guide covers, with their points and samples.

    ``selectors`` are run ids or ``latest``; none means every run of the store. An unknown
    run is a :class:`UsageError`. A missing database holds no runs (and is not created).
    """
    if not db.is_file():
        if selectors:
            raise UsageError(f"--run {selectors[0]}: no results database at {db}")
        return []
    from sizing.store import Store

    with Store(db) as store:
        known = {r.id: r for r in store.runs()}
        ids: list[int] = []
        for sel in selectors:
            if sel == "latest":
                latest = store.latest_run_id()
                if latest is None:
                    raise UsageError(f"--run latest: {db} holds no run")
                wanted = latest
            else:
                try:
                    wanted = int(sel)
                except ValueError:
                    raise UsageError(f"--run: {sel!r} is neither a run id nor 'latest'") from None
                if wanted not in known:
                    raise UsageError(f"--run {wanted}: no such run in {db}")
            if wanted not in ids:
                ids.append(wanted)
        if not selectors:
            ids = sorted(known)
        out: list[RunData] = []
        for run_id in sorted(ids):
            points = store.points(run_id)
            samples = {p.id: tuple(store.samples(p.id)) for p in points}
            out.append(RunData(known[run_id], tuple(points), samples))
    return out


def figures_of_runs(runs: Sequence[RunData], include_emulated: bool) -> list[Figure]:
    """Valid measured figures of the given runs, newest point per configuration
    (:func:`sizing.engine.measured_figures` over the runs' points)."""
    from sizing.engine import measured_figures

    return measured_figures(
        ((p.id, p.run_id, p.result) for run in runs for p in run.points), include_emulated
    )


def store_figures(db: Path | None, include_emulated: bool) -> tuple[list[Figure], str]:
    """Valid measured figures of the whole store, and a note when there are none.

    A missing database means nothing was measured; it is not created.
    """
    path = db_path(db)
    if not path.is_file():
        return [], "nothing measured yet"
    from sizing.engine import measured_figures
    from sizing.store import Store

    with Store(path) as store:
        valid = [(p.id, p.run_id, p.result) for p in store.iter_valid()]
    figures = measured_figures(valid, include_emulated)
    if figures:
        return figures, ""
    if not include_emulated and measured_figures(valid, include_emulated=True):
        return [], "only emulated figures measured (use --include-emulated to use them)"
    return [], "nothing usable measured yet"


# -- bases ----------------------------------------------------------------------------

SIZING_PROFILES = ("rps", "tps")
# A profile's role as a basis workload role: "web" means nginx serves the file itself.
ROLES = {"web": "static", "proxy": "proxy", "api-jwt": "api-jwt"}


@dataclass(frozen=True)
class Declared:
    """What an inventory declares about one host (``sizing_price_usd``, ``sizing_cpu``,
    ``sizing_cost_ref``), as recorded with its run or read back from the inventory file."""

    price_usd: float | None = None
    cpu: Mapping[str, Any] | None = None
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


def hardware_of(facts: Mapping[str, Any] | None, declared: Declared | None = None) -> Hardware:
    """A host's hardware from its facts (``cpu_model``, ``lscpu``); the inventory's
    ``sizing_cpu`` fills what the facts lack."""
    from sizing.engine.basis import Hardware
    from sizing.errors import ToolError
    from sizing.topology import Topology

    facts = facts or {}
    model = str(facts.get("cpu_model") or "")
    sockets = cores = threads = None
    if facts.get("lscpu"):
        try:
            topo = Topology.from_lscpu(str(facts["lscpu"]))
        except ToolError:
            topo = None
        if topo is not None:
            sockets = topo.sockets
            cores = len(topo.physical_cores()) // max(1, topo.sockets)
            threads = topo.threads_per_core
    cpu = declared.cpu if declared is not None else None
    if cpu:
        model = model or str(cpu.get("model") or "")
        if sockets is None:
            sockets = int(cpu.get("sockets", 1))
            cores = int(cpu["cores_per_socket"])
            threads = int(cpu.get("threads_per_core", 1))
    return Hardware(model, sockets, cores, threads)


def _profile_field(name: str, attr: str, default: Any) -> Any:
    """A bundled profile's field (the profile YAML where a point's metadata lacks it)."""
    from sizing import profiles
    from sizing.errors import SizingError

    try:
        return getattr(profiles.load(name), attr)
    except (SizingError, OSError):
        return default


def _workload_of(profile: str, meta: Mapping[str, Any]) -> tuple[str, int, bool]:
    """(role, file size, keepalive) of a point: metadata first, then the profile."""
    role = meta.get("role") or _profile_field(profile, "role", "web")
    size = meta.get("file_size") or _profile_field(profile, "file_size", 128)
    keepalive = meta.get("keepalive")
    if keepalive is None:
        keepalive = _profile_field(profile, "keepalive", profile != "tps")
    return ROLES.get(str(role), str(role)), int(size), bool(keepalive)


def physical_host(host: str, platform: str, meta: Mapping[str, Any]) -> str:
    """The machine a point ran on: a guest's hypervisor host, else the host itself."""
    settings = meta.get("platform_settings") or {}
    if platform == "libvirt" and settings.get("hypervisor"):
        return str(settings["hypervisor"])
    if platform == "vsphere" and settings.get("esxi_host"):
        return str(settings["esxi_host"])
    return host


def repetition_values(samples: Sequence[tuple[int, Sample]]) -> list[float]:
    """The timed repetitions' aggregate figures of a throughput point (not the warm-up,
    not the per-client samples)."""
    return [
        s.value
        for rep, s in samples
        if rep >= 1 and not s.metric.endswith(".client") and not s.metadata.get("warmup")
    ]


def median_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% interval of the median of ``values`` (:func:`sizing.engine.intervals.
    median_interval`); None with fewer than two values."""
    if len(values) < 2:
        return None
    from sizing.engine.intervals import median_interval

    found: tuple[float, float] | None = median_interval(list(values), 0.95)
    return found


def measured_bases(
    runs: Sequence[RunData], declared: Mapping[str, Declared] | None = None
) -> list[Basis]:
    """Every measured basis of the given runs (see the module docstring).

    A basis is one host × basis platform × hardware × software × workload (× emulated);
    its figures are the newest valid point per (profile, cores, HT), with the 95% interval
    of the median from the point's stored repetitions. Guests take the hardware of their
    physical host when that host's facts are known.
    """
    from sizing.engine.basis import Basis, Workload
    from sizing.model import Figure, Status, basis_platform

    declared = declared or {}
    facts_of: dict[str, Mapping[str, Any]] = {}
    for run in sorted(runs, key=lambda r: r.record.id):
        for host, facts in run.record.environment.items():
            if isinstance(facts, Mapping) and (facts.get("lscpu") or facts.get("cpu_model")):
                facts_of[host] = facts

    Key = tuple[str, str, "Hardware", str, str, str, int, bool]
    groups: dict[Key, dict[str, Any]] = {}
    for run in runs:
        env = run.record.environment
        for p in run.points:
            r = p.result
            if r.key.profile not in SIZING_PROFILES:
                continue
            if r.status is not Status.MEASURED or r.value is None:
                continue
            meta = r.metadata
            host = r.key.host
            platform = basis_platform(r.key.platform, r.flags)
            phys = physical_host(host, r.key.platform, meta)
            facts = env.get(host) if isinstance(env.get(host), Mapping) else {}
            hw_facts = facts_of.get(phys) if phys != host and phys in facts_of else facts
            hardware = hardware_of(hw_facts, declared.get(phys) or declared.get(host))
            if phys != host and phys not in facts_of:
                hardware = hardware_of({"cpu_model": (facts or {}).get("cpu_model")})
            software = software_label(
                meta.get("nginx_version") or (facts or {}).get("nginx_version"),
                meta.get("openssl_version")
                or (facts or {}).get("nginx_openssl")
                or (facts or {}).get("openssl_version"),
            )
            role, size, keepalive = _workload_of(r.key.profile, meta)
            emulated = "emulated" in r.flags
            # RPS figures carry keepalive; TPS ones never do: the basis keeps the RPS one.
            key: Key = (host, platform, hardware, software, phys, role, size, emulated)
            g = groups.setdefault(key, {"keepalive": True, "tls_keys": set(), "slots": {}})
            if r.key.profile == "rps":
                g["keepalive"] = keepalive
            else:
                g["tls_keys"].add(
                    str(meta.get("tls_key") or _profile_field(r.key.profile, "tls_key", None) or "")
                )
            slot = (r.key.profile, r.key.cores, r.key.ht)
            old = g["slots"].get(slot)
            if old is None or old[0].id <= p.id:
                g["slots"][slot] = (p, run)

    out: list[Basis] = []
    ids: set[str] = set()
    for key, g in groups.items():
        host, platform, hardware, software, phys, role, size, emulated = key
        figures = []
        for (profile, cores, ht), (p, run) in sorted(g["slots"].items()):
            r = p.result
            ci = median_ci(repetition_values(run.samples.get(p.id, ())))
            figures.append(
                Figure(
                    platform=platform,
                    cores=cores,
                    ht=ht,
                    profile=profile,
                    value=float(r.value),
                    unit=r.unit,
                    source="measured",
                    origin=f"run {p.run_id}, {host}",
                    emulated="emulated" in r.flags,
                    ci_low=None if ci is None else ci[0],
                    ci_high=None if ci is None else ci[1],
                    flags=tuple(r.flags),
                )
            )
        keys = sorted(k for k in g["tls_keys"] if k)
        workload = Workload(
            role=role,
            file_size=size,
            tls_key=keys[0] if len(keys) == 1 else "/".join(keys),
            keepalive=g["keepalive"],
        )
        slug = f"{role}-{size}b" if size < 1024 or size % 1024 else f"{role}-{size // 1024}k"
        basis_id = f"{host}/{platform}/{slug}" + ("-emulated" if emulated else "")
        runs_of = tuple(sorted({p.run_id for p, _ in g["slots"].values()}))
        if basis_id in ids:  # same host and workload, other hardware or software
            basis_id += f"@run{runs_of[0]}"
        ids.add(basis_id)
        figs = tuple(replace(f, basis=basis_id) for f in figures)
        flags = [f for f in ("emulated", "virtualized-host") if all(f in x.flags for x in figs)]
        if platform == "virtualized-host" and "virtualized-host" not in flags:
            flags.append("virtualized-host")
        out.append(
            Basis(
                id=basis_id,
                origin="measured",
                platform=platform,
                hardware=hardware,
                workload=workload,
                software=software,
                physical_host=phys,
                hosts=(host,),
                runs=runs_of,
                figures=figs,
                flags=tuple(flags),
            )
        )
    return sorted(out, key=lambda b: b.id)


def reference_bases(reference: Reference) -> list[Basis]:
    """The bundled reference data as bases: ``reference/baremetal`` and ``reference/esxi``
    (one group: the same testbed) and ``reference/kubernetes``."""
    from sizing.catalog import REFERENCE_BASES
    from sizing.engine.basis import Basis, Hardware, Workload

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
                origin="reference",
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


def declared_of(runs: Sequence[RunData]) -> dict[str, Declared]:
    """What the inventories declared per host: the run record's ``declared`` entry
    (``environment[host]["declared"]``, written by the sweep), else the run's inventory
    file when it still exists (read offline, never connected to). Newest run wins."""
    out: dict[str, Declared] = {}
    for run in sorted(runs, key=lambda r: r.record.id):
        rec = run.record
        recorded = {
            h: f["declared"]
            for h, f in rec.environment.items()
            if isinstance(f, Mapping) and isinstance(f.get("declared"), Mapping)
        }
        if recorded:
            for h, d in recorded.items():
                out[h] = Declared(
                    price_usd=d.get("sizing_price_usd"),
                    cpu=d.get("sizing_cpu"),
                    cost_ref=d.get("sizing_cost_ref"),
                    where=f"run {rec.id}",
                )
            continue
        out.update(_declared_from_inventory(rec.inventory))
    return out


def _declared_from_inventory(inventory: str) -> dict[str, Declared]:
    """Fallback for runs recorded before the sweep kept what the inventory declares."""
    if not inventory:
        return {}
    path = Path(inventory)
    if not path.is_file() and not path.is_absolute():
        path = paths.INVENTORIES / path.name
    if not path.is_file():
        return {}
    from sizing.errors import SizingError

    try:
        from sizing.inventory import load_inventory

        inv = load_inventory(path)
    except (SizingError, OSError, ValueError):
        return {}
    out: dict[str, Declared] = {}
    for h in inv.hosts.values():
        v = h.sizing
        if v.price_usd is None and v.cpu is None and not v.cost_ref:
            continue
        out[h.name] = Declared(
            price_usd=v.price_usd,
            cpu=None if v.cpu is None else v.cpu.model_dump(),
            cost_ref=v.cost_ref,
            where=f"inventory {inventory}",
        )
    return out


def basis_prices(
    bases: Sequence[Basis],
    declared: Mapping[str, Declared],
    catalog_data: Mapping[str, Any] | None,
    catalog_name: str = "",
) -> dict[str, Price]:
    """The price of each measured basis that has one of its own: the inventory's
    ``sizing_price_usd`` of its physical host (one server at its physical core count),
    else the catalog entries whose ``cpu_model`` matches its CPU. Reference bases and
    unpriced measured ones are left to the engine (the catalog, or --article-prices)."""
    from sizing.catalog import cpu_offers
    from sizing.engine.basis import Price
    from sizing.engine.costs import ServerOffer

    out: dict[str, Price] = {}
    for b in bases:
        if b.origin != "measured":
            continue
        for host in (b.physical_host, *b.hosts):
            d = declared.get(host)
            if d is None or d.price_usd is None:
                continue
            cores = b.hardware.physical_cores
            if cores is None and d.cpu:
                cores = int(d.cpu.get("sockets", 1)) * int(d.cpu["cores_per_socket"])
            if cores is None:
                continue
            sockets = b.hardware.sockets or 1
            out[b.id] = Price(
                f"inventory sizing_price_usd of {host} ({d.where})",
                (ServerOffer(cores=cores, price=float(d.price_usd), sockets=sockets, name=host),),
            )
            break
        if b.id in out or catalog_data is None:
            continue
        offers = cpu_offers(catalog_data, b.hardware.cpu_model)
        if offers:
            name = catalog_name or str(catalog_data.get("name") or "catalog")
            out[b.id] = Price(f"catalog {name} matched to {b.hardware.cpu_model}", offers)
    return out


def load_bases(
    where: Sources,
    *,
    requested: Sequence[str] | None = None,
    source: str = "both",
    include_virtualized: bool = False,
    include_emulated: bool = False,
    article_prices: bool = False,
    with_runs: bool = False,
) -> BasisInputs:
    """Read the store, the catalog and the reference data; build every basis; choose.

    ``source``: ``reference`` offers only the reference bases, ``measured`` only the
    measured ones (none qualifying is a :class:`UsageError`), ``both`` the default choice
    (:func:`sizing.engine.basis.choose`). ``requested`` (``--basis``) picks by id.
    ``with_runs`` (the guide): the runs ``where.runs`` selects are read and returned, and
    the bases come from them; otherwise from every run of the store. An explicit
    ``--catalog`` counts as asking for its prices on measured bases (``article_prices``).
    """
    from sizing.catalog import load_catalog, load_catalog_data, load_reference
    from sizing.engine.basis import choose

    catalog = load_catalog(where.catalog)
    catalog_data = load_catalog_data(where.catalog)
    reference = load_reference()
    runs: list[RunData] = []
    note = ""
    if source != "reference":
        path = db_path(where.db)
        runs = read_runs(path, where.runs if with_runs else ())
        if not runs:
            note = "nothing measured yet"
    measured = measured_bases(runs, declared_of(runs)) if runs else []
    if runs and not measured:
        note = "nothing usable measured yet"
    refs = reference_bases(reference)
    prices = basis_prices(measured, declared_of(runs) if runs else {}, catalog_data)
    measured = [replace(b, price=prices.get(b.id)) for b in measured]
    offered: list[Basis]
    if source == "reference":
        offered = refs
    elif source == "measured":
        offered = measured
    else:
        offered = measured + refs
    if not offered:
        raise UsageError(
            "--source measured, but nothing usable is measured yet "
            "(run `sizing run`, or use --source reference)"
        )
    choice = choose(
        offered,
        list(requested) if requested else None,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
    )
    if (
        source == "measured"
        and not requested
        and not any(b.origin == "measured" for b in choice.bases)
    ):
        why = "; ".join(f"{i}: {r}" for i, r in choice.passed_over) or "nothing measured"
        raise UsageError(
            f"--source measured, but no measured basis qualifies ({why}); name one with "
            "--basis, or pass --include-virtualized / --include-emulated"
        )
    if note and not any(b.origin == "measured" for b in choice.bases):
        choice = replace(choice, why=f"{choice.why} ({note})")
    return BasisInputs(
        bases=tuple(measured + refs),
        choice=choice,
        prices=prices,
        catalog=catalog,
        reference=reference,
        article_prices=article_prices or where.catalog is not None,
        runs=tuple(runs) if with_runs else (),
        note=note,
    )


def load_selection(
    source: str, where: Sources, include_emulated: bool, *, with_runs: bool = False
) -> Inputs:
    """Catalog, reference figures and measured figures, chosen by ``source``
    (:func:`sizing.engine.select`).

    ``with_runs`` (the guide): the measured figures are those of the runs ``where.runs``
    selects, which are read whole (points and samples) and returned; else (``recommend``,
    ``table``) those of the whole store. With ``source`` ``reference`` the store is not read.
    """
    from sizing.catalog import load_catalog, load_reference
    from sizing.engine import select

    catalog = load_catalog(where.catalog)
    reference = load_reference()
    measured: list[Figure] = []
    runs: list[RunData] = []
    note = ""
    if source != "reference":
        if with_runs:
            runs = read_runs(db_path(where.db), where.runs)
            measured = figures_of_runs(runs, include_emulated)
        else:
            measured, note = store_figures(where.db, include_emulated)
    selection = select(measured, reference.figures, source)
    return Inputs(catalog, reference, selection, tuple(runs), note)


def latency_figures(
    figures: Sequence[Figure], slo: Slo, db: Path | None, include_emulated: bool
) -> tuple[tuple[Figure, ...], list[Figure]]:
    """``--p95``: ``figures`` with their rps figures replaced by the measured
    RPS-under-``slo`` figures of the store (:func:`sizing.engine.slo.slo_figures`); and
    those figures. No valid latency point is a :class:`UsageError`."""
    from sizing.engine.slo import slo_figures
    from sizing.store import Store

    path = db_path(db)
    found: list[Figure] = []
    if path.is_file():
        with Store(path) as store:
            found = slo_figures(
                ((p.run_id, p.result) for p in store.iter_valid()),
                slo,
                include_emulated=include_emulated,
            )
    if not found:
        raise UsageError(
            f"--p95: no valid latency measurement in {path} (run `sizing run --profile "
            f"latency --slo p95={slo.limit_ms:g}ms`); reference data has no latency figures"
        )
    return tuple(f for f in figures if f.profile != "rps") + tuple(found), found


def nginx_template() -> str:
    """The nginx configuration template's text (the guide's methodology quotes its fixed
    directives); empty when it cannot be read."""
    try:
        return (paths.TEMPLATES / "nginx.conf.j2").read_text(encoding="utf-8")
    except OSError:
        return ""
