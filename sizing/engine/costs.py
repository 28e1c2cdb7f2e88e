"""What a server costs: hardware, and optionally a licence, support and power.

A cost catalog maps a core count to a server price. With nothing else given the cost of a
server is its hardware price. With ``amortisation_months`` the catalog prices a server over
that period, a total cost of ownership:

    total = hardware + licence (for the platform) + support + power over the period

- a **licence** is priced per platform family (``baremetal``, ``hypervisor``,
  ``kubernetes``: :func:`sizing.model.cost_family`) or per platform (``esxi``, ``kvm``,
  which overrides its family); per socket or per core (at least ``min_cores_per_socket``
  cores on each socket, as per-core subscriptions are sold), once or every year
  (``amortisation_months / 12`` times);
- **support** is a share of the hardware price per year, over the period;
- **power** is ``watts at load / 1000 * hours in the period * price per kWh`` (a month is
  730 hours).

What a catalog does not price is said, never taken as free: every
:class:`CostBreakdown` carries the parts left out, in words (``no licence priced for
esxi``, ``power not priced``). :meth:`CostCatalog.scope` is the one place those words are
made, for one server (``recommend``, ``table``) or for the whole catalog (the guide's
"Costs include" and "Left out of the costs"), with :data:`NEVER_PRICED`, what no catalog
prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.model import cost_family

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12
# What no catalog prices: said once where a catalog's scope is stated (the guide), not on
# every server's cost, where it would repeat the same words on every line.
NEVER_PRICED = "rack space, cooling and network"
# What bare metal pays for a hypervisor: said as a priced part, never as a cost left out
NO_HYPERVISOR_LICENCE = "no hypervisor licence (bare metal)"


@dataclass(frozen=True)
class Licence:
    """A platform licence, priced per socket, per core or per server (an instance), once or
    every year; a per-core licence counts at least ``min_cores_per_socket`` cores on each
    socket (0: no minimum), and an order pays for at least ``min_per_order`` units (0: no
    minimum), which makes a fleet's licence cost not linear in its servers.

    ``price`` is what one unit costs in the catalog's currency after the discount; the
    list price, its currency, the exchange rate and the discount are kept to be stated."""

    per: str  # "socket" | "core" | "server"
    price: float
    term: str = "once"  # "once" | "yearly"
    min_cores_per_socket: int = 0
    min_per_order: int = 0
    list_price: float | None = None  # in ``currency``, before the discount
    currency: str = ""  # "" : the catalog's
    rate: float = 1.0  # 1 unit of ``currency`` in the catalog's currency
    discount: float = 0.0
    source: str = ""

    def units(self, *, cores: int, sockets: int) -> int:
        """The servers, sockets or cores paid for on one server."""
        if self.per == "server":
            return 1
        if self.per == "socket":
            return sockets
        return max(cores, sockets * self.min_cores_per_socket)

    def terms(self, months: int | None) -> float:
        """How many times the price is paid over ``months`` (once, or each year)."""
        return 1.0 if self.term == "once" else (months or 12) / 12.0

    def cost(self, *, cores: int, sockets: int, months: int | None) -> float:
        """The licence cost of one server over the amortisation period (an order minimum
        is the fleet's: :meth:`order_cost`)."""
        return self.price * self.units(cores=cores, sockets=sockets) * self.terms(months)

    def order_cost(self, units: int, months: int | None) -> float:
        """What an order of ``units`` units costs over ``months``, its minimum applied."""
        return self.price * max(units, self.min_per_order) * self.terms(months)

    def describe(self) -> str:
        """How it is sold, in words: ``per core, at least 16 a socket, 72 an order, yearly``."""
        minimum = (
            f", at least {self.min_cores_per_socket} a socket"
            if self.per == "core" and self.min_cores_per_socket
            else ""
        )
        if self.min_per_order:
            minimum += f", at least {self.min_per_order} {self.per}s an order"
        return f"per {self.per}{minimum}, {self.term}"


@dataclass(frozen=True)
class Support:
    """Hardware support priced as a share of the hardware price per year (0.1: 10% of
    the server's price every year of the amortisation period)."""

    share_of_hardware_per_year: float

    def cost(self, hardware: float, months: int) -> float:
        """The support cost of one server over ``months``."""
        return hardware * self.share_of_hardware_per_year * months / 12.0


@dataclass(frozen=True)
class ServerOffer:
    """One server the catalog sells: its core count, price, sockets, power draw and, when
    the catalog names them, its model (``PowerEdge R660``) and CPU model."""

    cores: int
    price: float
    sockets: int = 1
    watts: float | None = None  # at load
    name: str = ""
    cpu_model: str = ""
    list_price: float | None = None  # before the discount (None: no discount)
    discount: float = 0.0
    source: str = ""

    def label(self) -> str:
        """``PowerEdge R660 (8 cores)`` when named, else ``8-core``."""
        return f"{self.name} ({self.cores} cores)" if self.name else f"{self.cores}-core"


@dataclass(frozen=True)
class CostBreakdown:
    """The cost of one server (or a fleet) over the catalog's period, part by part, and
    what the catalog does not price (``left_out``, in words)."""

    hardware: float
    licence: float = 0.0
    power: float = 0.0
    support: float = 0.0
    left_out: tuple[str, ...] = ()
    licence_key: str = ""  # the catalog's licence entry that applied ("hypervisor", "esxi")

    @property
    def total(self) -> float:
        return self.hardware + self.licence + self.support + self.power

    def times(self, n: int) -> CostBreakdown:
        """The cost of ``n`` such servers."""
        return CostBreakdown(
            hardware=self.hardware * n,
            licence=self.licence * n,
            power=self.power * n,
            support=self.support * n,
            left_out=self.left_out,
            licence_key=self.licence_key,
        )

    def plus(self, other: CostBreakdown) -> CostBreakdown:
        """Two costs together (a mixed fleet): the parts added, what is left out of either."""
        key = self.licence_key if self.licence_key == other.licence_key else ""
        return CostBreakdown(
            hardware=self.hardware + other.hardware,
            licence=self.licence + other.licence,
            power=self.power + other.power,
            support=self.support + other.support,
            left_out=tuple(dict.fromkeys((*self.left_out, *other.left_out))),
            licence_key=key or self.licence_key or other.licence_key,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardware": round(self.hardware, 2),
            "licence": round(self.licence, 2),
            "support": round(self.support, 2),
            "power": round(self.power, 2),
            "total": round(self.total, 2),
            "licence_key": self.licence_key or None,
            "left_out": list(self.left_out),
        }


@dataclass(frozen=True)
class CostScope:
    """What a catalog prices and what it leaves out, in words, for one server or for all
    of them (:meth:`CostCatalog.scope`)."""

    priced: tuple[str, ...]
    left_out: tuple[str, ...]


@dataclass(frozen=True)
class CostCatalog:
    """Server prices by core count, with optional licences, support, power and
    amortisation, and where the prices come from (``name``, ``source``, ``date``)."""

    servers: tuple[ServerOffer, ...]
    name: str = ""
    currency: str = "USD"
    licences: Mapping[str, Licence] = field(default_factory=dict)
    price_per_kwh: float | None = None
    amortisation_months: int | None = None
    source: str = ""
    date: str = ""
    support: Support | None = None
    discount: float = 0.0  # the catalog's, on every line without its own
    # a currency's rate in the catalog's currency, with its source: {"EUR": (1.08, "ECB ...")}
    exchange_rates: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)  # "power", "support": their own

    def core_counts(self) -> tuple[int, ...]:
        """The core counts on offer, ascending."""
        return tuple(sorted(s.cores for s in self.servers))

    def offer(self, cores: int) -> ServerOffer | None:
        """The server with ``cores`` cores, if the catalog sells one."""
        for s in self.servers:
            if s.cores == cores:
                return s
        return None

    def licence_for(self, platform: str) -> tuple[str, Licence] | None:
        """The licence entry that prices ``platform`` and its key: the platform's own
        (``esxi``) before its family's (``hypervisor``); None when neither is priced."""
        for key in (platform, cost_family(platform)):
            if key and key in self.licences:
                return key, self.licences[key]
        return None

    def licence_keys(self, platform: str | None) -> list[str]:
        """The licence entries a cost on ``platform`` pays (None: every one the catalog prices)."""
        if platform is None:
            return sorted(self.licences)
        found = self.licence_for(platform)
        return [] if found is None else [found[0]]

    def server_cost(self, platform: str, cores: int) -> CostBreakdown:
        """What one ``cores``-core server costs on ``platform`` (KeyError if not sold)."""
        offer = self.offer(cores)
        if offer is None:
            raise KeyError(cores)
        months = self.amortisation_months
        licence_cost, key = 0.0, ""
        found = self.licence_for(platform)
        if found is not None:
            key, licence = found
            licence_cost = licence.cost(cores=cores, sockets=offer.sockets, months=months)
        support_cost = 0.0
        if self.support is not None and months is not None:
            support_cost = self.support.cost(offer.price, months)
        power_cost = 0.0
        if self.price_per_kwh is not None and months is not None and offer.watts is not None:
            hours = months * HOURS_PER_MONTH
            power_cost = offer.watts / 1000.0 * hours * self.price_per_kwh
        return CostBreakdown(
            hardware=offer.price,
            licence=licence_cost,
            power=power_cost,
            support=support_cost,
            left_out=self.scope(platform, offer).left_out,
            licence_key=key,
        )

    def order_topup(self, platform: str, units: int) -> float:
        """What ``platform``'s licence order minimum adds to a fleet paying ``units`` units
        over the period (0 without a minimum)."""
        found = self.licence_for(platform)
        if found is None or not found[1].min_per_order:
            return 0.0
        lic = found[1]
        short = max(0, lic.min_per_order - units)
        return lic.price * short * lic.terms(self.amortisation_months)

    def licence_units(self, platform: str, cores: int) -> int:
        """The licence units one ``cores``-core server pays on ``platform`` (0: none)."""
        found = self.licence_for(platform)
        offer = self.offer(cores)
        if found is None or offer is None:
            return 0
        return found[1].units(cores=offer.cores, sockets=offer.sockets)

    def fleet_cost(self, platform: str, counts: Mapping[int, int]) -> CostBreakdown:
        """What a fleet (servers by core count) costs on ``platform``, part by part, its
        licence's order minimum applied to the whole order."""
        total: CostBreakdown | None = None
        units = 0
        for cores, n in sorted(counts.items()):
            if n <= 0:
                continue
            part = self.server_cost(platform, cores).times(n)
            total = part if total is None else total.plus(part)
            units += self.licence_units(platform, cores) * n
        if total is None:
            return CostBreakdown(hardware=0.0)
        topup = self.order_topup(platform, units)
        return replace(total, licence=total.licence + topup) if topup else total

    def scope(self, platform: str | None = None, offer: ServerOffer | None = None) -> CostScope:
        """What a cost includes and leaves out, in words: of one ``offer`` on ``platform``
        (the words of :attr:`CostBreakdown.left_out`), or, given neither, of any server of
        the catalog (its licences, and the servers whose power draw it does not state)."""
        months = self.amortisation_months
        priced = ["hardware (the catalog's server price)"]
        left: list[str] = []
        if keys := self.licence_keys(platform):
            priced.append("platform licence (" + ", ".join(keys) + ")")
        elif platform is not None and cost_family(platform) == "baremetal":
            priced.append(NO_HYPERVISOR_LICENCE)  # not a missing cost: there is none
        else:
            left.append("no licence priced" + ("" if platform is None else f" for {platform}"))
        if self.support is not None and months is not None:
            share = self.support.share_of_hardware_per_year * 100
            priced.append(f"support at {share:g}% of the hardware a year")
        else:
            left.append("support not priced")
        if self.price_per_kwh is None or months is None:
            left.append("power not priced")
            return CostScope(tuple(priced), tuple(left))
        offers = self.servers if offer is None else (offer,)
        unstated = [o.label() for o in sorted(offers, key=lambda o: o.cores) if o.watts is None]
        if len(unstated) < len(offers) or not offers:
            priced.append(
                f"power over {months} months at {self.price_per_kwh:g} {self.currency}/kWh"
            )
        if unstated:
            # a price from elsewhere (an inventory's sizing_price_usd) states no power draw
            left.append(
                f"power not priced for the {', '.join(unstated)} server"
                f"{'s' if len(unstated) > 1 else ''} (no watts stated)"
            )
        return CostScope(tuple(priced), tuple(left))

    @property
    def citation(self) -> str:
        """Where the prices come from: ``Acme quote 2026-11, 2026-11-03`` (empty when the
        catalog does not say)."""
        return ", ".join(p for p in (self.source, self.date) if p)

    @property
    def label(self) -> str:
        """The catalog in words for a price line: ``catalog Acme servers: Acme quote
        2026-11, 2026-11-03``, or ``the catalog`` when it names nothing."""
        named = f"catalog {self.name}" if self.name else "the catalog"
        return f"{named}: {self.citation}" if self.citation else named

    @property
    def basis(self) -> str:
        """In words, what a cost includes (any platform's: every licence the catalog prices)."""
        return self.basis_for(None)

    def basis_for(self, platform: str | None) -> str:
        """In words, what a cost on ``platform`` includes: its licence only if one prices it
        (a bare-metal answer never says "licence (hypervisor)"); None: every licence."""
        parts = ["hardware"]
        if keys := self.licence_keys(platform):
            parts.append("licence (" + ", ".join(keys) + ")")
        elif self.licences and platform is not None and cost_family(platform) == "baremetal":
            parts.append(NO_HYPERVISOR_LICENCE)
        if self.support is not None and self.amortisation_months is not None:
            parts.append("support")
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
            "source": self.source,
            "date": self.date,
            "currency": self.currency,
            "basis": self.basis,
            "amortisation_months": self.amortisation_months,
            "price_per_kwh": self.price_per_kwh,
            "support": None
            if self.support is None
            else {"share_of_hardware_per_year": self.support.share_of_hardware_per_year},
            "servers": [
                {
                    "cores": s.cores,
                    "price": s.price,
                    "sockets": s.sockets,
                    "watts": s.watts,
                    "name": s.name,
                    "cpu_model": s.cpu_model,
                    "list_price": s.list_price,
                    "discount": s.discount,
                }
                for s in sorted(self.servers, key=lambda s: s.cores)
            ],
            "discount": self.discount,
            "exchange_rates": {
                k: {"rate": r, "source": src} for k, (r, src) in sorted(self.exchange_rates.items())
            },
            "licences": {
                k: {
                    "per": v.per,
                    "price": v.price,
                    "term": v.term,
                    "min_cores_per_socket": v.min_cores_per_socket,
                    "min_per_order": v.min_per_order,
                    "list_price": v.list_price,
                    "currency": v.currency or self.currency,
                    "rate": v.rate,
                    "discount": v.discount,
                    "source": v.source,
                }
                for k, v in sorted(self.licences.items())
            },
        }
