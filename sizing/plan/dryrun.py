"""``sizing run --plan``: the points, hosts, CPU sets and exact commands, as one document.

Built from the facts and the plan only: nothing is installed, provisioned or loaded, and
the results store is not written. Offline (the default) the facts are the inventory's
declared ones (``sizing_cpu``) and no host is contacted; ``--probe`` reads the real ones.
The wrk argv lists are the very ones the sweep would run (``sizing.plan.loadspec``), so a
large lab can be checked before it is used.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sizing.errors import ExitStatus, SizingError
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory
from sizing.load import oha, vegeta, wrk
from sizing.model import PointKey
from sizing.plan.loadspec import (
    client_ceiling,
    client_oha_spec,
    client_vegeta_spec,
    client_wrk_spec,
    oha_path,
    url_for,
    vegeta_path,
)
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import MeasureSettings, Schedule
from sizing.topology import affinity_masks, cpulist

__all__ = ["exit_status", "plan_document", "plan_text", "vegeta_plan_argv"]


def _windows(schedule: Schedule) -> dict[str, Any]:
    return {
        "warmup_s": schedule.warmup_s,
        "duration_s": schedule.duration_s,
        "repetitions": schedule.first_reps,
    }


def vegeta_plan_argv(
    schedule: Schedule, point: PlannedPoint, client: Host, url: str, duration: float
) -> list[str] | str:
    """A latency point's dry run: the oha run or vegeta attack of the first offered rate on
    ``client``."""
    try:
        if point.profile.generator == "oha":
            ospec = client_oha_spec(point, client, url, schedule.rates()[0], duration,
                                    window=False)
            return oha.argv(ospec, oha=oha_path(client))
        spec = client_vegeta_spec(
            point, client, url, schedule.rates()[0], duration, window=False
        )
        argv: list[str] = vegeta.attack_argv(spec, vegeta=vegeta_path(client))
    except SizingError as exc:
        return f"cannot build: {exc}"
    return argv


def _point(
    settings: MeasureSettings, point: PlannedPoint, done: Collection[PointKey]
) -> dict[str, Any]:
    k = point.key
    doc: dict[str, Any] = {
        "host": k.host,
        "platform": k.platform,
        "cores": k.cores,
        "ht": k.ht,
        "profile": k.profile,
        "status": ("stored" if k in done else "skipped" if point.skipped else "planned"),
        "reason": point.skip_reason or ("already in the resumed run" if k in done else ""),
    }
    if point.skipped or point.allocation is None:
        return doc
    schedule = Schedule.of(settings, point.profile)
    connections = schedule.connections
    url = url_for(point, point.server.address)
    windows = _windows(schedule)
    clients = []
    for c in point.clients:
        spec = client_wrk_spec(point, c, url, connections, float(windows["duration_s"]))
        try:
            argv: list[str] | str = wrk.build_argv(spec)
        except Exception as exc:  # noqa: BLE001 - shown, and the pre-flight says it too
            argv = f"cannot build: {exc}"
        if point.profile.mode == "fixed-rate":  # latency profiles: vegeta, one attack per rate
            argv = vegeta_plan_argv(schedule, point, c, url, float(windows["duration_s"]))
        clients.append(
            {
                "host": c.name,
                "cpus": cpulist(point.client_cpus.get(c.name, ())) or "any",
                "threads": spec.threads,
                "connections": connections,
                "argv": argv,
            }
        )
    doc.update(
        {
            "server_cpus": cpulist(point.allocation.server_cpus),
            "nginx_workers": len(point.allocation.server_cpus),
            "worker_cpu_affinity": affinity_masks(point.allocation.server_cpus),
            "url": url,
            "windows": windows,
            "clients": clients,
        }
    )
    if point.profile.mode == "fixed-rate":  # what the clients can offer (sizing.knee climb)
        ceiling, cores, per_core = client_ceiling(point)
        fixed = (bool(settings.rates) or schedule.slo() is not None
                 or point.profile.metric == "gateway_cpu_curve")
        doc["offered"] = {
            "rates": list(schedule.rates()) if fixed else None,
            "climb_from": None if fixed else schedule.rates()[0],
            "client_ceiling": ceiling,
            "client_cores": cores,
            "planning_rate_per_core": per_core,
            "generator": point.profile.generator,
        }
    if point.upstreams:  # where the upstream nginx pool runs (never on the measured cores)
        doc["upstreams"] = [
            {"host": u.host, "cpus": cpulist(u.cpus) or "all", "where": u.describe()}
            for u in point.upstreams
        ]
    return doc


def plan_document(
    settings: MeasureSettings,
    resume_run: int | None,
    inventory: Inventory,
    hosts: Sequence[Host],
    facts: Mapping[str, HostFacts],
    plan: Sequence[PlannedPoint],
    done: Collection[PointKey],
    unreachable: Mapping[str, str],
    checks: Sequence[str],
    *,
    probed: bool = True,
) -> dict[str, Any]:
    """The dry run as one JSON-ready document. ``probed``: the facts were read from the
    hosts (``--probe``) rather than declared, and the pre-flight checks ran."""
    host_docs = []
    for h in hosts:
        f = facts.get(h.name)
        host_docs.append(
            {
                "name": h.name,
                "roles": sorted(h.roles),
                "address": h.address,
                "facts": (str(f.raw.get("facts", "probed")) if f else None),
                "reachable": (f is not None) if probed else None,
                "problem": unreachable.get(h.name),
                "cpus": len(f.topology.cpus) if f else None,
                "topology": f.topology.describe() if f else None,
                "cpu_model": f.raw.get("cpu_model") if f else None,
            }
        )
    measured = [p for p in plan if not p.skipped and p.key not in done]
    configs = sorted({p.config for p in measured})
    return {
        "inventory": str(inventory.path),
        "resume_run": resume_run,
        "probed": probed,
        "hosts": host_docs,
        "points": [_point(settings, p, done) for p in plan],
        "playbooks": [
            {"playbook": "facts.yml", "runs": 1 if probed else 0, "done": probed},
            {"playbook": "clients.yml", "runs": 1 if measured else 0},
            {"playbook": "nginx.yml", "runs": len(configs), "note": "at most, once per config"},
            {"playbook": "load.yml", "runs": len(measured)},
        ],
        "preflight": list(checks),
    }


def plan_text(doc: Mapping[str, Any]) -> str:
    """The dry run for people: hosts, then each point with its CPU sets and commands."""
    import shlex

    lines = [
        f"plan for {doc['inventory']}"
        + (f" (resuming run {doc['resume_run']})" if doc.get("resume_run") is not None else "")
    ]
    probed = doc.get("probed", True)
    lines.append(
        "hosts (facts read from the hosts):"
        if probed
        else "hosts (offline: declared facts, nothing contacted; --probe reads the hosts):"
    )
    for h in doc["hosts"]:
        if not probed:
            state = (
                f"{h['facts']} {h['topology']}" if h["facts"] else f"NOT PLANNED: {h['problem']}"
            )
        elif h["reachable"]:
            state = "reachable"
        else:
            state = f"UNREACHABLE: {h['problem']}"
        cpus = f", {h['cpus']} CPUs" if h["cpus"] and probed else ""
        lines.append(f"  {h['name']} ({','.join(h['roles'])}) {h['address']}{cpus}: {state}")
    lines.append("points:")
    for p in doc["points"]:
        label = f"{p['host']} {p['platform']} {p['cores']}c ht={p['ht']} {p['profile']}"
        if p["status"] != "planned":
            lines.append(f"  {label}: {p['status']} ({p['reason']})")
            continue
        w = p["windows"]
        lines.append(
            f"  {label}: nginx {p['nginx_workers']} worker(s) on CPUs {p['server_cpus']} "
            f"(worker_cpu_affinity {p['worker_cpu_affinity']}); "
            f"{w['repetitions']} x {w['duration_s']} s after {w['warmup_s']} s warm-up"
        )
        for c in p["clients"]:
            argv = c["argv"] if isinstance(c["argv"], str) else shlex.join(c["argv"])
            lines.append(f"    {c['host']} (CPUs {c['cpus']}): {argv}")
        for u in p.get("upstreams", ()):
            lines.append(f"    upstream nginx: {u['where']}")
        o = p.get("offered")
        if o:
            what = (f"climbs from {o['climb_from']:,}/s to the knee" if o["climb_from"]
                    else f"offers {len(o['rates'])} rate(s) up to {max(o['rates']):,}/s")
            lines.append(
                f"    {what}; the clients offer at most {o['client_ceiling']:,.0f}/s "
                f"({o['client_cores']} client core(s) x {o['planning_rate_per_core']:,}/s, "
                f"{o['generator']}'s planning figure from benchmarks/generators)")
    runs = ", ".join(f"{pb['playbook']} x{pb['runs']}" for pb in doc["playbooks"])
    lines.append(f"playbooks: {runs}")
    if not probed and doc["preflight"]:
        lines.append("inventory problems (checked offline; the run would stop before any load):")
        lines += [f"  - {p}" for p in doc["preflight"]]
        lines.append("pre-flight on the hosts: not run offline (--probe reads them and runs it)")
    elif not probed:
        lines.append("pre-flight: not run offline (--probe reads the hosts and runs it)")
    elif doc["preflight"]:
        lines.append("pre-flight problems (the run would stop before any load):")
        lines += [f"  - {p}" for p in doc["preflight"]]
    else:
        lines.append("pre-flight: all checks pass")
    return "\n".join(lines)


def exit_status(doc: Mapping[str, Any]) -> ExitStatus:
    """``--plan`` exits non-zero when a pre-flight check fails."""
    return ExitStatus.HOST if doc["preflight"] else ExitStatus.OK
