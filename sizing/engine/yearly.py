"""A plan year by year (:mod:`sizing.engine.cashflow` makes it): what each year pays,
part by part, and the fleet in service. Pure data, in every output (terminal, ``--json``,
the guide)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CashFlow", "YearRow"]


@dataclass(frozen=True)
class YearRow:
    """One year of a plan: the demand it must carry, the servers bought and in service
    (``(label, count)``), and what is paid that year, part by part."""

    year: int
    rps: float | None
    tps: float | None
    bought: tuple[tuple[str, int], ...]
    fleet: tuple[tuple[str, int], ...]
    hardware: float
    licence: float
    support: float
    power: float
    utilization: float  # of the counted capacity at that year's demand
    licences: tuple[tuple[str, float], ...] = ()  # ``licence`` line by line, by name

    @property
    def total(self) -> float:
        return self.hardware + self.licence + self.support + self.power

    @property
    def servers(self) -> int:
        return sum(n for _, n in self.fleet)

    def to_dict(self) -> dict[str, Any]:
        return {
            "year": self.year,
            "demand_rps": None if self.rps is None else round(self.rps, 1),
            "demand_tps": None if self.tps is None else round(self.tps, 1),
            "bought": [{"server": s, "count": n} for s, n in self.bought],
            "fleet": [{"server": s, "count": n} for s, n in self.fleet],
            "servers": self.servers,
            "hardware": round(self.hardware, 2),
            "licence": round(self.licence, 2),
            "licences": [{"name": n, "cost": round(c, 2)} for n, c in self.licences],
            "support": round(self.support, 2),
            "power": round(self.power, 2),
            "total": round(self.total, 2),
            "utilization": round(self.utilization, 4),
        }


@dataclass(frozen=True)
class CashFlow:
    """A plan over whole years: one row a year, and the fleet the last year needs."""

    platform: str
    ht: str
    basis: str
    years: int
    growth: float  # a year, 0.3 = 30%
    rows: tuple[YearRow, ...]
    currency: str
    note: str = ""  # why the plan stops early (--max-servers), else empty

    @property
    def total(self) -> float:
        return sum(r.total for r in self.rows)

    @property
    def last_fleet(self) -> tuple[tuple[str, int], ...]:
        return self.rows[-1].fleet if self.rows else ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "ht": self.ht,
            "basis": self.basis,
            "years": self.years,
            "growth_per_year": self.growth,
            "currency": self.currency,
            "rows": [r.to_dict() for r in self.rows],
            "total": round(self.total, 2),
            "last_year_fleet": [{"server": s, "count": n} for s, n in self.last_fleet],
            "note": self.note,
        }
