"""The guide's "About this guide" facts (pure): who prepared it and when, the prices'
source, what a cost includes and what it does not, and the hosts measured, each named as
what it is (bare metal, an ESXi guest, a virtualized host: never a guest as bare metal)."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.engine import CostCatalog
from sizing.model import basis_platform
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
    """What a server's cost includes, and what it leaves out, in words."""
    yes = ["hardware (the catalog's server price)"]
    no: list[str] = []
    if catalog.licences:
        yes.append("platform licence (" + ", ".join(sorted(catalog.licences)) + ")")
    else:
        no.append("software and hypervisor licences")
    if catalog.price_per_kwh is not None and catalog.amortisation_months is not None:
        yes.append(f"power over {catalog.amortisation_months} months at "
                   f"{catalog.price_per_kwh:g} {catalog.currency}/kWh")  # fmt: skip
    else:
        no.append("power")
    if catalog.support is not None and catalog.amortisation_months is not None:
        yes.append(f"support at {catalog.support.share_of_hardware_per_year * 100:g}% of the "
                   "hardware a year")  # fmt: skip
    else:
        no.append("support contracts")
    no.append("rack space, cooling and network")
    return ", ".join(yes), ", ".join(no)


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
        Fact("Costs do not include", no),
    ]
    return tuple(facts)


def measured_on(runs: Sequence[RunData]) -> tuple[str, ...]:
    """The guide body's measured hosts as what they are, alike ones together:
    ``r640-01, r640-02 (bare metal, Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz)``,
    ``nginx-esxi1 (ESXi guest, ...)``; a virtualized host is never called bare metal."""
    groups: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        for p in run.points:
            key = p.result.key
            name = basis_platform(key.platform, p.result.flags)
            label = PLATFORM_LABELS.get(name, name)
            if name in ("kvm", "esxi"):
                label += " guest"
            elif name in ("baremetal", "virtualized-host"):
                label = label.lower()
            host = run.record.hosts.get(key.host)
            cpu = host.cpu_model if host is not None and host.cpu_model else ""
            names = groups.setdefault((label, cpu), [])
            if key.host not in names:
                names.append(key.host)
    return tuple(f"{', '.join(names)} ({label}{', ' + cpu if cpu else ''})"
                 for (label, cpu), names in groups.items())  # fmt: skip
