"""The latency profiles' measurement: constant offered rates, open loop (vegeta).

Called by :meth:`sizing.runner.Sweep._measure` for a profile with ``mode: fixed-rate``.
One point (host × platform × cores × HT × profile) is measured as:

1. **Sweep.** A warm-up window at the lowest rate, then one window per offered rate
   (``--rates 1000:10000:1000`` or the profile's ``rates``), all in one Ansible run with a
   common start on every host. Every client offers ``rate / clients`` (sums for rates);
   their latency distributions are merged weighted by request count
   (:func:`sizing.latency.merge_latency`). The server's pinned CPUs are sampled per window:
   the CPU-against-offered-rate curve.
2. **SLO search** (``--slo p95=10ms``): :func:`sizing.knee.search` probes new rates, one
   Ansible run each, until the highest rate meeting the SLO is known to ±2%.
3. **Soak** (``--soak DURATION``): every rate is repeated back to back for that long, each
   repetition kept as its own sample (the article's 20 consecutive runs, which revealed
   CPU-credit exhaustion); a rate's figures are the mean over its repetitions.

**The point's value** is the SLO capacity (requests/s) when an SLO is given, else the knee
rate (:func:`sizing.knee.knee`): the last swept rate before latency explodes. A sweep with
no knee stores the highest rate with the ``no-knee`` flag: the capacity lies above it.
The per-rate curve, the search's probes and the knee are in the point's metadata
(``curve``, ``slo_search``, ``knee_rate``); each window is a ``latency`` sample (value: p95
in ms; mean, p50, p90, p95, p99, max, rate sent, server CPU and steal in its metadata).

**Validity.** A rate whose requests were sent more than 2% below the offered rate (the
generator fell behind its schedule, the one way an open-loop tool can omit latency) is
flagged ``generator-lag`` and never counts as meeting an SLO; the point is invalid when it
sets the figure. Steal above 2% on the server's CPUs marks the point ``unstable``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from sizing import __version__
from sizing.apigw import request_headers
from sizing.errors import ServerDied, SizingError, ToolError
from sizing.knee import (
    LatencyPoint,
    SearchResult,
    Slo,
    capacity_from_curve,
    knee,
    parse_rates,
    parse_slo,
    search,
)
from sizing.latency import merge_latency
from sizing.load import vegeta
from sizing.loadplan import DEFAULT_TOOL_DIR
from sizing.model import SERVER_DIED, PointResult, Sample, Status
from sizing.paths import ROOT
from sizing.provision import run_playbook
from sizing.topology import cpulist
from sizing.validity import STEAL_LIMIT

if TYPE_CHECKING:
    from sizing.inventory import Host
    from sizing.plan import PlannedPoint
    from sizing.platforms import Target
    from sizing.runner import RunOptions, Sweep

__all__ = ["VEGETA_BINARY", "measure", "soak_jumps"]

VEGETA_BINARY = ROOT / ".cache" / "bin" / "vegeta"  # scripts/install-vegeta
START_LEAD_S = 4.0
WINDOW_GAP_S = 1.0
DEFAULT_RATES = "1000:10000:1000"
JUMP_FACTOR = 2.0  # a repetition whose p95 is 2x the median of the rate's others: a jump


def _tool_dir(client: Host) -> str:
    return str(client.variables.get("sizing_tool_dir") or DEFAULT_TOOL_DIR).rstrip("/")


def vegeta_path(client: Host) -> str:
    """Where ``playbooks/vegeta.yml`` put vegeta on ``client``."""
    return f"{_tool_dir(client)}/vegeta"


def rates_of(sweep: Sweep, point: PlannedPoint) -> tuple[int, ...]:
    opts = sweep.opts
    if opts.rates:
        return tuple(opts.rates)
    return parse_rates(point.profile.rates or DEFAULT_RATES)


def slo_of(sweep: Sweep, point: PlannedPoint) -> Slo | None:
    text = sweep.opts.slo or point.profile.slo
    return parse_slo(text) if text else None


def plan_argv(
    opts: RunOptions, point: PlannedPoint, client: Host, url: str, duration: float
) -> list[str] | str:
    """``sizing run --plan``: the vegeta attack of the first offered rate on ``client``."""
    try:
        rates = opts.rates or parse_rates(point.profile.rates or DEFAULT_RATES)
        spec = vegeta.VegetaSpec(
            url=url, rate=max(1, round(rates[0] / len(point.clients))), duration_s=duration,
            results_file=f"{_tool_dir(client)}/vegeta-results.bin",
            headers=request_headers(point.profile),
            cpus=tuple(point.client_cpus.get(client.name, ())),
        )
        argv: list[str] = vegeta.attack_argv(spec, vegeta=vegeta_path(client))
    except SizingError as exc:
        return f"cannot build: {exc}"
    return argv


def install_vegeta(sweep: Sweep, clients: Sequence[Host]) -> None:
    """Copy the pinned vegeta to every client once per sweep (``playbooks/vegeta.yml``)."""
    names = sorted({c.name for c in clients} - set(sweep.extras.get("vegeta_on", ())))
    if not names:
        return
    if not VEGETA_BINARY.is_file():
        raise ToolError(
            f"vegeta is not installed ({VEGETA_BINARY} is missing): run scripts/setup "
            "(it builds the pinned vegeta with scripts/install-vegeta)"
        )
    sweep.progress.step("installing vegeta on the clients")
    res = run_playbook(
        "vegeta.yml",
        sweep.inventory.path,
        extravars={"sizing_hosts": ",".join(names), "sizing_vegeta_binary": str(VEGETA_BINARY)},
        limit=names,
        debug=sweep.opts.debug,
    )
    if not res.ok:
        host, why = next(iter(res.problems().items()), (names[0], f"{res.status} (rc {res.rc})"))
        raise ToolError(f"{host}: vegeta could not be installed: {why}")
    sweep.extras.setdefault("vegeta_on", set()).update(names)


class _Windows:
    """Runs windows of constant-rate load on every host of a point at a common start."""

    def __init__(self, sweep: Sweep, point: PlannedPoint, target: Target, url: str) -> None:
        self.sweep, self.point, self.target, self.url = sweep, point, target, url
        self.next_index = 0

    def spec(self, client: Host, rate: int, duration: float) -> vegeta.VegetaSpec:
        share = max(1, round(rate / len(self.point.clients)))
        return vegeta.VegetaSpec(
            url=self.url,
            rate=share,
            duration_s=duration,
            results_file=f"{_tool_dir(client)}/vegeta-results.bin",
            timeout_s=max(5.0, min(30.0, duration)),
            headers=request_headers(self.point.profile),
            keepalive=self.point.profile.keepalive,
            cpus=tuple(self.point.client_cpus.get(client.name, ())),
        )

    def run(self, plan: Sequence[tuple[int, float]]) -> list[dict[str, Any]]:
        """Run one window per (rate, duration); returns, per window, the parsed results."""
        sweep, point, target = self.sweep, self.point, self.target
        windows: list[dict[str, Any]] = []
        offset = 0.0
        for rate, duration in plan:
            windows.append({"index": self.next_index, "offset": offset, "duration": duration,
                            "rate": rate})
            self.next_index += 1
            offset += duration + WINDOW_GAP_S
        start_at = time.time() + START_LEAD_S + 0.25 * len(point.clients)
        specs: dict[str, dict[str, Any]] = {}
        for c in point.clients:
            cmds = []
            for w in windows:
                vs = self.spec(c, int(w["rate"]), float(w["duration"]))
                binary = vegeta_path(c)
                cmds.append({
                    "argv": vegeta.attack_argv(vs, vegeta=binary),
                    "stdin": vegeta.targets(vs),
                    "then": vegeta.report_argvs(vs, vegeta=binary),
                })
            specs[c.name] = {
                "start_at": start_at,
                "windows": [
                    {"index": w["index"], "offset": w["offset"], "duration": w["duration"],
                     "commands": [cmd]}
                    for w, cmd in zip(windows, cmds, strict=True)
                ],
                "sample_cpu": True,
            }
        sz = point.server.sizing
        srv = specs.setdefault(target.host, {"start_at": start_at, "sample_cpu": True,
                                             "windows": [
                                                 {k: w[k] for k in ("index", "offset", "duration")}
                                                 for w in windows]})
        srv["pidfile"] = sz.pid_file or "/run/sizing-nginx.pid"
        hosts = sorted(specs)
        span = offset + 60.0
        res = run_playbook(
            "load.yml",
            sweep.inventory.path,
            extravars={"sizing_hosts": ",".join(hosts), "sizing_specs": specs},
            limit=hosts,
            forks=max(5, len(hosts)),
            timeout=int(START_LEAD_S + span * 2 + 120),
            debug=sweep.opts.debug,
        )
        outputs: dict[str, dict[int, dict[str, Any]]] = {}
        for host in hosts:
            out = res.result(host, "Run the windows")
            if out is None:
                why = res.problems().get(host, f"no result ({res.status})")
                sweep.broken[host] = why
                raise ToolError(f"{host}: {why}")
            try:
                doc = json.loads(str(out.get("stdout", "")))
            except ValueError:
                raise ToolError(f"{host}: unreadable window output") from None
            outputs[host] = {int(w["index"]): w for w in doc["windows"]}
        results = []
        for w in windows:
            results.append(self._window(w, outputs))
        return results

    def _window(self, w: dict[str, Any], outputs: dict[str, dict[int, dict[str, Any]]]) -> (
        dict[str, Any]
    ):
        from sizing.runner import _cpu_busy

        point, target = self.point, self.target
        idx = int(w["index"])
        sw = outputs.get(target.host, {}).get(idx)
        if sw is not None and sw.get("server_alive") is False:
            raise ServerDied(f"nginx died on {target.host} at {w['rate']} requests/s")
        parsed: list[vegeta.VegetaResult] = []
        problems: list[str] = []
        client_busy: dict[str, float] = {}
        for c in point.clients:
            cw = outputs.get(c.name, {}).get(idx)
            if cw is None or not cw.get("commands"):
                problems.append(f"{c.name}: window {idx} did not run")
                continue
            cmd = cw["commands"][0]
            then = cmd.get("then") or []
            try:
                if len(then) < 2:
                    raise vegeta.VegetaParseError("vegeta's reports did not run")
                parsed.append(vegeta.parse(then[0]["stdout"], then[1]["stdout"]))
            except SizingError as exc:
                err = (str(cmd.get("stderr") or "").strip().splitlines() or [str(exc)])[-1]
                problems.append(f"{c.name}: vegeta failed at {w['rate']}/s (rc {cmd['rc']}): {err}")
                continue
            if cw.get("cpu_before") and cw.get("cpu_after"):
                cpus = point.client_cpus.get(c.name) or tuple(int(k) for k in cw["cpu_after"])
                busy = _cpu_busy(cw["cpu_before"], cw["cpu_after"], cpus)["busy"]
                if busy is not None:
                    client_busy[c.name] = busy
        server = None
        if sw and sw.get("cpu_before") and sw.get("cpu_after"):
            server = _cpu_busy(sw["cpu_before"], sw["cpu_after"], target.workers)
        return {"window": w, "results": parsed, "problems": problems, "server_cpu": server,
                "client_busy": client_busy}


def _latency_point(rate: int, win: dict[str, Any]) -> tuple[LatencyPoint, dict[str, Any]]:
    """One window's results as a :class:`LatencyPoint` and a sample's metadata."""
    results: list[vegeta.VegetaResult] = win["results"]
    if not results:
        raise ToolError("; ".join(win["problems"]) or f"no result at {rate}/s")
    merged = merge_latency([r.latency_report() for r in results],
                           percentiles=(50.0, 90.0, 95.0, 99.0))
    requests = sum(r.requests for r in results)
    failed = sum(r.failed for r in results)
    sent = sum(r.rate for r in results)
    achieved = sum(r.throughput for r in results)
    if len(results) == 1 or merged is None:
        r0 = results[0]
        pct = r0.latency_percentiles_ms
        mean, mx = r0.latency_mean_ms, r0.latency_max_ms
    else:
        pct, mean, mx = merged.percentiles_ms, merged.mean_ms, merged.max_ms
    server = win["server_cpu"] or {}
    lp = LatencyPoint(
        rate=float(rate),
        mean_ms=mean,
        p50_ms=pct[50.0],
        p90_ms=pct[90.0],
        p95_ms=pct[95.0],
        p99_ms=pct[99.0],
        max_ms=mx,
        achieved=achieved,
        error_ratio=failed / max(requests, 1),
        server_busy=server.get("busy"),
        server_steal=server.get("steal"),
    )
    lag = max(0.0, (rate - sent) / rate)
    meta = {
        **asdict(lp),
        "sent_rate": sent,
        "lag": lag,
        "requests": requests,
        "errors": failed,
        "status_codes": _sum_codes(results),
        "error_messages": sorted({e for r in results for e in r.errors})[:5],
        "client_cpu_busy": win["client_busy"],
        "server_cpu": server or None,
        "clients": len(results),
        "problems": win["problems"],
    }
    return lp, meta


def _sum_codes(results: Sequence[vegeta.VegetaResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        for code, n in r.status_codes.items():
            out[code] = out.get(code, 0) + n
    return out


def _mean_point(reps: Sequence[LatencyPoint]) -> LatencyPoint:
    """A rate's figures over its soak repetitions: the mean of each (the article's way)."""
    if len(reps) == 1:
        return reps[0]

    def avg(name: str) -> float | None:
        vals = [getattr(r, name) for r in reps if getattr(r, name) is not None]
        return statistics.fmean(vals) if vals else None

    return replace(
        reps[0],
        mean_ms=statistics.fmean(r.mean_ms for r in reps),
        p50_ms=statistics.fmean(r.p50_ms for r in reps),
        p90_ms=avg("p90_ms"),
        p95_ms=statistics.fmean(r.p95_ms for r in reps),
        p99_ms=statistics.fmean(r.p99_ms for r in reps),
        max_ms=max(r.max_ms for r in reps),
        achieved=avg("achieved"),
        error_ratio=statistics.fmean(r.error_ratio for r in reps),
        server_busy=avg("server_busy"),
        server_steal=avg("server_steal"),
    )


def soak_jumps(series: Sequence[dict[str, Any]], factor: float = JUMP_FACTOR) -> list[int]:
    """Repetitions (1-based) whose p95 or mean is ``factor`` x the median of the rate's
    repetitions, or whose steal exceeds the steal limit: the guide shows the table then."""
    if len(series) < 2:
        return []
    p95 = statistics.median(float(s["p95_ms"]) for s in series)
    mean = statistics.median(float(s["mean_ms"]) for s in series)
    out = []
    for s in series:
        steal = s.get("server_steal") or 0.0
        if (
            float(s["p95_ms"]) > factor * p95
            or float(s["mean_ms"]) > factor * mean
            or steal > STEAL_LIMIT
        ):
            out.append(int(s["repetition"]))
    return out


def measure(
    sweep: Sweep, point: PlannedPoint, target: Target
) -> tuple[PointResult, list[tuple[int, Sample]]]:
    """Measure one latency point (see the module docstring)."""
    from sizing.runner import _url

    prof = point.profile
    opts = sweep.opts
    key = point.key
    try:
        rates = rates_of(sweep, point)
        slo = slo_of(sweep, point)
        install_vegeta(sweep, point.clients)
    except SizingError as exc:
        return PointResult(key, Status.FAILED, str(exc)), []
    duration = float(max(1.0, opts.duration_s or prof.duration_s))
    warmup = prof.warmup_s if opts.warmup_s is None else opts.warmup_s
    reps = 1
    if opts.soak_s:
        reps = max(1, int(opts.soak_s // (duration + WINDOW_GAP_S)))
    elif opts.repeat:
        reps = opts.repeat
    url = _url(point, target.address)
    runner = _Windows(sweep, point, target, url)
    samples: list[tuple[int, Sample]] = []
    curve: dict[float, list[LatencyPoint]] = {}
    series: dict[float, list[dict[str, Any]]] = {}
    lagging: set[float] = set()
    problems: list[str] = []

    def record(plan: list[tuple[int, float]], phase: str, first_warm: bool) -> None:
        results = runner.run(plan)
        for i, (win, (rate, _)) in enumerate(zip(results, plan, strict=True)):
            idx = int(win["window"]["index"])
            warm = first_warm and i == 0
            try:
                lp, meta = _latency_point(rate, win)
            except SizingError as exc:
                problems.append(str(exc))
                if not warm:
                    raise
                continue
            rep = len(series.get(lp.rate, [])) + 1
            samples.append((idx, Sample("latency", lp.p95_ms, "ms", {
                **meta, "phase": "warmup" if warm else phase, "warmup": warm,
                "repetition_at_rate": None if warm else rep, "duration_s": duration,
            })))
            if warm:
                continue
            if meta["lag"] > vegeta.MAX_RATE_LAG:
                lagging.add(lp.rate)
            curve.setdefault(lp.rate, []).append(lp)
            series.setdefault(lp.rate, []).append(
                {"repetition": rep, **{k: meta[k] for k in (
                    "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "server_steal",
                    "server_busy", "lag")}}
            )

    def as_curve() -> list[LatencyPoint]:
        out = []
        for rate in sorted(curve):
            lp = _mean_point(curve[rate])
            if rate in lagging:  # never "meets" an SLO: its latencies may be understated
                lp = replace(lp, error_ratio=max(lp.error_ratio, 1.0))
            out.append(lp)
        return out

    sweep.progress.step(f"measuring {key.label()}: {len(rates)} rates")
    plan: list[tuple[int, float]] = []
    if warmup > 0:
        plan.append((rates[0], float(max(1.0, warmup))))
    for rate in rates:
        plan += [(rate, duration)] * reps
    try:
        record(plan, "sweep", warmup > 0)
        result: SearchResult | None = None
        if slo is not None:
            def probe(rate: float) -> LatencyPoint:
                sweep.progress.step(f"measuring {key.label()}: SLO search at {rate:,.0f}/s")
                record([(int(rate), duration)] * reps, "search", False)
                return next(p for p in as_curve() if p.rate == float(int(rate)))

            result = search(probe, slo, curve=as_curve(), start=float(rates[0]),
                            floor=1.0, ceiling=float(max(rates)) * 64)
    except SizingError as exc:
        reason = str(exc)
        status = Status.FAILED
        died: tuple[str, ...] = (SERVER_DIED,) if isinstance(exc, ServerDied) else ()
        return PointResult(key, status, reason, flags=died,
                           metadata={"curve": _curve_meta(as_curve())}), samples

    pts = as_curve()
    k = knee([p for p in pts if p.rate not in lagging] or pts)
    flags: list[str] = []
    if lagging:
        flags.append("generator-lag")
        problems.append(
            "vegeta sent more than 2% below the offered rate at "
            + ", ".join(f"{r:,.0f}" for r in sorted(lagging))
            + " requests/s (the client fell behind; those rates never count as meeting an SLO)"
        )
    steal = [p.server_steal for p in pts if p.server_steal is not None]
    if steal and max(steal) > STEAL_LIMIT:
        flags.append("unstable")
        problems.append(f"the hypervisor stole up to {max(steal):.1f}% of the server's CPUs")
    if target.emulated:
        flags.append("emulated")
    value: float | None
    if slo is not None and result is not None:
        value = result.capacity
        if not result.converged:
            flags.append("slo-not-converged")
            problems.append(f"SLO search: {result.reason}")
        if value is None:
            problems.append(f"no rate met {slo}: {result.reason}")
    elif k is not None:
        value = k.rate
    else:
        value = max(p.rate for p in pts) if pts else None
        flags.append("no-knee")
        problems.append("latency stayed flat over the whole sweep: the knee lies above it")
    invalid = value is None or (value in lagging) or "unstable" in flags
    jumps = {f"{r:g}": soak_jumps(s) for r, s in series.items() if soak_jumps(s)}
    meta: dict[str, Any] = {
        "host": key.host, "platform": key.platform, "cores": key.cores, "ht": key.ht,
        "profile": key.profile, "url": url, "target": target.host,
        "file_size": prof.file_size, "scheme": prof.scheme, "tls_key": prof.tls_key,
        "tls_ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384" if prof.tls_key == "ecdsa-p256" else None,
        "role": prof.role, "mode": prof.mode, "generator": "vegeta",
        "tool": "vegeta", "tool_version": "v12.12.0", "sizing_version": __version__,
        "duration_s": duration, "repetitions_per_rate": reps, "soak_s": opts.soak_s,
        "rates": list(rates), "server_cpus": cpulist(point.allocation.server_cpus)
        if point.allocation else None, "worker_cpus": cpulist(target.workers),
        "clients": [c.name for c in point.clients], "platform_settings": target.metadata,
        "curve": _curve_meta(pts),
        "knee_rate": k.rate if k else None,
        "slo": str(slo) if slo else None,
        "slo_label": slo.label if slo else None,
        "slo_search": None if result is None else {
            "capacity": result.capacity, "bracket": list(result.bracket),
            "probes": [p.rate for p in result.probes], "probe_count": result.probe_count,
            "converged": result.converged, "reason": result.reason,
            "sweep_capacity": capacity_from_curve(
                [p for p in pts if p.rate in set(rates)], slo) if slo else None,
        },
        "soak_series": {f"{r:g}": s for r, s in series.items()} if reps > 1 else None,
        "soak_jumps": jumps or None,
    }
    facts = sweep.facts.get(target.host) or sweep.facts.get(point.server.name)
    if facts:
        meta.update({k2: facts.raw.get(k2) for k2 in ("nginx_version", "kernel", "cpu_model",
                                                      "hypervisor")})
        meta["openssl_version"] = facts.raw.get("nginx_openssl") or facts.raw.get(
            "openssl_version")
    return (
        PointResult(
            key,
            Status.INVALID if invalid else Status.MEASURED,
            "; ".join(problems),
            value=value,
            unit="requests/s",
            repetitions=reps,
            flags=tuple(flags),
            metadata=meta,
        ),
        samples,
    )


def _curve_meta(pts: Sequence[LatencyPoint]) -> list[dict[str, Any]]:
    return [asdict(p) for p in pts]
