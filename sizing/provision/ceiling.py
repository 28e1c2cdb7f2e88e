"""The crypto ceiling of server hosts: ``openssl speed`` of each TLS profile's private-key
operation, pinned to one of their points' cores (``playbooks/ceiling.yml``), once per host
and run. :mod:`sizing.ceilings` says what the figure means."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sizing.ceilings import ALGORITHMS, CryptoRate, HostCeilings
from sizing.facts import HostFacts
from sizing.load.openssl_speed import OPENSSL_ALG, SpeedParseError, parse_speed
from sizing.plan.points import PlannedPoint
from sizing.provision.ansible import Playbooks
from sizing.records.codec import load

__all__ = ["CEILING_TASK", "CeilingJob", "ceiling_jobs", "measure_ceilings"]

CEILING_TASK = "Run openssl speed on the pinned cores"
_CPUS = re.compile(r"^[0-9]+([,-][0-9]+)*$")


@dataclass(frozen=True, order=True)
class CeilingJob:
    """One measurement: ``threads`` processes of ``openssl speed ALG`` on ``cpus``."""

    alg: str
    cpus: str
    threads: int = 1

    def arg(self) -> str:
        if self.alg not in ALGORITHMS or not _CPUS.match(self.cpus) or self.threads < 1:
            raise ValueError(f"bad ceiling job {self}")
        return f"{OPENSSL_ALG[self.alg]}:{self.cpus}:{self.threads}"


def measure_ceilings(
    playbooks: Playbooks, jobs: Mapping[str, Sequence[CeilingJob]]
) -> tuple[dict[str, HostCeilings], dict[str, str]]:
    """Run every host's jobs in one playbook; returns each host's ceilings (with
    ``missing`` saying why when none could be measured) and a problem line per host the
    playbook could not reach."""
    hosts = sorted(h for h, js in jobs.items() if js)
    if not hosts:
        return {}, {}
    t0 = time.monotonic()
    res = playbooks.run(
        "ceiling.yml",
        hosts,
        extravars={
            "sizing_hosts": ",".join(hosts),
            "sizing_ceiling_jobs": {
                h: " ".join(j.arg() for j in sorted(set(jobs[h]))) for h in hosts
            },
        },
    )
    took = time.monotonic() - t0
    problems = res.problems()
    out: dict[str, HostCeilings] = {}
    for host in hosts:
        try:
            doc = res.json(host, CEILING_TASK)
        except ValueError as exc:
            out[host] = HostCeilings(missing=f"openssl speed output unreadable: {exc}", took_s=took)
            continue
        if doc is None:
            why = problems.get(host, f"playbook {res.status}")
            out[host] = HostCeilings(missing=f"not measured: {why}", took_s=took)
            continue
        out[host] = _host(doc, took)
    return out, problems


@dataclass(frozen=True)
class SpeedJob:
    """One job's output, as ``playbooks/files/ceiling.py`` reports it."""

    alg: str = ""  # openssl's name (rsa2048, ecdsap256)
    cpus: str = ""
    threads: int = 1
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float | None = None


@dataclass(frozen=True)
class SpeedReport:
    """What ``playbooks/files/ceiling.py`` prints: the binary measured, each job's output,
    or why nothing could be measured."""

    openssl: str | None = None
    jobs: tuple[SpeedJob, ...] = ()
    missing: str = ""


def _host(doc: Mapping[str, object], took: float) -> HostCeilings:
    report = load(SpeedReport, doc)
    if report.missing:
        return HostCeilings(missing=report.missing, took_s=took)
    rates: list[CryptoRate] = []
    why: list[str] = []
    tls_key = {v: k for k, v in OPENSSL_ALG.items()}
    for j in report.jobs:
        try:
            if j.rc != 0:
                raise SpeedParseError(
                    f"openssl speed {j.alg} failed (rc {j.rc}): "
                    + (j.stderr.strip().splitlines() or ["no message"])[-1]
                )
            rates.append(
                parse_speed(j.stdout, tls_key.get(j.alg, ""), cpus=j.cpus, threads=j.threads)
            )
        except SpeedParseError as exc:
            why.append(str(exc))
    return HostCeilings(
        openssl=report.openssl or "",
        crypto=tuple(rates),
        missing="" if rates or not why else "; ".join(why),
        took_s=took,
    )


def ceiling_jobs(
    plan: Sequence[PlannedPoint], facts: Mapping[str, HostFacts], placement: Mapping[str, str]
) -> dict[str, list[CeilingJob]]:
    """What to measure: for every server of a full-handshake point, its certificate's
    operation on the first CPU the point pins (HT off) or on all siblings of that CPU's
    core (HT on). A container's is measured on its host (its CPUs are the host's); a guest
    booted per point (``placement``: guest -> its host) has none measured."""
    out: dict[str, set[CeilingJob]] = {}
    for p in plan:
        prof = p.profile
        if p.skipped or p.allocation is None:
            continue
        if prof.metric != "handshakes_per_second" or prof.tls_key not in ALGORITHMS:
            continue
        name = p.server.name
        if name in placement:
            if not p.server.platform.shares_host_cpus:
                continue
            name = placement[name]
        first = p.allocation.server_cpus[0]
        cpus: tuple[int, ...] = (first,)
        f = facts.get(name)
        if p.key.ht == "on" and f is not None:
            cpus = next((g for g in f.topology.physical_cores() if first in g), cpus)
        job = CeilingJob(prof.tls_key, ",".join(str(c) for c in cpus), len(cpus))
        out.setdefault(name, set()).add(job)
    return {h: sorted(js) for h, js in out.items()}
