"""The methodology section, generated from the stored metadata and the engine's fits."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sizing.engine import CostCatalog
from sizing.engine.table import SizingTable
from sizing.intervals import interval_words
from sizing.model import FigureKind, PointResult, Status
from sizing.records import HostRecord, StopRuleRecord
from sizing.report.data.format import MISSING, PROFILE_LABELS, money, series_label
from sizing.report.data.guests import guest_facts, host_cpus, point_label
from sizing.report.data.model import Fact, HostView, Methodology, TableBlock, TCell
from sizing.sources import RunData
from sizing.trend import FDR, MIN_CHANGE, MIN_REPS

if TYPE_CHECKING:
    from sizing.catalog import Reference
    from sizing.store import StoredPoint

_DIRECTIVE = re.compile(r"^\s*([a-z_]+)\s+([^;{}]+);\s*$")


def nginx_fixed_directives(template: str) -> list[str]:
    """The directives of ``templates/nginx.conf.j2`` that are the same for every point.

    Lines with a template expression, and lines inside ``{% if %}`` or ``{% macro %}``
    blocks (which depend on the point), are left out.
    """
    out: list[str] = []
    depth = 0
    for line in re.sub(r"\{#.*?#\}", "", template, flags=re.S).splitlines():
        stripped = line.strip()
        if re.match(r"\{%-?\s*(if|macro|for)\b", stripped):
            depth += 1
            continue
        if re.match(r"\{%-?\s*end(if|macro|for)\b", stripped):
            depth = max(0, depth - 1)
            continue
        if depth or "{{" in line or "{%" in line or stripped.startswith("#"):
            continue
        m = _DIRECTIVE.match(line)
        if m and m.group(1) not in ("return", "default_type", "log_format"):
            d = f"{m.group(1)} {m.group(2).strip()};"
            if d not in out:
                out.append(d)
    return out


def distinct(values: Iterable[Any]) -> list[str]:
    """The values as text, once each, in order; None and empty ones left out."""
    seen: list[str] = []
    for v in values:
        if v is None or v == "" or v == {}:
            continue
        text = str(v)
        if text not in seen:
            seen.append(text)
    return seen


def _join(values: Iterable[Any], empty: str = "not recorded") -> str:
    d = distinct(values)
    return ", ".join(d) if d else empty


def _host_facts(host: HostRecord) -> list[Fact]:
    lscpu = host.lscpu or ""
    cpus = [ln for ln in lscpu.splitlines() if ln and not ln.startswith("#")]
    cores = {tuple(ln.split(",")[1:3]) for ln in cpus if ln.count(",") >= 2}
    facts = [
        Fact("CPU", host.cpu_model or "not recorded"),
        Fact(
            "CPUs",
            f"{len(cpus)} logical, {len(cores)} physical core{'s' if len(cores) != 1 else ''}"
            if cpus
            else "not recorded",
        ),
    ]
    if host.mem_total_kb:
        facts.append(Fact("Memory", f"{host.mem_total_kb / 1024 / 1024:.1f} GiB"))
    facts.append(Fact("Operating system", host.os or "not recorded"))
    facts.append(Fact("Kernel", f"{host.kernel or 'not recorded'} ({host.arch or '?'})"))
    facts.append(Fact("Virtualization", host.hypervisor or "none detected"))
    if host.governor:
        facts.append(Fact("CPU frequency governor", host.governor))
    if host.smt_control:
        facts.append(Fact("SMT (hyper-threading) control", host.smt_control))
    if host.nginx_version:
        built = host.nginx_openssl
        facts.append(
            Fact("nginx", host.nginx_version + (f", built with OpenSSL {built}" if built else ""))
        )
    if host.openssl_version:
        facts.append(Fact("OpenSSL", host.openssl_version))
    return facts


def _workloads(points: Sequence[tuple[RunData, StoredPoint]]) -> TableBlock | None:
    by_profile: dict[str, list[tuple[RunData, StoredPoint]]] = {}
    for run, p in points:
        by_profile.setdefault(p.result.key.profile, []).append((run, p))
    rows: list[tuple[TCell, ...]] = []
    for profile in sorted(by_profile, key=lambda p: (p not in PROFILE_LABELS, p)):
        items = by_profile[profile]
        loads = [p.result.metadata.workload for _, p in items]
        reps = [p.result.repetitions for _, p in items if p.result.repetitions]
        keepalive = distinct(
            "yes" if w.keepalive else "no" for w in loads if w.keepalive is not None
        )
        rows.append(
            (
                TCell(PROFILE_LABELS.get(profile, profile), numeric=False),
                TCell(_join(f"{w.file_size:,} B" for w in loads if w.file_size)),
                TCell(", ".join(keepalive) if keepalive else "not recorded", numeric=False),
                TCell(_join((w.tls_key for w in loads), MISSING), numeric=False),
                TCell(_join(w.connections for w in loads)),
                TCell(_join(f"{w.duration_s:g} s" for w in loads if w.duration_s)),
                TCell(
                    (f"{min(reps)}–{max(reps)}" if min(reps) != max(reps) else str(reps[0]))
                    if reps
                    else MISSING
                ),
            )
        )
    if not rows:
        return None
    return TableBlock(
        title="Workloads",
        headers=(
            "Metric",
            "File size",
            "Keep-alive",
            "TLS key",
            "Connections per client",
            "Timed repetition",
            "Repetitions per point",
        ),
        rows=tuple(rows),
    )


def methodology(
    runs: Sequence[RunData],
    reference: Reference,
    table: SizingTable,
    catalog: CostCatalog,
    nginx_template: str,
) -> Methodology:
    """The methodology section, generated from the stored metadata and the engine's fits."""
    used = [
        (run, p)
        for run in runs
        for p in run.points
        if p.result.status in (Status.MEASURED, Status.INVALID)
    ]
    ref_facts: list[Fact] = []
    reference_used = FigureKind.REFERENCE in table.sources_used or any(
        s.origin == FigureKind.REFERENCE for s in table.series
    )
    if reference_used:
        for arch, cond in reference.conditions.items():
            for k, v in cond.items():
                ref_facts.append(Fact(f"{arch.capitalize()}: {k}", " ".join(str(v).split())))
    cost = (
        Fact("Cost basis", table.cost_basis or "hardware price"),
        Fact("Catalog", catalog.name or "unnamed catalog"),
        Fact(
            "Prices",
            "; ".join(
                f"{o.cores} cores {money(o.price, catalog.currency)}" for o in catalog.servers
            ),
        ),
    )
    sources = [
        *(["the results store"] if used else []),
        *(["the bundled reference data"] if reference_used else []),
    ]
    return Methodology(
        measured=bool(used),
        hosts=tuple(_hosts(runs, used)),
        workloads=_workloads(used),
        settings=tuple(_settings(runs, used)) if used else (),
        nginx_directives=tuple(nginx_fixed_directives(nginx_template)) if used else (),
        nginx_per_point=tuple(_per_point(used)) if used else (),
        reference=tuple(ref_facts),
        models=tuple(Fact(series_label(*s.key), model_words(s)) for s in table.series),
        cost=cost,
        sources=" and ".join(sources) or "the results store",
    )


def model_words(s: Any) -> str:
    """A series' fitted scaling model for the engineers' appendix: the law, its parameters,
    where its curve would stop growing, and where its uncertainty comes from (the
    repetitions for a measured series; nothing for single published figures)."""
    fit = s.fit
    if fit.model != "usl" or fit.lam is None or fit.sigma is None or fit.kappa is None:
        return str(fit.describe())
    text = (
        f"Universal Scalability Law, λ = {fit.lam:,.0f} per core, σ = {fit.sigma:.4f} "
        f"(contention), κ = {fit.kappa:.5f} (coherence)"
    )
    peak = fit.peak
    if peak is not None and peak < 1e4:
        text += f"; the curve stops growing at about {peak:.0f} cores"
    n = len(fit.points)
    if fit.r2 is not None:
        text += f"; R² = {fit.r2:.3f} on {n} core counts"
    else:
        text += f"; passes through its {n} core counts exactly (no residual)"
    if s.origin == FigureKind.REFERENCE:
        return text + "; the published figures are single numbers, so it carries no interval"
    return text + "; its interval comes from the repetitions of the measured figures"


Used = Sequence[tuple[RunData, "StoredPoint"]]


def _hosts(runs: Sequence[RunData], used: Used) -> list[HostView]:
    """Every host of the runs with its role and facts."""
    envs = [p.result.metadata.env for _, p in used]
    servers = {p.result.key.host for _, p in used} | {e.target for e in envs if e.target}
    clients = {c for e in envs for c in (e.clients or ())}
    hosts = []
    for run in runs:
        for name, host in sorted(run.record.environment.items()):
            role = " and ".join(
                r
                for r, s in (("server (nginx)", servers), ("load generator", clients))
                if name in s
            )
            facts = _host_facts(host)
            mine = [p.result for r, p in used if r is run and p.result.key.host == name]
            guest = guest_facts(mine)
            if guest:
                facts = [_as_guest(f) for f in facts] + guest
            hosts.append(HostView(name, role or "host", run.record.id, tuple(facts)))
    return hosts


def _as_guest(fact: Fact) -> Fact:
    """A guest's CPU facts were read once, at the run's start: its vCPUs change per point."""
    if fact.label == "CPUs":
        return Fact(
            "CPUs",
            f"{fact.value} when the run began; the vCPUs change per point (vCPUs per point, below)",
        )
    if fact.label == "SMT (hyper-threading) control":
        return Fact(
            fact.label,
            f"{fact.value} inside the guest; hyper-threading is the host's: "
            "an HT-on point gives the guest two vCPUs per core",
        )
    return fact


def _settings(runs: Sequence[RunData], used: Used) -> list[Fact]:
    """How the points were measured: tools, builds, warm-up, repetitions, TLS."""
    metas = [p.result.metadata for _, p in used]
    envs = [m.env for m in metas]
    warmups = distinct(
        f"{warmup:g} s" for run in runs if (warmup := run.record.options.warmup_s) is not None
    )
    rules = distinct(_stop_rule_text(m.stop_rule) for m in metas if m.stop_rule)
    settings = [
        Fact("Load generator", _generators(used)),
        Fact("nginx", _join(e.nginx_version for e in envs)),
        Fact("OpenSSL (nginx's)", _join(e.openssl_version for e in envs)),
        Fact("Kernel", _join(e.kernel for e in envs)),
        Fact("CPU model", _join(e.cpu_model for e in envs)),
        Fact(
            "Warm-up before the timed repetitions",
            ", ".join(warmups) if warmups else "the workload profile's default (not stored)",
        ),
        Fact("Repetitions", "; ".join(rules) if rules else "not recorded"),
        Fact("Figure of a point", _figure_text(used)),
        Fact("Drift (a trend across a point's repetitions)", _drift_text(used)),
    ]
    return settings + _tls(used)


def _generators(used: Used) -> str:
    """The generator and its version that measured each figure (a point's own, never its
    host's): ``NAME VERSION (every figure)``, or each one with the figures it measured."""
    by_tool: dict[str, list[str]] = {}
    for _, p in used:
        env, key = p.result.metadata.env, p.result.key
        tool = env.measured_by or "not recorded"
        if env.tool and not env.tool_version:
            tool += " (version not recorded)"
        figure = f"{key.host} {PROFILE_LABELS.get(key.profile, key.profile)}"
        figures = by_tool.setdefault(tool, [])
        if figure not in figures:
            figures.append(figure)
    if len(by_tool) <= 1:
        return next((f"{t} (every figure)" for t in by_tool), "not recorded")
    return "; ".join(f"{t}: {', '.join(figures)}" for t, figures in sorted(by_tool.items()))


def _figure_text(used: Used) -> str:
    """The one interval every point carries, as used in these runs (from the repetitions)."""
    kinds = distinct(interval_words(p.result.repetitions) for _, p in used)
    return (
        "the median of its timed repetitions, with the interval of the median that assumes "
        "no distribution (the order statistics around the median; the share is the time it "
        "holds the true median): " + "; ".join(kinds)
    )


def _drift_text(used: Used) -> str:
    """How drift is tested, and how many points it flagged."""
    flagged = sum("drift" in p.result.flags for _, p in used)
    return (
        f"the Mann-Kendall trend test on each point with at least {MIN_REPS} repetitions; a "
        f"point is flagged when its trend is significant across its run's points at a "
        f"{FDR:.0%} false-discovery rate (Benjamini-Hochberg) and moves its figure by at "
        f"least {MIN_CHANGE:.0%}: {flagged} of {len(used)} points flagged"
    )


def _tls(used: Used) -> list[Fact]:
    """The TLS suites negotiated and the handshakes nginx logged, full and resumed."""
    out = []
    suites: dict[str, int] = {}
    for _, p in used:
        for suite, n in (p.result.metadata.evidence.tls_suites or {}).items():
            suites[suite] = suites.get(suite, 0) + n
    if suites:
        out.append(
            Fact(
                "TLS protocol and cipher negotiated",
                "; ".join(
                    f"{k} ({v:,} handshakes)"
                    for k, v in sorted(suites.items(), key=lambda kv: -kv[1])
                ),
            )
        )
    full = reused = 0
    for run, p in used:
        for rep, s in run.samples.get(p.id, ()):
            if rep and not s.metric.endswith(".client"):
                full += s.metadata.tls_full or 0
                reused += s.metadata.tls_reused or 0
    if full or reused:
        out.append(Fact("TLS handshakes logged by nginx", f"{full:,} full, {reused:,} resumed"))
    return out


def _per_point(used: Used) -> list[Fact]:
    """What nginx was told per point: its CPUs (a guest's vCPUs with the host CPUs under
    them), HT on or off, its workers, its certificate."""
    out = []
    several = len({p.result.key.host for _, p in used}) > 1
    pins = distinct(
        _pin_line(p.result, several)
        for _, p in used
        if p.result.metadata.env.server_cpus is not None
    )
    if pins:
        out.append(Fact("CPU pinning", "; ".join(pins)))
    out.append(
        Fact("worker_processes", "one worker per measured core, pinned with worker_cpu_affinity")
    )
    keys = distinct(p.result.metadata.workload.tls_key for _, p in used)
    if keys:
        out.append(Fact("ssl_certificate", "key type " + ", ".join(keys)))
    return out


def _stop_rule_text(rule: StopRuleRecord) -> str:
    if rule.fixed:
        return f"exactly {rule.fixed} per point"
    target = rule.target_half_width
    return (
        f"adaptive: {rule.min} to {rule.max} per point, until the interval "
        f"of the median is within ±{target * 100:g}%"
        if target is not None
        else f"{rule.min} to {rule.max} per point"
    )


def _pin_line(r: PointResult, several_hosts: bool) -> str:
    """``r640-01, 1 core, HT on: nginx on CPU 0,40, load generator on CPU 20-39``."""
    env = r.metadata.env
    line = (f"{r.key.host}, " if several_hosts else "") + f"{point_label(r)}: nginx on "
    under = host_cpus(r)
    line += f"vCPU {env.server_cpus} (host CPU {under})" if under else f"CPU {env.server_cpus}"
    clients = ", ".join((env.client_cpus or {}).values())
    return line + (f", load generator on CPU {clients}" if clients else "")
