"""A closed-loop point's window outputs -> its PointResult and samples (PURE).

The window runner's outputs of every host (``playbooks/files/loadgen.py``'s JSON, per
host ``{"windows": [...]}``) go in; the point's figure (the median of the timed
repetitions' summed client rates), its interval, every validity verdict and one sample per
client and window come out. No I/O: the golden files in ``tests/data/windows/`` drive it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.errors import SizingError
from sizing.facts import HostFacts
from sizing.intervals import interval_words, repetition_flags
from sizing.inventory import Host
from sizing.load import wrk
from sizing.measure.cpu import (
    client_cpus,
    kernel_outside,
    nginx_cpu_pct,
    server_work,
    upstream_window,
    window_cpu,
)
from sizing.measure.metadata import throughput_metadata
from sizing.measure.multihost import multihost_extras
from sizing.measure.validity import RepetitionEvidence, StopRule, judge, median_ci
from sizing.measure.windows import WindowSpec
from sizing.model import SERVER_DIED, PointResult, Sample, Status
from sizing.plan.points import PlannedPoint
from sizing.provision.platforms.base import Target

__all__ = [
    "Measurement",
    "Outputs",
    "WindowTotals",
    "client_window",
    "evaluate_windows",
    "window_rates",
]

Measurement = tuple[PointResult, list[tuple[int, Sample]]]
Outputs = Mapping[str, Mapping[str, Any]]  # host -> {"windows": [window output, ...]}


def window_rates(point: PlannedPoint, outputs: Outputs) -> list[float]:
    """The summed client rate of every timed window so far (for the stop rule)."""
    per: dict[int, float] = {}
    for c in point.clients:
        for w in outputs.get(c.name, {}).get("windows", []):
            if w["index"] == 0 or not w.get("commands"):
                continue
            try:
                per[w["index"]] = (
                    per.get(w["index"], 0.0) + wrk.parse(w["commands"][0]["stdout"]).rps
                )
            except SizingError:
                per.setdefault(w["index"], 0.0)
    return [per[i] for i in sorted(per)]


@dataclass
class WindowTotals:
    """The clients' sums over one window."""

    rps: float = 0.0
    requests: int = 0
    socket_errors: int = 0
    http_errors: int = 0
    ran: int = 0  # clients whose wrk output could be read
    starts: list[float] = field(default_factory=list)
    client_cpu: dict[str, float] = field(default_factory=dict)


def client_window(
    point: PlannedPoint,
    client: Host,
    cw: Mapping[str, Any] | None,
    totals: WindowTotals,
    samples: list[tuple[int, Sample]],
    problems: list[str],
) -> None:
    """Add one client's output of window ``idx`` to ``totals``, its sample to ``samples``."""
    prof = point.profile
    if cw is None or not cw["commands"]:
        return
    idx = int(cw["index"])
    cmd = cw["commands"][0]
    totals.starts.append(float(cw["start"]))
    try:
        parsed = wrk.parse(cmd["stdout"])
    except SizingError as exc:
        err_lines = str(cmd.get("stderr") or "").strip().splitlines()
        problems.append(
            f"{client.name}: wrk failed in window {idx} (rc {cmd['rc']}): "
            f"{err_lines[-1] if err_lines else exc}"
        )
        return
    totals.ran += 1
    totals.rps += parsed.rps
    totals.requests += parsed.requests
    totals.socket_errors += parsed.total_errors
    totals.http_errors += parsed.non_2xx_3xx
    if cw.get("cpu_before") and cw.get("cpu_after"):
        cpus = client_cpus(cw, point.client_cpus.get(client.name, ()))
        busy = window_cpu(cw, cpus)
        if busy is not None and busy["busy"] is not None:
            totals.client_cpu[client.name] = busy["busy"]
    samples.append(
        (
            idx,
            Sample(
                f"{prof.metric}.client",
                parsed.rps,
                prof.unit,
                {
                    "client": client.name,
                    "requests": parsed.requests,
                    "errors": parsed.total_errors,
                    "non_2xx_3xx": parsed.non_2xx_3xx,
                    "latency_mean_ms": parsed.latency_mean_ms,
                    "latency_p99_ms": parsed.latency_percentiles_ms.get(99.0),
                    "transfer_bps": parsed.transfer_bps,
                    "cpu_busy": totals.client_cpu.get(client.name),
                },
            ),
        )
    )


def upstream_windows(point: PlannedPoint, outputs: Outputs, idx: int) -> dict[str, dict[str, Any]]:
    """Each upstream host's CPU over window ``idx`` (:func:`upstream_window`)."""
    out: dict[str, dict[str, Any]] = {}
    for up in point.upstreams:
        got = upstream_window(_window_of(outputs, up.host, idx), up.cpus, bool(up.shares_with))
        if got is not None:
            out[up.host] = got
    return out


def upstream_died(point: PlannedPoint, outputs: Outputs, idx: int) -> str:
    """``the upstream nginx died on HOST`` when an upstream host's probe saw its master
    gone at the end of window ``idx`` (its workers may serve on, unmeasured), else ""."""
    for up in point.upstreams:
        uw = _window_of(outputs, up.host, idx)
        if uw is not None and uw.get("upstream_alive") is False:
            return f"the upstream nginx died on {up.host}"
    return ""


def _window_of(outputs: Outputs, host: str, idx: int) -> dict[str, Any] | None:
    """Host ``host``'s output of window ``idx``, if it gave one."""
    return next((w for w in outputs.get(host, {}).get("windows", []) if w["index"] == idx), None)


def evaluate_windows(
    point: PlannedPoint,
    target: Target,
    outputs: Outputs,
    windows: Sequence[WindowSpec],
    *,
    connections: int,
    duration: float,
    rule: StopRule,
    facts: HostFacts | None,
    client_tool_version: str | None,
    broken: Mapping[str, str] | None = None,
) -> Measurement:
    """The point's result and samples from every host's window outputs (see the module)."""
    assert point.allocation is not None
    prof = point.profile
    key = point.key
    for win in (outputs.get(target.host) or {}).get("windows", []):
        if win.get("server_alive") is False and any(c.name not in outputs for c in point.clients):
            # the server's own probe says why the clients gave nothing: its nginx died
            idx = int(win["index"])
            return PointResult(
                key,
                Status.FAILED,
                f"nginx died on {target.host} during "
                + ("the warm-up" if idx == 0 else f"repetition {idx}"),
                flags=(SERVER_DIED,),
            ), []
    for host in sorted({target.host, *(c.name for c in point.clients)}):
        if host not in outputs:
            why = (broken or {}).get(host, "no result")
            return PointResult(key, Status.FAILED, f"{host}: {why}"), []
    server_windows = {w["index"]: w for w in outputs[target.host]["windows"]}
    raw = facts.raw if facts else {}
    base_meta = throughput_metadata(
        point,
        target,
        connections=connections,
        duration=duration,
        rule=rule,
        raw=raw,
        tool_version=client_tool_version,
    )
    samples: list[tuple[int, Sample]] = []
    values: list[float] = []
    evidence: list[RepetitionEvidence] = []
    problems: list[str] = []
    flags: list[str] = []
    suites: dict[str, int] = {}
    # multi-host: server network rates and merged client latency, per window and point
    extras = multihost_extras(
        [c.name for c in point.clients],
        target.host,
        outputs,
        windows,
        raw,
        point.server.sizing.nic_gbps,
    )
    for win in windows:
        idx = int(win["index"])
        totals = WindowTotals()
        for c in point.clients:
            cw = next((w for w in outputs[c.name]["windows"] if w["index"] == idx), None)
            client_window(point, c, cw, totals, samples, problems)
        sw = server_windows.get(idx)
        server_cpu = window_cpu(sw, target.workers)
        died = (
            f"nginx died on {target.host}"
            if sw is not None and sw.get("server_alive") is False
            else upstream_died(point, outputs, idx)
        )
        if died:
            # the figure of a window whose nginx (or its upstream) died cannot be trusted;
            # the run stops here, and `--resume` measures the point again
            return (
                PointResult(
                    key,
                    Status.FAILED,
                    f"{died} during " + ("the warm-up" if idx == 0 else f"repetition {idx}"),
                    repetitions=len(values),
                    flags=(SERVER_DIED,),
                    metadata=base_meta,
                ),
                samples,
            )
        tls = (sw or {}).get("tls") or {}
        upstreams = upstream_windows(point, outputs, idx)
        outside = kernel_outside(sw, target.workers)
        # Headroom is idle time on the server's pinned CPUs ("busy" counts every
        # non-idle tick); nginx's own CPU time is recorded beside it.
        server_busy = server_cpu["busy"] if server_cpu else None
        # the clients' starts and the server's CPU sample: a host Ansible reached after the
        # common start began late, and the skew says by how much
        starts = totals.starts + ([float(sw["start"])] if sw and sw.get("start") else [])
        skew = (max(starts) - min(starts)) if len(starts) > 1 else 0.0
        meta = {
            **base_meta,
            "repetition": idx,
            "warmup": idx == 0,
            "requests": totals.requests,
            "errors": totals.socket_errors + totals.http_errors,
            "socket_errors": totals.socket_errors,
            "http_errors": totals.http_errors,
            "start_skew_s": skew,
            # when the window began (epoch s): paired legs show their alternation by it
            "started_at": min(starts) if starts else None,
            "server_cpu": server_cpu,
            "nginx_cpu_pct": nginx_cpu_pct(sw, target.workers),
            "server_busy": server_busy,
            "client_cpu_busy": totals.client_cpu,
            "established": (sw or {}).get("established"),
            "tls_full": tls.get("full"),
            "tls_reused": tls.get("reused"),
            "throttled": (sw or {}).get("throttled"),
            "upstream_cpu": upstreams or None,
            "kernel_outside": outside,
            **extras.windows.get(idx, {}),  # multi-host: server_net, merged latency
        }
        samples.append((idx, Sample(prof.metric, totals.rps, prof.unit, meta)))
        if idx == 0 or totals.ran < len(point.clients):
            continue
        values.append(totals.rps)
        for suite, n in (tls.get("suites") or {}).items():
            suites[suite] = suites.get(suite, 0) + int(n)
        evidence.append(
            RepetitionEvidence(
                value=totals.rps,
                requests=totals.requests,
                socket_errors=totals.socket_errors,
                http_errors=totals.http_errors,
                server_busy=server_busy,
                server_steal=server_cpu["steal"] if server_cpu else None,
                client_busy=totals.client_cpu,
                established=(sw or {}).get("established"),
                tls_full=int(tls.get("full") or 0),
                tls_reused=int(tls.get("reused") or 0),
                throttled=int((sw or {}).get("throttled") or 0),
                upstream_busy={h: u["busy"] for h, u in upstreams.items() if u["busy"] is not None},
                upstream_capacity={h: u["capacity"] for h, u in upstreams.items()},
                upstream_shares_client=any(u.shares_with for u in point.upstreams),
                server_work=server_work(server_cpu, nginx_cpu_pct(sw, target.workers)),
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
    ci = median_ci(values)
    verdicts = judge(
        evidence,
        requested_connections=connections * len(point.clients),
        keepalive=prof.keepalive,
        handshake_profile=prof.scheme == "https" and not prof.keepalive,
        clients=len(point.clients),
        network_bound="network-bound" in extras.flags,
    )
    for v in verdicts:
        flags.append(v.flag)
        problems.append(v.reason)
    invalid = any(v.invalid for v in verdicts)
    drift, drift_why = repetition_flags(values)
    if drift:  # the host changed under the run, or one window measured something else
        flags.extend(drift)
        problems.append(drift_why)
    if rule.fixed is None and not rule.converged(values) and ci is not None:
        if ci.half_width > rule.target:
            flags.append("noisy")
            problems.append(
                f"noisy: ±{100 * ci.half_width:.1f}% ({interval_words(len(values))}) after "
                f"{len(values)} repetitions (target ±{100 * rule.target:.0f}%)"
            )
    if suites:
        base_meta["tls_suites"] = suites
    softirq_outside = [
        s.metadata["kernel_outside"]["softirq_pct"]
        for i, s in samples
        if i > 0 and s.metric == prof.metric and s.metadata.get("kernel_outside")
    ]
    base_meta["softirq_outside_pct_median"] = (
        statistics.median(softirq_outside) if softirq_outside else None
    )
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
