"""The guide's "About this guide" facts (pure): who prepared it and when, the prices'
source, what a cost includes and what it does not, and the hosts measured, each named as
what it is (bare metal, an ESXi guest, a virtualized host: never a guest as bare metal)."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine import NEVER_PRICED, CostCatalog
from sizing.model import Status, basis_platform
from sizing.report.data.format import PLATFORM_LABELS
from sizing.report.data.model import Fact, GuideRequest
from sizing.sources import RunData

__all__ = ["about_facts", "cost_includes", "measured_on"]


def _catalog_text(catalog: CostCatalog) -> str:
    """The catalog's name, source and date, those it has."""
    parts = [catalog.name or "unnamed catalog"]
    source, date = catalog.source, catalog.date
    if source and source != catalog.name:
        parts.append(f"source: {source}")
    if date:
        parts.append(f"prices of {date}")
    return "; ".join(parts)


def cost_includes(catalog: CostCatalog) -> tuple[str, str]:
    """What a server's cost includes, and what it leaves out, in words: the engine's words
    (:meth:`CostCatalog.scope`, those of every answer's "left out"), and what no catalog
    prices."""
    scope = catalog.scope()
    return ", ".join(scope.priced), ", ".join((*scope.left_out, NEVER_PRICED))


def about_facts(request: GuideRequest, catalog: CostCatalog) -> tuple[Fact, ...]:
    """Who prepared the guide, when, the prices' source and what a cost includes."""
    yes, no = cost_includes(catalog)
    facts = [Fact("Prepared by", request.prepared_by)] if request.prepared_by else []
    if request.customer:
        facts.append(Fact("Prepared for", request.customer))
    facts += [
        Fact("Date", request.date),
        Fact("Prices", f"{_catalog_text(catalog)}; in {catalog.currency}"),
        Fact("Costs include", yes),
        Fact("Left out of the costs", no),
    ]
    return tuple(facts)


def measured_on(runs: Sequence[RunData]) -> tuple[str, ...]:
    """The guide body's measured hosts as what they are, alike ones together:
    ``r640-01, r640-02 (bare metal, Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz)``,
    ``nginx-esxi1 (ESXi guest, ...)``; a virtualized host is never called bare metal."""
    groups: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        for p in run.points:
            if p.result.status not in (Status.MEASURED, Status.INVALID):
                continue  # a skipped or failed point measured nothing on its host
            key = p.result.key
            name = basis_platform(key.platform, p.result.flags)
            label = PLATFORM_LABELS.get(name, name)
            if name in ("kvm", "esxi"):
                label += " guest"
            elif name in ("baremetal", "virtualized-host"):
                label = label.lower()
            host = run.record.environment.get(key.host)
            cpu = host.cpu_model if host is not None and host.cpu_model else ""
            names = groups.setdefault((label, cpu), [])
            if key.host not in names:
                names.append(key.host)
    return tuple(
        f"{', '.join(names)} ({label}{', ' + cpu if cpu else ''})"
        for (label, cpu), names in groups.items()
    )
