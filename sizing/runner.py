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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing import __version__
from sizing.errors import HostError, Interrupted, SizingError, ToolError
from sizing.inventory import Host, Inventory, load_inventory
from sizing.load import wrk
from sizing.model import Ht, PointKey, PointResult, Sample, Status
from sizing.plan import PlannedPoint, build_plan
from sizing.profiles import Profile
from sizing.provision import PlaybookResult, run_playbook
from sizing.store import Store
from sizing.topology import Topology, affinity_masks, cpulist

START_LEAD_S = 4.0  # time for Ansible to reach every host before the common start
WINDOW_GAP_S = 1.0  # idle gap between windows: lets TIME_WAIT and the CPUs settle
MAX_ERROR_RATIO = 0.001  # more than 0.1% errors or non-2xx/3xx invalidates a point


@dataclass(frozen=True)
class RunOptions:
    """Everything ``sizing run`` was asked to do."""

    inventory: Path
    cores: tuple[int, ...]
    hts: tuple[Ht, ...]
    profiles: tuple[Profile, ...]
    db: Path
    duration_s: float | None = None
    repeat: int | None = None
    warmup_s: float | None = None
    connections: int | None = None
    argv: tuple[str, ...] = ()
    debug: bool = False


@dataclass
class RunSummary:
    """What a run did, for rendering."""

    run_id: int
    status: str
    points: list[PointResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


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
            facts[name] = HostFacts(Topology.from_lscpu(raw["lscpu"]), raw)
        except (ValueError, KeyError) as exc:
            problems[name] = f"facts are unreadable: {exc}"
    return facts, problems


def _nginx_vars(point: PlannedPoint, workers: Sequence[int]) -> dict[str, Any]:
    prof = point.profile
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
    return extra


def _url(point: PlannedPoint) -> str:
    prof = point.profile
    sz = point.server.sizing
    port = sz.https_port if prof.scheme == "https" else sz.http_port
    addr = point.server.address
    host = f"[{addr}]" if ":" in addr else addr
    return f"{prof.scheme}://{host}:{port}{prof.path}"


def _cpu_busy(before: dict[str, list[int]], after: dict[str, list[int]], cpus: Sequence[int]) -> dict[str, Any]:
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
        self.broken: dict[str, str] = {}  # host -> why it can no longer be used

    # -- the whole run --------------------------------------------------------------------

    def run(self) -> RunSummary:
        opts = self.opts
        store = Store(opts.db)
        run_id = store.start_run(
            inventory=str(opts.inventory),
            argv=opts.argv,
            tool_version=__version__,
            options={
                "cores": list(opts.cores),
                "ht": [str(h) for h in opts.hts],
                "profiles": [p.name for p in opts.profiles],
                "duration_s": opts.duration_s,
                "repeat": opts.repeat,
            },
        )
        summary = RunSummary(run_id=run_id, status="running")
        try:
            self._run(store, summary)
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
        hosts = list({h.name: h for h in inv.servers + inv.clients}.values())
        self.progress.step("reading host facts")
        self.facts, problems = gather_facts(inv, hosts, debug=self.opts.debug)
        for host, why in sorted(problems.items()):
            summary.problems.append(f"{host}: {why}")
            self.progress.note(f"{host}: {why}")
        if not any(s.name in self.facts for s in inv.servers):
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
        reachable_clients = [c for c in inv.clients if c.name in self.facts]
        plan = build_plan(
            inv, topologies, self.opts.cores, self.opts.hts, self.opts.profiles,
            clients=reachable_clients,
        )
        self.progress.start(len(plan))
        if any(not p.skipped for p in plan):
            self._prepare_clients(plan)
        for point in plan:
            result, samples = self._point(point)
            store.add_point(summary.run_id, result, samples)
            summary.points.append(result)
            self.progress.advance(result)
            if result.status is Status.FAILED and "nginx died" in result.reason:
                summary.status = "interrupted"
                summary.problems.append(result.reason)
                # Stop here: what is measured stays, `--resume` may continue later.
                for rest in plan[plan.index(point) + 1 :]:
                    summary.points.append(
                        PointResult(rest.key, Status.SKIPPED, "not measured: run interrupted")
                    )
                return
        summary.status = "complete"

    def _prepare_clients(self, plan: Sequence[PlannedPoint]) -> None:
        names = sorted({c.name for p in plan if not p.skipped for c in p.clients})
        servers = sorted({p.server.name for p in plan if not p.skipped})
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
                return PointResult(point.key, Status.FAILED, f"{host.name}: {self.broken[host.name]}"), []
        self.progress.step(f"provisioning nginx: {point.key.label()}")
        try:
            self._provision(point)
        except SizingError as exc:
            self.broken[point.server.name] = str(exc)
            self.progress.note(str(exc))
            return PointResult(point.key, Status.FAILED, str(exc)), []
        self.progress.step(f"measuring {point.key.label()}")
        return self._measure(point)

    def _provision(self, point: PlannedPoint) -> None:
        assert point.allocation is not None
        server = point.server
        extra = _nginx_vars(point, point.allocation.server_cpus)
        if self.applied.get(server.name) == extra:
            return
        res = run_playbook(
            "nginx.yml",
            self.inventory.path,
            extravars={"sizing_hosts": server.name, **extra},
            limit=[server.name],
            debug=self.opts.debug,
        )
        if not res.ok:
            why = res.problems().get(server.name) or f"playbook {res.status} (rc {res.rc})"
            if "nginx -t" in why or "validat" in why.lower() or "configuration" in why.lower():
                why = f"nginx failed its config test: {why}"
            raise ToolError(f"{server.name}: provisioning nginx failed: {why}")
        self.applied[server.name] = extra

    def _measure(self, point: PlannedPoint) -> tuple[PointResult, list[tuple[int, Sample]]]:
        assert point.allocation is not None
        opts, prof = self.opts, point.profile
        duration = opts.duration_s or prof.duration_s
        warmup = prof.warmup_s if opts.warmup_s is None else opts.warmup_s
        reps = opts.repeat or prof.repetitions
        connections = opts.connections or prof.connections
        windows: list[dict[str, Any]] = []
        offset = 0.0
        if warmup > 0:
            windows.append({"index": 0, "offset": 0.0, "duration": warmup})
            offset = warmup + WINDOW_GAP_S
        for i in range(1, reps + 1):
            windows.append({"index": i, "offset": offset, "duration": duration})
            offset += duration + WINDOW_GAP_S
        url = _url(point)
        headers = () if prof.keepalive else ("Connection: close",)
        specs: dict[str, dict[str, Any]] = {}
        pidfile = point.server.sizing.pid_file or "/run/sizing-nginx.pid"
        start_at = time.time() + START_LEAD_S + 0.25 * len(point.clients)
        for c in point.clients:
            cpus = point.client_cpus.get(c.name, ())
            threads = max(1, min(len(cpus) or 1, connections))
            argvs = []
            for win in windows:
                argvs.append(
                    wrk.build_argv(
                        wrk.WrkSpec(
                            url=url,
                            threads=threads,
                            connections=connections,
                            duration_s=float(win["duration"]),
                            headers=headers,
                            cpus=tuple(cpus),
                        )
                    )
                )
            specs[c.name] = {
                "start_at": start_at,
                "windows": [{**w, "commands": [a]} for w, a in zip(windows, argvs, strict=True)],
                "sample_cpu": True,
            }
        srv = specs.setdefault(
            point.server.name, {"start_at": start_at, "windows": windows, "sample_cpu": True}
        )
        srv["pidfile"] = pidfile
        hosts = sorted(specs)
        timeout = int(START_LEAD_S + offset + 120 + 10 * len(hosts))
        res = run_playbook(
            "load.yml",
            self.inventory.path,
            extravars={"sizing_hosts": ",".join(hosts), "sizing_specs": specs},
            limit=hosts,
            forks=max(5, len(hosts)),
            timeout=timeout,
            debug=self.opts.debug,
        )
        return self._evaluate(point, res, windows, connections, duration)

    def _evaluate(
        self,
        point: PlannedPoint,
        res: PlaybookResult,
        windows: list[dict[str, Any]],
        connections: int,
        duration: float,
    ) -> tuple[PointResult, list[tuple[int, Sample]]]:
        assert point.allocation is not None
        prof = point.profile
        key = point.key
        outputs: dict[str, dict[str, Any]] = {}
        for host in {point.server.name, *(c.name for c in point.clients)}:
            out = res.result(host, "Run the windows")
            if out is None:
                why = res.problems().get(host, f"no result ({res.status})")
                self.broken[host] = why
                return PointResult(key, Status.FAILED, f"{host}: {why}"), []
            try:
                outputs[host] = json.loads(str(out.get("stdout", "")))
            except ValueError:
                return PointResult(key, Status.FAILED, f"{host}: unreadable window output"), []
        server_windows = {w["index"]: w for w in outputs[point.server.name]["windows"]}
        facts = self.facts.get(point.server.name)
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
            "url": _url(point),
            "server_cpus": cpulist(point.allocation.server_cpus),
            "client_cpus": {c: cpulist(v) for c, v in point.client_cpus.items() if v},
            "clients": [c.name for c in point.clients],
            "nginx_version": raw.get("nginx_version"),
            "openssl_version": raw.get("nginx_openssl") or raw.get("openssl_version"),
            "kernel": raw.get("kernel"),
            "cpu_model": raw.get("cpu_model"),
            "hypervisor": raw.get("hypervisor"),
            "tool": "wrk",
            "tool_version": (self.facts[point.clients[0].name].raw.get("wrk_version")
                             if point.clients[0].name in self.facts else None),
            "sizing_version": __version__,
            "tls_key": prof.tls_key,
        }
        samples: list[tuple[int, Sample]] = []
        values: list[float] = []
        problems: list[str] = []
        flags: list[str] = []
        for win in windows:
            idx = int(win["index"])
            total_rps = 0.0
            total_requests = 0
            total_errors = 0
            starts: list[float] = []
            client_cpu: dict[str, Any] = {}
            for c in point.clients:
                cw = next(w for w in outputs[c.name]["windows"] if w["index"] == idx) if any(
                    w["index"] == idx for w in outputs[c.name]["windows"]
                ) else None
                if cw is None or not cw["commands"]:
                    problems.append(f"{c.name}: window {idx} did not run")
                    continue
                cmd = cw["commands"][0]
                starts.append(float(cw["start"]))
                try:
                    parsed = wrk.parse(cmd["stdout"])
                except SizingError as exc:
                    why = (cmd.get("stderr") or "").strip().splitlines()
                    problems.append(f"{c.name}: wrk failed (rc {cmd['rc']}): {why[-1] if why else exc}")
                    continue
                total_rps += parsed.rps
                total_requests += parsed.requests
                total_errors += parsed.total_errors
                if cw.get("cpu_before") and cw.get("cpu_after"):
                    ccpus = point.client_cpus.get(c.name) or tuple(int(k) for k in cw["cpu_after"])
                    client_cpu[c.name] = _cpu_busy(cw["cpu_before"], cw["cpu_after"], ccpus)["busy"]
                samples.append(
                    (idx, Sample(f"{prof.metric}.client", parsed.rps, prof.unit,
                                 {"client": c.name, "requests": parsed.requests,
                                  "errors": parsed.total_errors,
                                  "non_2xx_3xx": parsed.non_2xx_3xx,
                                  "latency_mean_ms": parsed.latency_mean_ms,
                                  "latency_p99_ms": parsed.latency_percentiles_ms.get(99.0),
                                  "transfer_bps": parsed.transfer_bps}))
                )
            sw = server_windows.get(idx)
            server_cpu = None
            if sw and sw.get("cpu_before") and sw.get("cpu_after"):
                server_cpu = _cpu_busy(sw["cpu_before"], sw["cpu_after"], point.allocation.server_cpus)
            if sw is not None and sw.get("server_alive") is False:
                return (
                    PointResult(
                        key, Status.FAILED,
                        f"nginx died on {point.server.name} during "
                        + ("the warm-up" if idx == 0 else f"repetition {idx}"),
                        repetitions=len(values), metadata=base_meta,
                    ),
                    samples,
                )
            skew = (max(starts) - min(starts)) if len(starts) > 1 else 0.0
            meta = {
                **base_meta,
                "repetition": idx,
                "warmup": idx == 0,
                "requests": total_requests,
                "errors": total_errors,
                "start_skew_s": skew,
                "server_cpu": server_cpu,
                "client_cpu_busy": client_cpu,
            }
            samples.append((idx, Sample(prof.metric, total_rps, prof.unit, meta)))
            if idx == 0:
                continue
            values.append(total_rps)
            if total_requests and total_errors / total_requests > MAX_ERROR_RATIO:
                problems.append(
                    f"repetition {idx}: {total_errors} errors or non-2xx/3xx responses in "
                    f"{total_requests} requests"
                )
                if "errors" not in flags:
                    flags.append("errors")
        if not values or len(values) < len([w for w in windows if w["index"] > 0]):
            return (
                PointResult(key, Status.FAILED, "; ".join(problems) or "no repetition finished",
                            repetitions=len(values), metadata=base_meta),
                samples,
            )
        median = statistics.median(values)
        spread = (max(values) - min(values)) / median if median else None
        status = Status.INVALID if flags else Status.MEASURED
        if raw.get("hypervisor") and point.server.platform == "baremetal":
            flags.append("virtualized-host")
        return (
            PointResult(
                key,
                status,
                "; ".join(problems),
                value=median,
                unit=prof.unit,
                repetitions=len(values),
                spread=spread,
                flags=tuple(flags),
                metadata=base_meta,
            ),
            samples,
        )


def run_sweep(opts: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Measure every point of ``opts`` and store it; see the module docstring."""
    if not opts.profiles:
        raise SizingError("no profile to run")
    return Sweep(opts, progress).run()
