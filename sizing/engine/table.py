"""The cost-per-throughput table: the sizing guide's table, computed.

For every series (platform × HT mode × profile) and every core count the catalog sells it
gives the throughput, the throughput per core, the scaling efficiency against one core
(X(N) / (N · X(1))), the cost per 1,000 RPS or per 100 TPS of one server, and, where both
a bare-metal and a hypervisor figure were observed from the same source, the
virtualization overhead ``(bare metal − hypervisor) / bare metal`` in percent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.costs import CostCatalog
from sizing.engine.figures import Series, build_series
from sizing.model import Figure

COST_UNITS = {"rps": 1000.0, "tps": 100.0}
COST_UNIT_LABELS = {"rps": "1k RPS", "tps": "100 TPS"}


@dataclass(frozen=True)
class Cell:
    """One figure of the table with what is derived from it."""

    platform: str
    ht: str
    profile: str
    cores: int
    value: float
    unit: str
    source: str  # measured | reference | extrapolated
    basis: str  # measured | reference: what the figure (or its model) came from
    origin: str
    emulated: bool
    per_core: float
    efficiency: float
    server_cost: float
    cost_per_unit: float
    cost_unit: str
    overhead_pct: float | None = None
    # 95% interval of the overhead when both figures are measured with intervals.
    overhead_ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "overhead_ci_pct": None if self.overhead_ci is None else list(self.overhead_ci),
            "platform": self.platform,
            "ht": self.ht,
            "profile": self.profile,
            "cores": self.cores,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "basis": self.basis,
            "origin": self.origin,
            "emulated": self.emulated,
            "per_core": self.per_core,
            "efficiency": self.efficiency,
            "server_cost": self.server_cost,
            "cost_per_unit": self.cost_per_unit,
            "cost_unit": self.cost_unit,
            "overhead_pct": self.overhead_pct,
        }


@dataclass(frozen=True)
class TableRow:
    """One core count: its hardware price and every series' cell."""

    cores: int
    hardware_cost: float
    cells: tuple[Cell, ...]

    def cell(self, platform: str, ht: str, profile: str) -> Cell | None:
        for c in self.cells:
            if (c.platform, c.ht, c.profile) == (platform, ht, profile):
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cores": self.cores,
            "hardware_cost": self.hardware_cost,
            "cells": [c.to_dict() for c in self.cells],
        }


@dataclass(frozen=True)
class SizingTable:
    """The whole table, the series' fits and the sources it used."""

    rows: tuple[TableRow, ...]
    series: tuple[Series, ...]
    source: str
    sources_used: tuple[str, ...]
    cost_basis: str
    currency: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "sources_used": list(self.sources_used),
            "cost_basis": self.cost_basis,
            "currency": self.currency,
            "rows": [r.to_dict() for r in self.rows],
            "series": [s.to_dict() for s in self.series],
        }


def overhead_pct(baremetal: Figure, hypervisor: Figure) -> float | None:
    """Virtualization overhead in percent, for a pair observed from the same source."""
    if baremetal.source != hypervisor.source or "extrapolated" in (
        baremetal.source,
        hypervisor.source,
    ):
        return None
    return (baremetal.value - hypervisor.value) / baremetal.value * 100.0


def overhead_interval(baremetal: Figure, hypervisor: Figure) -> tuple[float, float] | None:
    """Bounds of the overhead (%) from the two figures' 95% intervals (conservative:
    the overhead is largest with the fastest bare metal and the slowest guest)."""
    if overhead_pct(baremetal, hypervisor) is None:
        return None
    return overhead_bounds(
        baremetal.ci_low, baremetal.ci_high, hypervisor.ci_low, hypervisor.ci_high
    )


def overhead_bounds(
    b_lo: float | None, b_hi: float | None, h_lo: float | None, h_hi: float | None
) -> tuple[float, float] | None:
    """Overhead bounds (%) from a bare-metal and a guest 95% interval: the lowest pairs the
    bare-metal low end with the guest's high end, the highest the other way round. None
    when an end is missing or the bare-metal interval does not stay above zero."""
    if b_lo is None or b_hi is None or h_lo is None or h_hi is None or b_lo <= 0:
        return None
    return ((1 - h_hi / b_lo) * 100.0, (1 - h_lo / b_hi) * 100.0)


def build_table(figures: Sequence[Figure], catalog: CostCatalog) -> SizingTable:
    """Compute the table for every series at every core count of the catalog."""
    series = build_series(figures)
    rows: list[TableRow] = []
    for cores in catalog.core_counts():
        cells: list[Cell] = []
        for s in series.values():
            f = s.at(cores)
            one = s.at(1).value
            cost = catalog.server_cost(s.platform, cores).total
            overhead = None
            overhead_ci = None
            if s.platform == "hypervisor" and ("baremetal", s.ht, s.profile) in series:
                bare = series[("baremetal", s.ht, s.profile)].at(cores)
                overhead = overhead_pct(bare, f)
                overhead_ci = overhead_interval(bare, f)
            cells.append(
                Cell(
                    platform=s.platform,
                    ht=s.ht,
                    profile=s.profile,
                    cores=cores,
                    value=f.value,
                    unit=f.unit,
                    source=f.source,
                    basis=s.basis,
                    origin=f.origin,
                    emulated=f.emulated,
                    per_core=f.value / cores,
                    efficiency=f.value / (cores * one),
                    server_cost=cost,
                    cost_per_unit=cost / (f.value / COST_UNITS[s.profile]),
                    cost_unit=COST_UNIT_LABELS[s.profile],
                    overhead_pct=overhead,
                    overhead_ci=overhead_ci,
                )
            )
        offer = catalog.offer(cores)
        assert offer is not None
        rows.append(TableRow(cores=cores, hardware_cost=offer.price, cells=tuple(cells)))
    used = sorted({c.source for r in rows for c in r.cells})
    return SizingTable(
        rows=tuple(rows),
        series=tuple(series.values()),
        source=_source_of(series.values()),
        sources_used=tuple(used),
        cost_basis=catalog.basis,
        currency=catalog.currency,
    )


def _source_of(series: Iterable[Series]) -> str:
    bases = {s.basis for s in series}
    if bases == {"measured", "reference"}:
        return "both"
    return bases.pop() if bases else "none"
