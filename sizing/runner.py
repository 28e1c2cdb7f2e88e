"""The sweep: gather facts, plan, provision NGINX, run load windows, store every point.

``run_sweep`` is the one core function behind ``sizing run``. It never raises for a point
that cannot be measured: the point is stored as skipped or failed with its reason. It
raises :class:`SizingError` for what stops the whole run (bad options, every server
unreachable) and :class:`Interrupted` on Ctrl-C, after marking the run interrupted; every
point finished before that is already committed.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sizing import __version__, apigw, fixedrate
from sizing.apigw import make_token
from sizing.dryrun import plan_document
from sizing.errors import (
    HostError,
    InputError,
    Interrupted,
    SizingError,
    ToolError,
    UsageError,
)
from sizing.inventory import Host, Inventory, load_inventory
from sizing.load import wrk
from sizing.loadplan import client_wrk_spec
from sizing.model import SERVER_DIED, Ht, Platform, PointKey, PointResult, Sample, Status
from sizing.multihost import multihost_extras
from sizing.plan import PlannedPoint, build_plan
from sizing.platforms import INVENTORY_PLACEHOLDER, Backend, BackendOptions, Target, backend_for
from sizing.platforms import host_topology as platform_host_topology
from sizing.platforms import skip_reason as platform_skip_reason
from sizing.preflight import PreflightError, preflight
from sizing.profiles import Profile
from sizing.provision import run_playbook
from sizing.store import Store
from sizing.topology import Topology, affinity_masks, cpulist
from sizing.validity import RepetitionEvidence, StopRule, judge, mean_interval

START_LEAD_S = 4.0  # time for Ansible to reach every host before the common start
WINDOW_GAP_S = 1.0  # idle gap between windows: lets TIME_WAIT and the CPUs settle


@dataclass(frozen=True)
class RunOptions:
    """Everything ``sizing run`` was asked to do."""

    inventory: Path
    cores: tuple[int, ...]
    hts: tuple[Ht, ...]
    profiles: tuple[Profile, ...]
    db: Path
    duration_s: float | None = None
    repeat: int | None = None  # --repeat N: exactly N repetitions, no adaptation
    max_repeat: int = 10  # the cap of adaptive repetitions
    skip_preflight: bool = False  # warn about failed pre-flight checks instead of refusing
    platforms: tuple[str, ...] = ()  # --platform: only servers of these platforms (or families)
    warmup_s: float | None = None
    connections: int | None = None
    argv: tuple[str, ...] = ()
    debug: bool = False
    allow_host_reboot: bool = False  # hypervisor backends may reboot hosts (ESXi HT)
    insecure: bool = False  # hypervisor APIs without TLS verification (warned)
    resume_run: int | None = None  # --resume: measure only what this run is missing
    # latency profiles (sizing.fixedrate): offered rates, SLO search, soak period
    rates: tuple[int, ...] | None = None  # --rates 1000:10000:1000
    slo: str | None = None  # --slo p95=10ms
    soak_s: float | None = None  # --soak DURATION: repeat every rate for this long


@dataclass
class RunSummary:
    """What a run did, for rendering."""

    run_id: int
    status: str
    points: list[PointResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    already: int = 0  # --resume: points the run had before this invocation


class Progress:
    """Callbacks the CLI implements to show progress; the default does nothing."""

    def start(self, total: int) -> None:
        pass

    def step(self, label: str) -> None:
        pass

    def advance(self, result: PointResult) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass(frozen=True)
class HostFacts:
    """What ``playbooks/facts.yml`` found on a host."""

    topology: Topology
    raw: dict[str, Any]
    # This machine's time when the facts task started on the host and when its result
    # came: the host read its clock in between (the clock pre-flight check).
    clock_window: tuple[float, float] | None = None


def gather_facts(
    inventory: Inventory, hosts: Sequence[Host], *, debug: bool = False
) -> tuple[dict[str, HostFacts], dict[str, str]]:
    """Facts of every reachable host, and one problem line for every other host."""
    names = sorted({h.name for h in hosts})
    res = run_playbook(
        "facts.yml",
        inventory.path,
        extravars={"sizing_hosts": ",".join(names)},
        limit=names,
        debug=debug,
    )
    facts: dict[str, HostFacts] = {}
    problems = res.problems()
    for name in names:
        out = res.result(name, "Describe the host")
        if out is None:
            problems.setdefault(name, f"facts could not be read ({res.status})")
            continue
        try:
            raw = json.loads(str(out.get("stdout", "")))
            facts[name] = HostFacts(
                Topology.from_lscpu(raw["lscpu"]), raw, res.window(name, "Describe the host")
            )
        except (ValueError, KeyError) as exc:
            problems[name] = f"facts are unreadable: {exc}"
    return facts, problems


def _nginx_vars(
    point: PlannedPoint, workers: Sequence[int], tls_from: Profile | None = None
) -> dict[str, Any]:
    """The nginx.yml variables of a point.

    A plain-HTTP point never uses the TLS server, so it takes its TLS settings from
    ``tls_from`` (the run's handshake profile): rps and tps then share one provisioning
    per configuration instead of restarting nginx between them.
    """
    prof = point.profile
    if prof.scheme == "http" and tls_from is not None:
        prof = tls_from
    sz = point.server.sizing
    extra: dict[str, Any] = {
        "sizing_nginx_workers": len(workers),
        "sizing_nginx_affinity": affinity_masks(workers),
        "sizing_http_port": sz.http_port,
        "sizing_https_port": sz.https_port,
        "sizing_tls_key_type": prof.tls_key or "rsa2048",
        "sizing_tls_session_reuse": prof.tls_session_reuse,
    }
    if prof.tls_key == "ecdsa-p256":
        extra["sizing_tls_ciphers"] = "ECDHE-ECDSA-AES256-GCM-SHA384"
    if prof.tls_protocols:  # latency profiles: TLS 1.2 only, so the suite above is used
        extra["sizing_tls_protocols"] = prof.tls_protocols
    return extra


def _url(point: PlannedPoint, address: str) -> str:
    prof = point.profile
    sz = point.server.sizing
    port = sz.https_port if prof.scheme == "https" else sz.http_port
    addr = address
    host = f"[{addr}]" if ":" in addr else addr
    return f"{prof.scheme}://{host}:{port}{prof.path}"


def _cpu_busy(
    before: dict[str, list[int]], after: dict[str, list[int]], cpus: Sequence[int]
) -> dict[str, Any]:
    """Per-CPU shares (%) of user, system, softirq, steal and busy over a window."""
    per: dict[str, dict[str, float]] = {}
    for cpu in cpus:
        b, a = before.get(str(cpu)), after.get(str(cpu))
        if not b or not a:
            continue
        d = [x - y for x, y in zip(a, b, strict=False)]
        total = sum(d) or 1
        # /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice
        idle = d[3] + (d[4] if len(d) > 4 else 0)
        steal = d[7] if len(d) > 7 else 0
        per[str(cpu)] = {
            "user": 100.0 * (d[0] + d[1]) / total,
            "system": 100.0 * d[2] / total,
            "softirq": 100.0 * (d[6] if len(d) > 6 else 0) / total,
            "steal": 100.0 * steal / total,
            "busy": 100.0 * (total - idle) / total,
        }
    mean_busy = statistics.fmean(v["busy"] for v in per.values()) if per else None
    mean_steal = statistics.fmean(v["steal"] for v in per.values()) if per else None
    return {"per_cpu": per, "busy": mean_busy, "steal": mean_steal}


class Sweep:
    """One ``sizing run``: owns the store handle and the run id."""

    def __init__(self, opts: RunOptions, progress: Progress | None = None) -> None:
        self.opts = opts
        self.progress = progress or Progress()
        self.inventory = load_inventory(opts.inventory)
        self.facts: dict[str, HostFacts] = {}
        self.applied: dict[str, dict[str, Any]] = {}  # server -> nginx vars applied
        self.targets: dict[tuple[str, int, str], Target] = {}  # point config -> prepared target
        self.broken: dict[str, str] = {}  # host -> why it can no longer be used
        self.backends: dict[str, Backend] = {}  # platform -> backend (keeps its sessions)
        self.prepared: dict[str, Host] = {}  # servers whose backend prepared a point
        self.placement: dict[str, str] = {}  # libvirt guest -> its hypervisor inventory host
        self.start_leads: dict[str, float] = {}  # guest -> seconds Ansible needs to start there
        self.reported: set[str] = set()  # broken hosts already reported (once per run)
        self.done: set[PointKey] = set()  # --resume: keys the run already has
        self.extras: dict[str, Any] = {}  # latency/gateway profiles' state (vegeta, upstream)

    # -- the whole run --------------------------------------------------------------------

    def run(self) -> RunSummary:
        opts = self.opts
        store = Store(opts.db)
        if opts.resume_run is not None:
            run_id = opts.resume_run
            self.done = store.done_keys(run_id)
            store.reopen_run(run_id)
        else:
            run_id = store.start_run(
                inventory=str(opts.inventory),
                argv=opts.argv,
                tool_version=__version__,
                options=run_options_record(opts),
            )
        summary = RunSummary(run_id=run_id, status="running")
        try:
            try:
                self._run(store, summary)
            finally:
                self._teardown(summary)
        except KeyboardInterrupt:
            store.finish_run(run_id, "interrupted", "interrupted by the user")
            store.close()
            raise Interrupted(
                f"interrupted; run {run_id} keeps its {len(summary.points)} finished points"
            ) from None
        except SizingError as exc:
            store.finish_run(run_id, "failed", str(exc))
            store.close()
            raise
        store.finish_run(run_id, summary.status, "; ".join(summary.problems))
        store.close()
        return summary

    def _run(self, store: Store, summary: RunSummary) -> None:
        inv = self.inventory
        self.placement = self._guest_placement()
        hosts = list({h.name: h for h in self._fact_hosts(inv.servers) + inv.clients}.values())
        self.progress.step("reading host facts")
        self.facts, problems = gather_facts(inv, hosts, debug=self.opts.debug)
        for host, why in sorted(problems.items()):
            summary.problems.append(f"{host}: {why}")  # the pre-flight check reports it once
        if not any(self.placement.get(s.name, s.name) in self.facts for s in inv.servers):
            raise HostError(
                ", ".join(s.name for s in inv.servers),
                problems.get(inv.servers[0].name, "unreachable"),
            )
        if not any(c.name in self.facts for c in inv.clients):
            raise HostError(
                ", ".join(c.name for c in inv.clients),
                problems.get(inv.clients[0].name, "unreachable"),
            )
        store.set_environment(summary.run_id, {h: f.raw for h, f in self.facts.items()})
        topologies = {h: f.topology for h, f in self.facts.items()}
        self._hypervisor_topologies(topologies, summary)
        plan = self._build_plan(topologies)
        plan = [self._backend_skip(p) for p in plan]
        # Multi-host (see the methods): --resume keeps only the missing points, then every
        # pre-flight check runs on what is left; a failing one stops the run before any load.
        plan = self._resumable(plan, summary)
        self._preflight(plan, hosts, problems)
        self.progress.start(len(plan))
        if any(not p.skipped for p in plan):
            self._prepare_clients(plan)
        for point in plan:
            result, samples = self._point(point)
            store.add_point(summary.run_id, result, samples)
            summary.points.append(result)
            self.progress.advance(result)
            self._report_broken(summary)
            if SERVER_DIED in result.flags:
                summary.status = "interrupted"
                summary.problems.append(result.reason)
                # Stop here: what is measured stays, `--resume` may continue later.
                for rest in plan[plan.index(point) + 1 :]:
                    summary.points.append(
                        PointResult(rest.key, Status.SKIPPED, "not measured: run interrupted")
                    )
                return
        summary.status = "complete"

    # -- multi-host: resume, pre-flight, hosts failing mid-sweep, dry run ------------------

    def _resumable(self, plan: list[PlannedPoint], summary: RunSummary) -> list[PlannedPoint]:
        """``--resume``: leave out the points the run already has (measured, invalid or
        skipped); failed and never-reached points are measured again."""
        if not self.done:
            return plan
        left = [p for p in plan if p.key not in self.done]
        summary.already = len(plan) - len(left)
        self.progress.note(
            f"resuming run {summary.run_id}: {summary.already} point(s) already stored, "
            f"{len(left)} to measure"
        )
        return left

    def _connections(self, profile: Profile) -> int:
        return self.opts.connections or profile.connections

    def _duration(self, profile: Profile) -> float:
        return float(max(1, round(self.opts.duration_s or profile.duration_s)))

    def _build_plan(self, topologies: dict[str, Topology]) -> list[PlannedPoint]:
        """Every point of the run's options, on the servers ``--platform`` selects and the
        clients whose facts could be read."""
        return build_plan(
            self.inventory,
            topologies,
            self.opts.cores,
            self.opts.hts,
            self.opts.profiles,
            servers=self._selected_servers(),
            clients=[c for c in self.inventory.clients if c.name in self.facts],
            placement=self.placement,
        )

    def _selected_servers(self) -> list[Host]:
        """The inventory's servers, narrowed by ``--platform`` (a platform or a family)."""
        wanted = set(self.opts.platforms)
        servers = self.inventory.servers
        if not wanted:
            return servers
        chosen = [
            h for h in servers if str(h.platform) in wanted or h.platform.family in wanted
        ]
        if not chosen:
            have = sorted({str(h.platform) for h in servers})
            raise UsageError(
                f"--platform {','.join(sorted(wanted))}: no server of that platform in "
                f"{self.inventory.path} (it has: {', '.join(have)})"
            )
        return chosen

    def _preflight(
        self, plan: Sequence[PlannedPoint], hosts: Sequence[Host], unreachable: dict[str, str]
    ) -> None:
        """Every pre-flight check (sizing.preflight) before any load; raises them all."""
        self.progress.step("pre-flight checks")
        try:
            preflight(
                plan,
                {h: f.raw for h, f in self.facts.items()},
                connections=self._connections,
                duration_s=self._duration,
                hosts=[h.name for h in hosts],
                unreachable=unreachable,
                clock={h: f.clock_window for h, f in self.facts.items() if f.clock_window},
                topologies={h: f.topology for h, f in self.facts.items()},
            )
        except PreflightError as exc:
            if not self.opts.skip_preflight:
                raise
            for line in exc.problems:
                self.progress.note(f"pre-flight (ignored by --skip-preflight): {line}")

    def _report_broken(self, summary: RunSummary) -> None:
        """Report each host that failed mid-sweep once; its later points fail fast."""
        for host, why in self.broken.items():
            if host in self.reported:
                continue
            self.reported.add(host)
            line = f"{host}: {why}; the points that need it are not measured"
            summary.problems.append(line)  # shown once, when the run ends
            self.progress.step(line)

    def dry_run(self) -> dict[str, Any]:
        """``sizing run --plan``: facts, plan and pre-flight, and the exact commands of every
        point, without provisioning or loading anything and without writing the store."""
        inv = self.inventory
        self.placement = self._guest_placement()
        hosts = list({h.name: h for h in self._fact_hosts(inv.servers) + inv.clients}.values())
        self.progress.step("reading host facts")
        self.facts, problems = gather_facts(inv, hosts, debug=self.opts.debug)
        topologies = {h: f.topology for h, f in self.facts.items()}
        plan = self._build_plan(topologies)
        done: set[PointKey] = set()
        if self.opts.resume_run is not None:
            with Store(self.opts.db) as store:
                done = store.done_keys(self.opts.resume_run)
        try:
            preflight(
                [p for p in plan if p.key not in done],
                {h: f.raw for h, f in self.facts.items()},
                connections=self._connections,
                duration_s=self._duration,
                hosts=[h.name for h in hosts],
                unreachable=problems,
                clock={h: f.clock_window for h, f in self.facts.items() if f.clock_window},
                topologies=topologies,
            )
            checks: list[str] = []
        except SizingError as exc:
            checks = list(getattr(exc, "problems", [str(exc)]))
        return plan_document(self.opts, inv, hosts, self.facts, plan, done, problems, checks)

    # -- platform hooks (hypervisor guests are planned on their host's CPUs) ----------------

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

    def _hypervisor_topologies(self, topologies: dict[str, Topology], summary: RunSummary) -> None:
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
                topo = platform_host_topology(self._backend(server), server)
            except InputError as exc:  # a bad sizing_hypervisor / sizing_vm: the file's fault
                if exc.path != INVENTORY_PLACEHOLDER:
                    raise
                raise InputError(str(self.opts.inventory), exc.problems) from None
            except SizingError as exc:
                del topologies[server.name]
                errors.append(exc)
                continue
            if topo is not None:
                topologies[server.name] = topo
        if errors and not any(s.name in topologies for s in self.inventory.servers):
            raise errors[0]  # no server left to measure: the run fails with that one line
        for err in errors:
            summary.problems.append(str(err))
            self.progress.note(str(err))

    # -- libvirt guests: planned on their hypervisor host, reachable only once booted ------

    def _guest_placement(self) -> dict[str, str]:
        """libvirt guest server -> the inventory host it runs on (validates sizing_vm)."""
        if not any(s.platform is Platform.LIBVIRT for s in self.inventory.servers):
            return {}
        from sizing.platforms.libvirt import placements

        return placements(self.inventory)

    def _fact_hosts(self, servers: Sequence[Host]) -> list[Host]:
        """Whose facts plan a server: its own, or its hypervisor's for a libvirt guest."""
        return [self.inventory.hosts[self.placement.get(s.name, s.name)] for s in servers]

    def _guest_booted(self, target: Target) -> None:
        """Read a freshly booted guest's facts and put the window runner on it.

        How long Ansible took to run the facts script there sets the guest's start lead:
        an emulated guest needs many seconds to start a Python program, and its windows
        must still begin with the clients'.
        """
        t0 = time.monotonic()
        facts, problems = gather_facts(
            self.inventory, [self.inventory.hosts[target.host]], debug=self.opts.debug
        )
        self.start_leads[target.host] = 1.5 * (time.monotonic() - t0) + 2.0
        if target.host not in facts:
            why = problems.get(target.host, "unreachable")
            raise HostError(target.host, f"facts could not be read after boot: {why}")
        self.facts[target.host] = facts[target.host]
        res = run_playbook(
            "clients.yml",
            self.inventory.path,
            extravars={"sizing_hosts": target.host},  # its first play (wrk) matches no host
            limit=[target.host],
            debug=self.opts.debug,
        )
        if not res.ok:
            why = res.problems().get(target.host) or f"playbook {res.status} (rc {res.rc})"
            raise ToolError(f"{target.host}: the window runner could not be installed: {why}")

    def _teardown(self, summary: RunSummary) -> None:
        """Let every backend undo what it prepared (a guest gets its settings back)."""
        for server in self.prepared.values():
            try:
                self._backend(server).teardown(server)
            except SizingError as exc:
                summary.problems.append(f"teardown: {exc}")
        self.prepared.clear()

    def _backend_skip(self, point: PlannedPoint) -> PlannedPoint:
        """A point the planner allowed (or skipped generically) that its backend must skip."""
        if point.skipped and "unreachable" in point.skip_reason:
            return point
        why = platform_skip_reason(
            self._backend(point.server), point.server, point.key.cores, point.ht
        )
        if not why:
            return point
        return replace(point, skip_reason=why, allocation=None, client_cpus={})

    def _prepare_clients(self, plan: Sequence[PlannedPoint]) -> None:
        names = sorted({c.name for p in plan if not p.skipped for c in p.clients})
        servers = sorted(
            {p.server.name for p in plan if not p.skipped and p.server.name not in self.placement}
        )
        self.progress.step("preparing load generators")
        res = run_playbook(
            "clients.yml",
            self.inventory.path,
            extravars={
                "sizing_clients": ",".join(names),
                "sizing_hosts": ",".join(sorted(set(names) | set(servers))),
            },
            limit=sorted(set(names) | set(servers)),
            debug=self.opts.debug,
        )
        for host, why in res.problems().items():
            self.broken[host] = f"load generator could not be installed: {why}"
        if res.problems() and all(n in self.broken for n in names):
            host = names[0]
            raise ToolError(f"{host}: {self.broken[host]}")

    # -- one point --------------------------------------------------------------------------

    def _point(self, point: PlannedPoint) -> tuple[PointResult, list[tuple[int, Sample]]]:
        if point.skipped:
            return PointResult(point.key, Status.SKIPPED, point.skip_reason), []
        for host in [point.server, *point.clients]:
            if host.name in self.broken:
                return PointResult(
                    point.key, Status.FAILED, f"{host.name}: {self.broken[host.name]}"
                ), []
        self.progress.step(f"provisioning nginx: {point.key.label()}")
        try:
            target = self._provision(point)
        except SizingError as exc:
            self.broken[point.server.name] = str(exc)
            self.progress.note(str(exc))
            return PointResult(point.key, Status.FAILED, str(exc)), []
        self.progress.step(f"measuring {point.key.label()}")
        return self._measure(point, target)

    def _provision(self, point: PlannedPoint) -> Target:
        """Prepare the platform for the point's config, then NGINX on the target."""
        assert point.allocation is not None
        server = point.server
        target = self.targets.get(point.config)
        if target is None:
            backend = self._backend(server)
            self.prepared[server.name] = server
            target = backend.prepare(
                server, point.key.cores, point.ht, point.allocation.server_cpus
            )
            self.targets = {point.config: target}  # one prepared config at a time
            self.applied.pop(target.host, None)
            if server.name in self.placement:
                self._guest_booted(target)
        tls_from = next(
            (p for p in self.opts.profiles if p.scheme == "https" and p.role == "web"), None
        )
        extra = _nginx_vars(point, target.workers, tls_from)
        if point.profile.role in apigw.GATEWAY_ROLES:  # proxy/api-jwt: the upstream first
            apigw.provision_upstream(self, point)
            extra.update(apigw.gateway_vars(self, point, target))
        if self.applied.get(target.host) == extra:
            return target
        res = run_playbook(
            "nginx.yml",
            self.inventory.path,
            extravars={"sizing_hosts": target.host, **extra},
            limit=[target.host],
            debug=self.opts.debug,
        )
        if not res.ok:
            why = res.problems().get(target.host) or f"playbook {res.status} (rc {res.rc})"
            if "nginx -t" in why or "validat" in why.lower() or "configuration" in why.lower():
                why = f"nginx failed its config test: {why}"
            raise ToolError(f"{target.host}: provisioning nginx failed: {why}")
        self.applied[target.host] = extra
        return target

    def _measure(
        self, point: PlannedPoint, target: Target, *, plain: bool = False
    ) -> tuple[PointResult, list[tuple[int, Sample]]]:
        """Warm up, then repeat until the stop rule is met; evaluate every guard."""
        assert point.allocation is not None
        opts, prof = self.opts, point.profile
        if not plain and (prof.mode == "fixed-rate" or prof.role in apigw.GATEWAY_ROLES):
            return self._measure_other(point, target)  # latency, proxy, api-jwt profiles
        # wrk takes whole seconds only.
        duration = max(1, round(opts.duration_s or prof.duration_s))
        warmup_s = prof.warmup_s if opts.warmup_s is None else opts.warmup_s
        warmup = max(1, round(warmup_s)) if warmup_s > 0 else 0
        rule = StopRule(
            min_reps=min(prof.repetitions, opts.max_repeat),
            max_reps=opts.max_repeat,
            fixed=opts.repeat,
        )
        connections = opts.connections or prof.connections
        first = rule.fixed if rule.fixed is not None else rule.min_reps
        windows: list[dict[str, Any]] = []
        offset = 0.0
        if warmup > 0:
            windows.append({"index": 0, "offset": 0.0, "duration": warmup})
            offset = warmup + WINDOW_GAP_S
        for i in range(1, first + 1):
            windows.append({"index": i, "offset": offset, "duration": duration})
            offset += duration + WINDOW_GAP_S
        outputs: dict[str, dict[str, Any]] = {}
        all_windows: list[dict[str, Any]] = []
        batch = windows
        while True:
            failure = self._run_windows(point, target, batch, connections, outputs)
            all_windows.extend(batch)
            if failure is not None:
                break
            values = self._window_values(point, outputs)
            if rule.done(values):
                break
            n = len(values)
            self.progress.step(f"measuring {point.key.label()}: repetition {n + 1}")
            batch = [{"index": n + 1, "offset": 0.0, "duration": duration}]
        return self._evaluate(point, target, outputs, all_windows, connections, duration, rule)

    def _measure_other(
        self, point: PlannedPoint, target: Target
    ) -> tuple[PointResult, list[tuple[int, Sample]]]:
        """Latency profiles (sizing.fixedrate); proxy and api-jwt (sizing.apigw), whose
        checks come first and whose load windows are the wrk ones of ``_measure``."""
        if point.profile.mode == "fixed-rate":
            return fixedrate.measure(self, point, target)
        return apigw.measure(self, point, target, self.extras.setdefault("jwt", make_token()))

    def _run_windows(
        self,
        point: PlannedPoint,
        target: Target,
        windows: list[dict[str, Any]],
        connections: int,
        outputs: dict[str, dict[str, Any]],
    ) -> str | None:
        """Run ``windows`` on every host of the point at a common start; merge the outputs
        into ``outputs``. Returns a failure reason, or None."""
        prof = point.profile
        url = _url(point, target.address)
        specs: dict[str, dict[str, Any]] = {}
        sz = point.server.sizing
        pidfile = sz.pid_file or "/run/sizing-nginx.pid"
        lead = max(START_LEAD_S, self.start_leads.get(target.host, 0.0))
        start_at = time.time() + lead + 0.25 * len(point.clients)
        for c in point.clients:
            argvs = [
                wrk.build_argv(client_wrk_spec(point, c, url, connections, float(win["duration"])))
                for win in windows
            ]
            specs[c.name] = {
                "start_at": start_at,
                "windows": [{**w, "commands": [a]} for w, a in zip(windows, argvs, strict=True)],
                "sample_cpu": True,
            }
        srv = specs.setdefault(
            target.host, {"start_at": start_at, "windows": windows, "sample_cpu": True}
        )
        srv["pidfile"] = pidfile
        srv["sample_net"] = True  # /proc/net/dev: the network-bound verdict
        srv["ports"] = [sz.https_port if prof.scheme == "https" else sz.http_port]
        if prof.scheme == "https":
            srv["tls_log"] = f"{sz.log_dir or '/var/log/sizing-nginx'}/tls.log"
        hosts = sorted(specs)
        span = max(float(w["offset"]) + float(w["duration"]) for w in windows)
        timeout = int(lead + span + 120 + 10 * len(hosts))
        res = run_playbook(
            "load.yml",
            self.inventory.path,
            extravars={"sizing_hosts": ",".join(hosts), "sizing_specs": specs},
            limit=hosts,
            forks=max(5, len(hosts)),
            timeout=timeout,
            debug=self.opts.debug,
        )
        lost: str | None = None
        for host in hosts:
            out = res.result(host, "Run the windows")
            if out is None:
                why = res.problems().get(host, f"no result ({res.status})")
                self.broken[host] = why
                # multi-host: keep the other hosts' outputs, so the point names the host
                # that was lost (not a host whose output was merely left unread)
                lost = lost or f"{host}: {why}"
                continue
            try:
                doc = json.loads(str(out.get("stdout", "")))
            except ValueError:
                return f"{host}: unreadable window output"
            outputs.setdefault(host, {"windows": []})["windows"].extend(doc["windows"])
            if any(w.get("server_alive") is False for w in doc["windows"]):
                return "nginx died"
        return lost

    def _window_values(
        self, point: PlannedPoint, outputs: dict[str, dict[str, Any]]
    ) -> list[float]:
        """The summed client rate of every timed window so far (for the stop rule)."""
        per: dict[int, float] = {}
        for c in point.clients:
            for w in outputs.get(c.name, {}).get("windows", []):
                if w["index"] == 0 or not w.get("commands"):
                    continue
                try:
                    per[w["index"]] = per.get(w["index"], 0.0) + wrk.parse(
                        w["commands"][0]["stdout"]
                    ).rps
                except SizingError:
                    per.setdefault(w["index"], 0.0)
        return [per[i] for i in sorted(per)]

    def _evaluate(
        self,
        point: PlannedPoint,
        target: Target,
        outputs: dict[str, dict[str, Any]],
        windows: list[dict[str, Any]],
        connections: int,
        duration: float,
        rule: StopRule,
    ) -> tuple[PointResult, list[tuple[int, Sample]]]:
        assert point.allocation is not None
        prof = point.profile
        key = point.key
        for host in {target.host, *(c.name for c in point.clients)}:
            if host not in outputs:
                why = self.broken.get(host, "no result")
                return PointResult(key, Status.FAILED, f"{host}: {why}"), []
        server_windows = {w["index"]: w for w in outputs[target.host]["windows"]}
        facts = self.facts.get(target.host) or self.facts.get(point.server.name)
        raw = facts.raw if facts else {}
        base_meta: dict[str, Any] = {
            "host": key.host,
            "platform": key.platform,
            "cores": key.cores,
            "ht": key.ht,
            "profile": key.profile,
            "file_size": prof.file_size,
            "connections": connections,
            "duration_s": duration,
            "url": _url(point, target.address),
            "target": target.host,
            "platform_settings": target.metadata,
            "server_cpus": cpulist(point.allocation.server_cpus),
            "worker_cpus": cpulist(target.workers),
            "client_cpus": {c: cpulist(v) for c, v in point.client_cpus.items() if v},
            "clients": [c.name for c in point.clients],
            "nginx_version": raw.get("nginx_version"),
            "openssl_version": raw.get("nginx_openssl") or raw.get("openssl_version"),
            "kernel": raw.get("kernel"),
            "cpu_model": raw.get("cpu_model"),
            "hypervisor": raw.get("hypervisor"),
            "tool": "wrk",
            "tool_version": (
                self.facts[point.clients[0].name].raw.get("wrk_version")
                if point.clients[0].name in self.facts
                else None
            ),
            "sizing_version": __version__,
            "tls_key": prof.tls_key,
            "keepalive": prof.keepalive,
            "stop_rule": {
                "fixed": rule.fixed,
                "min": rule.min_reps,
                "max": rule.max_reps,
                "target_half_width": rule.target,
            },
        }
        samples: list[tuple[int, Sample]] = []
        values: list[float] = []
        evidence: list[RepetitionEvidence] = []
        problems: list[str] = []
        flags: list[str] = []
        suites: dict[str, int] = {}
        # multi-host: server network rates and merged client latency, per window and point
        extras = multihost_extras(
            [c.name for c in point.clients], target.host, outputs, windows, raw,
            point.server.sizing.nic_gbps,
        )
        for win in windows:
            idx = int(win["index"])
            total_rps = 0.0
            total_requests = 0
            total_socket = 0
            total_http = 0
            starts: list[float] = []
            client_cpu: dict[str, float] = {}
            ran = 0
            for c in point.clients:
                cw = next(
                    (w for w in outputs[c.name]["windows"] if w["index"] == idx), None
                )
                if cw is None or not cw["commands"]:
                    continue
                cmd = cw["commands"][0]
                starts.append(float(cw["start"]))
                try:
                    parsed = wrk.parse(cmd["stdout"])
                except SizingError as exc:
                    err_lines = str(cmd.get("stderr") or "").strip().splitlines()
                    problems.append(
                        f"{c.name}: wrk failed in window {idx} (rc {cmd['rc']}): "
                        f"{err_lines[-1] if err_lines else exc}"
                    )
                    continue
                ran += 1
                total_rps += parsed.rps
                total_requests += parsed.requests
                total_socket += parsed.total_errors
                total_http += parsed.non_2xx_3xx
                if cw.get("cpu_before") and cw.get("cpu_after"):
                    ccpus = point.client_cpus.get(c.name) or tuple(int(k) for k in cw["cpu_after"])
                    busy = _cpu_busy(cw["cpu_before"], cw["cpu_after"], ccpus)["busy"]
                    if busy is not None:
                        client_cpu[c.name] = busy
                samples.append(
                    (
                        idx,
                        Sample(
                            f"{prof.metric}.client",
                            parsed.rps,
                            prof.unit,
                            {
                                "client": c.name,
                                "requests": parsed.requests,
                                "errors": parsed.total_errors,
                                "non_2xx_3xx": parsed.non_2xx_3xx,
                                "latency_mean_ms": parsed.latency_mean_ms,
                                "latency_p99_ms": parsed.latency_percentiles_ms.get(99.0),
                                "transfer_bps": parsed.transfer_bps,
                                "cpu_busy": client_cpu.get(c.name),
                            },
                        ),
                    )
                )
            sw = server_windows.get(idx)
            server_cpu = None
            if sw and sw.get("cpu_before") and sw.get("cpu_after"):
                server_cpu = _cpu_busy(sw["cpu_before"], sw["cpu_after"], target.workers)
            if sw is not None and sw.get("server_alive") is False:
                return (
                    PointResult(
                        key,
                        Status.FAILED,
                        f"nginx died on {target.host} during "
                        + ("the warm-up" if idx == 0 else f"repetition {idx}"),
                        repetitions=len(values),
                        flags=(SERVER_DIED,),
                        metadata=base_meta,
                    ),
                    samples,
                )
            tls = (sw or {}).get("tls") or {}
            # Headroom is idle time on the server's pinned CPUs ("busy" counts every
            # non-idle tick); nginx's own CPU time is recorded beside it.
            server_busy = server_cpu["busy"] if server_cpu else None
            nginx_pct = None
            if sw and sw.get("nginx_cpu_s") is not None and sw["end"] > sw["start"]:
                nginx_pct = 100.0 * float(sw["nginx_cpu_s"]) / (
                    (float(sw["end"]) - float(sw["start"])) * max(1, len(target.workers))
                )
            skew = (max(starts) - min(starts)) if len(starts) > 1 else 0.0
            meta = {
                **base_meta,
                "repetition": idx,
                "warmup": idx == 0,
                "requests": total_requests,
                "errors": total_socket + total_http,
                "socket_errors": total_socket,
                "http_errors": total_http,
                "start_skew_s": skew,
                "server_cpu": server_cpu,
                "nginx_cpu_pct": nginx_pct,
                "server_busy": server_busy,
                "client_cpu_busy": client_cpu,
                "established": (sw or {}).get("established"),
                "tls_full": tls.get("full"),
                "tls_reused": tls.get("reused"),
                "throttled": (sw or {}).get("throttled"),
                **extras.windows.get(idx, {}),  # multi-host: server_net, merged latency
            }
            samples.append((idx, Sample(prof.metric, total_rps, prof.unit, meta)))
            if idx == 0 or ran < len(point.clients):
                continue
            values.append(total_rps)
            for suite, n in (tls.get("suites") or {}).items():
                suites[suite] = suites.get(suite, 0) + int(n)
            evidence.append(
                RepetitionEvidence(
                    value=total_rps,
                    requests=total_requests,
                    socket_errors=total_socket,
                    http_errors=total_http,
                    server_busy=server_busy,
                    server_steal=server_cpu["steal"] if server_cpu else None,
                    client_busy=client_cpu,
                    established=(sw or {}).get("established"),
                    tls_full=int(tls.get("full") or 0),
                    tls_reused=int(tls.get("reused") or 0),
                    throttled=int((sw or {}).get("throttled") or 0),
                )
            )
        timed = len([w for w in windows if w["index"] > 0])
        if not values or len(values) < timed:
            return (
                PointResult(
                    key,
                    Status.FAILED,
                    "; ".join(problems) or "no repetition finished",
                    repetitions=len(values),
                    metadata=base_meta,
                ),
                samples,
            )
        median = statistics.median(values)
        spread = (max(values) - min(values)) / median if median else None
        ci = mean_interval(values)
        verdicts = judge(
            evidence,
            requested_connections=connections * len(point.clients),
            keepalive=prof.keepalive,
            handshake_profile=prof.scheme == "https" and not prof.keepalive,
            clients=len(point.clients),
        )
        for v in verdicts:
            flags.append(v.flag)
            problems.append(v.reason)
        invalid = any(v.invalid for v in verdicts)
        if rule.fixed is None and not rule.converged(values):
            flags.append("noisy")
            if ci is not None:
                problems.append(
                    f"noisy: the 95% interval is ±{100 * ci.half_width:.1f}% after "
                    f"{len(values)} repetitions (target ±{100 * rule.target:.0f}%)"
                )
        if suites:
            base_meta["tls_suites"] = suites
        base_meta["server_busy_median"] = (
            statistics.median([e.server_busy for e in evidence if e.server_busy is not None])
            if any(e.server_busy is not None for e in evidence)
            else None
        )
        if target.emulated:
            flags.append("emulated")
        if raw.get("hypervisor") and point.server.platform == "baremetal":
            flags.append("virtualized-host")
        # multi-host: merged latency of all timed windows; network-bound flag and reason
        base_meta.update(extras.point)
        flags.extend(f for f in extras.flags if f not in flags)
        problems.extend(extras.reasons)
        if "network-bound" in extras.flags:
            invalid = True  # the NIC, not the CPU, set the figure: not a CPU sizing figure
        status = Status.INVALID if invalid else Status.MEASURED
        return (
            PointResult(
                key,
                status,
                "; ".join(problems),
                value=median,
                unit=prof.unit,
                repetitions=len(values),
                spread=spread,
                ci_low=ci.low if ci else None,
                ci_high=ci.high if ci else None,
                flags=tuple(flags),
                metadata=base_meta,
            ),
            samples,
        )


def run_options_record(opts: RunOptions) -> dict[str, Any]:
    """The options stored with a run: what ``--resume`` needs to plan it again."""
    return {
        "cores": list(opts.cores),
        "ht": [str(h) for h in opts.hts],
        "profiles": [p.name for p in opts.profiles],
        "duration_s": opts.duration_s,
        "repeat": opts.repeat,
        "warmup_s": opts.warmup_s,
        "connections": opts.connections,
        "rates": list(opts.rates) if opts.rates else None,
        "slo": opts.slo,
        "soak_s": opts.soak_s,
    }


def resume_options(opts: RunOptions, run_id: int) -> RunOptions:
    """``opts`` for ``--resume RUN_ID``: the stored run's inventory, points and settings."""
    from sizing import profiles as profiles_mod
    from sizing.errors import UsageError

    if not Store.exists(opts.db):
        raise UsageError(f"--resume: {opts.db} does not exist (no run {run_id} to resume)")
    with Store(opts.db) as store:
        try:
            run = store.get_run(run_id)
        except SizingError:
            raise UsageError(f"--resume: no run {run_id} in {opts.db}") from None
    o = run.options
    return replace(
        opts,
        inventory=Path(run.inventory),
        cores=tuple(int(c) for c in o.get("cores", opts.cores)),
        hts=tuple(Ht(h) for h in o.get("ht", [str(h) for h in opts.hts])),
        profiles=tuple(profiles_mod.load(n) for n in o.get("profiles", [])) or opts.profiles,
        duration_s=o.get("duration_s", opts.duration_s),
        repeat=o.get("repeat", opts.repeat),
        warmup_s=o.get("warmup_s", opts.warmup_s),
        connections=o.get("connections", opts.connections),
        rates=tuple(o["rates"]) if o.get("rates") else opts.rates,
        slo=o.get("slo", opts.slo),
        soak_s=o.get("soak_s", opts.soak_s),
        resume_run=run_id,
    )


def run_sweep(opts: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Measure every point of ``opts`` and store it; see the module docstring."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return Sweep(opts, progress).run()


def plan_sweep(opts: RunOptions, progress: Progress | None = None) -> dict[str, Any]:
    """``sizing run --plan``: the dry-run document (see :meth:`Sweep.dry_run`)."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return Sweep(opts, progress).dry_run()
