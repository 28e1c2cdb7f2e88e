"""``sizing probe-ceiling``: a host's crypto ceiling without nginx, to carry a TLS basis
to the CPU a customer will buy (``recommend --cpu``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sizing.ceilings import ALGORITHMS, openssl_build
from sizing.errors import UsageError
from sizing.inventory import load_inventory
from sizing.provision.ansible import Playbooks
from sizing.provision.ceiling import CeilingJob, measure_ceilings
from sizing.provision.facts import gather_facts

__all__ = ["Probed", "probe"]


@dataclass(frozen=True)
class Probed:
    """One server's ceiling: signings per second on one core (and on one core's HT
    siblings together), or why there is none (``problem``)."""

    host: str
    cpu_model: str
    openssl: str
    tls_key: str
    sign_per_core: float | None
    sign_per_core_ht: float | None
    cpus: str
    took_s: float | None
    problem: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def algorithm(self) -> str:
        """The signing operation measured, in words (``RSA 2048``)."""
        return ALGORITHMS[self.tls_key]

    @property
    def build(self) -> str:
        """The OpenSSL that measured it, in words."""
        return openssl_build(self.openssl)


def _jobs(tls_key: str, cpu: int, siblings: str | None) -> list[CeilingJob]:
    if tls_key not in ALGORITHMS:
        raise UsageError(f"--tls-key: {tls_key!r} is not one of {', '.join(ALGORITHMS)}")
    if cpu < 0:
        raise UsageError(f"--cpu-id must be 0 or more, not {cpu}")
    jobs = [CeilingJob(tls_key, str(cpu), 1)]
    if siblings:
        ids = [s.strip() for s in siblings.split(",")]
        if len(ids) < 2 or not all(s.isdigit() for s in ids):
            raise UsageError(f"--ht-siblings: {siblings!r} is not a list of CPU ids (e.g. 0,16)")
        jobs.append(CeilingJob(tls_key, ",".join(ids), len(ids)))
    return jobs


def probe(
    inventory: Path,
    *,
    limit: str | None,
    tls_key: str,
    cpu: int,
    siblings: str | None,
    debug: bool = False,
) -> list[Probed]:
    """Measure the ceiling on every server of ``inventory`` (pinned ``openssl speed`` of the
    certificate's signing operation, about 2 s per measurement)."""
    jobs = _jobs(tls_key, cpu, siblings)
    inv = load_inventory(inventory, limit=limit)
    servers = [h for h in inv.hosts.values() if "server" in h.roles]
    if not servers:
        raise UsageError(f"{inventory}: no host in the servers group to probe")
    playbooks = Playbooks(inv.inventories, debug)
    facts, unreachable = gather_facts(playbooks, servers)
    if siblings:
        want = tuple(sorted(int(x) for x in jobs[-1].cpus.split(",")))
        for name, hf in facts.items():
            groups = [tuple(sorted(g)) for g in hf.topology.physical_cores()]
            if want not in groups:
                shown = ", ".join(",".join(map(str, g)) for g in groups[:4])
                raise UsageError(
                    f"--ht-siblings {siblings}: on {name} these CPUs are not the threads of one "
                    f"core (its cores' threads: {shown}{', ...' if len(groups) > 4 else ''})"
                )
    got, problems = measure_ceilings(playbooks, {h.name: jobs for h in servers if h.name in facts})
    out = []
    for h in servers:
        c, f = got.get(h.name), facts.get(h.name)
        single = c.rate(tls_key, 1) if c else None
        pair = c.rate(tls_key, len(jobs[-1].cpus.split(","))) if c and siblings else None
        out.append(
            Probed(
                host=h.name,
                cpu_model=(f.cpu_model if f is not None else None) or "",
                openssl=c.openssl if c else "",
                tls_key=tls_key,
                sign_per_core=None if single is None else round(single.sign_per_s, 1),
                sign_per_core_ht=None if pair is None else round(pair.sign_per_s, 1),
                cpus=jobs[0].cpus,
                took_s=None if c is None or c.took_s is None else round(c.took_s, 2),
                problem=unreachable.get(h.name) or problems.get(h.name) or (c.missing if c else ""),
            )
        )
    return out
