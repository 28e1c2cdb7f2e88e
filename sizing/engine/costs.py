"""What a server costs: hardware, an optional per-platform licence and optional power.

A cost catalog maps a core count to a server price. With nothing else given the cost of a
server is its hardware price. With ``amortisation_months`` the catalog prices a server over
that period, a total cost of ownership:

    total = hardware + licence (for the platform) + power over the period

where power is ``watts at load / 1000 * hours in the period * price per kWh`` (a month is
730 hours) and a licence priced ``yearly`` counts ``amortisation_months / 12`` times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12


@dataclass(frozen=True)
class Licence:
    """A platform licence, priced per socket or per core, once or every year."""

    per: str  # "socket" | "core"
    price: float
    term: str = "once"  # "once" | "yearly"

    def cost(self, *, cores: int, sockets: int, months: int | None) -> float:
        """The licence cost of one server over the amortisation period."""
        units = sockets if self.per == "socket" else cores
        terms = 1.0 if self.term == "once" else (months or 12) / 12.0
        return self.price * units * terms


@dataclass(frozen=True)
class ServerOffer:
    """One server the catalog sells: its core count, price, sockets and power draw."""

    cores: int
    price: float
    sockets: int = 1
    watts: float | None = None  # at load
    name: str = ""


@dataclass(frozen=True)
class CostBreakdown:
    """The cost of one server over the catalog's period."""

    hardware: float
    licence: float = 0.0
    power: float = 0.0

    @property
    def total(self) -> float:
        return self.hardware + self.licence + self.power

    def to_dict(self) -> dict[str, float]:
        return {
            "hardware": self.hardware,
            "licence": self.licence,
            "power": self.power,
            "total": self.total,
        }


@dataclass(frozen=True)
class CostCatalog:
    """Server prices by core count, with optional licences, power and amortisation."""

    servers: tuple[ServerOffer, ...]
    name: str = ""
    currency: str = "USD"
    licences: Mapping[str, Licence] = field(default_factory=dict)
    price_per_kwh: float | None = None
    amortisation_months: int | None = None

    def core_counts(self) -> tuple[int, ...]:
        """The core counts on offer, ascending."""
        return tuple(sorted(s.cores for s in self.servers))

    def offer(self, cores: int) -> ServerOffer | None:
        """The server with ``cores`` cores, if the catalog sells one."""
        for s in self.servers:
            if s.cores == cores:
                return s
        return None

    def server_cost(self, platform: str, cores: int) -> CostBreakdown:
        """What one ``cores``-core server costs on ``platform`` (KeyError if not sold)."""
        offer = self.offer(cores)
        if offer is None:
            raise KeyError(cores)
        licence = self.licences.get(platform)
        licence_cost = (
            licence.cost(cores=cores, sockets=offer.sockets, months=self.amortisation_months)
            if licence is not None
            else 0.0
        )
        power_cost = 0.0
        if (
            self.price_per_kwh is not None
            and self.amortisation_months is not None
            and offer.watts is not None
        ):
            hours = self.amortisation_months * HOURS_PER_MONTH
            power_cost = offer.watts / 1000.0 * hours * self.price_per_kwh
        return CostBreakdown(hardware=offer.price, licence=licence_cost, power=power_cost)

    @property
    def basis(self) -> str:
        """In words, what a cost includes."""
        parts = ["hardware"]
        if self.licences:
            parts.append("licence (" + ", ".join(sorted(self.licences)) + ")")
        if self.price_per_kwh is not None and self.amortisation_months is not None:
            parts.append("power")
        if len(parts) == 1:
            return "hardware only"
        months = self.amortisation_months
        period = f" over {months} months" if months else ""
        return "total cost of ownership" + period + ": " + " + ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "currency": self.currency,
            "basis": self.basis,
            "amortisation_months": self.amortisation_months,
            "price_per_kwh": self.price_per_kwh,
            "servers": [
                {"cores": s.cores, "price": s.price, "sockets": s.sockets, "watts": s.watts}
                for s in sorted(self.servers, key=lambda s: s.cores)
            ],
            "licences": {
                k: {"per": v.per, "price": v.price, "term": v.term}
                for k, v in sorted(self.licences.items())
            },
        }
