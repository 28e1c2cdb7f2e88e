"""What a server costs: hardware, and optionally a licence, support and power.

A cost catalog maps a core count to a server price. With nothing else given the cost of a
server is its hardware price. With ``amortisation_months`` the catalog prices a server over
that period, a total cost of ownership:

    total = hardware + licence (for the platform) + support + power over the period

- a **licence** is priced per platform family (``baremetal``, ``hypervisor``,
  ``kubernetes``: :func:`sizing.model.cost_family`) or per platform (``esxi``, ``kvm``,
  which overrides its family), and under ``all`` for every platform besides (a key may
  hold a list of named lines that all apply: :mod:`sizing.engine.licences`); per server,
  per socket or per core (at least ``min_cores_per_socket`` cores on each socket, as
  per-core subscriptions are sold), once or every year (``amortisation_months / 12``
  times), each line's order minimum applied to the whole order;
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sizing.engine.licences import (
    EVERY_PLATFORM,
    KEY_WORDS,
    Licence,
    LicenceCost,
    applying,
    lines_of,
)
from sizing.model import cost_family

__all__ = [
    "HOURS_PER_MONTH",
    "NEVER_PRICED",
    "NO_HYPERVISOR_LICENCE",
    "CostBreakdown",
    "CostCatalog",
    "CostScope",
    "Licence",
    "LicenceCost",
    "ServerOffer",
    "Support",
]

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12
# What no catalog prices: said once where a catalog's scope is stated (the guide), not on
# every server's cost, where it would repeat the same words on every line.
NEVER_PRICED = "rack space, cooling and network"
# What bare metal pays for a hypervisor: said as a priced part, never as a cost left out
NO_HYPERVISOR_LICENCE = "no hypervisor licence (bare metal)"


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
    what the catalog does not price (``left_out``, in words). ``licence`` is the sum of
    ``licences``, one :class:`LicenceCost` per licence line paid (named)."""

    hardware: float
    licence: float = 0.0
    power: float = 0.0
    support: float = 0.0
    left_out: tuple[str, ...] = ()
    licence_key: str = ""  # the platform's own licence entry that applied ("hypervisor", "esxi")
    licences: tuple[LicenceCost, ...] = ()
    no_hypervisor_licence: bool = False  # bare metal, in a catalog that prices licences

    @property
    def total(self) -> float:
        return self.hardware + self.licence + self.support + self.power

    def times(self, n: int) -> CostBreakdown:
        """The cost of ``n`` such servers."""
        return replace(
            self,
            hardware=self.hardware * n,
            licence=self.licence * n,
            power=self.power * n,
            support=self.support * n,
            licences=tuple(replace(x, cost=x.cost * n) for x in self.licences),
        )

    def plus(self, other: CostBreakdown) -> CostBreakdown:
        """Two costs together (a mixed fleet): the parts added, what is left out of either."""
        key = self.licence_key if self.licence_key == other.licence_key else ""
        lines: dict[tuple[str, str], float] = {}
        for x in (*self.licences, *other.licences):
            lines[(x.name, x.key)] = lines.get((x.name, x.key), 0.0) + x.cost
        return CostBreakdown(
            hardware=self.hardware + other.hardware,
            licence=self.licence + other.licence,
            power=self.power + other.power,
            support=self.support + other.support,
            left_out=tuple(dict.fromkeys((*self.left_out, *other.left_out))),
            licence_key=key or self.licence_key or other.licence_key,
            licences=tuple(LicenceCost(n, k, c) for (n, k), c in lines.items()),
            no_hypervisor_licence=self.no_hypervisor_licence and other.no_hypervisor_licence,
        )

    def with_topups(self, topups: Mapping[str, float]) -> CostBreakdown:
        """This cost with order minimums' top-ups added to the lines they are named by."""
        if not any(topups.values()):
            return self
        lines = tuple(replace(x, cost=x.cost + topups.get(x.name, 0.0)) for x in self.licences)
        return replace(self, licence=self.licence + sum(topups.values()), licences=lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardware": round(self.hardware, 2),
            "licence": round(self.licence, 2),
            "licences": [x.to_dict() for x in self.licences],
            "no_hypervisor_licence": self.no_hypervisor_licence,
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
    # a key's licence, or a list of them that all apply (sizing.engine.licences)
    licences: Mapping[str, Licence | Sequence[Licence]] = field(default_factory=dict)
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

    def licence_lines(self, platform: str) -> tuple[tuple[str, Licence], ...]:
        """The licence lines a server on ``platform`` pays, with their keys: its own
        (``esxi``) or its family's (``hypervisor``), then every platform's (``all``)."""
        return applying(self.licences, platform)

    def own_licence_key(self, platform: str) -> str:
        """The platform's own licence entry (``esxi``, ``hypervisor``); "" when none."""
        return next((k for k, _ in self.licence_lines(platform) if k != EVERY_PLATFORM), "")

    def server_cost(self, platform: str, cores: int) -> CostBreakdown:
        """What one ``cores``-core server costs on ``platform`` (KeyError if not sold)."""
        offer = self.offer(cores)
        if offer is None:
            raise KeyError(cores)
        months = self.amortisation_months
        lines = tuple(
            LicenceCost(
                lic.called(key), key, lic.cost(cores=cores, sockets=offer.sockets, months=months)
            )
            for key, lic in self.licence_lines(platform)
        )
        support_cost = 0.0
        if self.support is not None and months is not None:
            support_cost = self.support.cost(offer.price, months)
        power_cost = 0.0
        if self.price_per_kwh is not None and months is not None and offer.watts is not None:
            hours = months * HOURS_PER_MONTH
            power_cost = offer.watts / 1000.0 * hours * self.price_per_kwh
        own = self.own_licence_key(platform)
        return CostBreakdown(
            hardware=offer.price,
            licence=sum(x.cost for x in lines),
            power=power_cost,
            support=support_cost,
            left_out=self.scope(platform, offer).left_out,
            licence_key=own,
            licences=lines,
            no_hypervisor_licence=bool(self.licences)
            and not own
            and cost_family(platform) == "baremetal",
        )

    def licence_units(self, platform: str, cores: int) -> tuple[int, ...]:
        """The units one ``cores``-core server pays on ``platform``, one count per licence
        line of :meth:`licence_lines` (empty: none, or the server is not sold)."""
        offer = self.offer(cores)
        if offer is None:
            return ()
        return tuple(
            lic.units(cores=offer.cores, sockets=offer.sockets)
            for _, lic in self.licence_lines(platform)
        )

    def order_topups(self, platform: str, counts: Mapping[int, int]) -> dict[str, float]:
        """What each licence line's order minimum adds to a fleet (servers by core count)
        over the period, by the line's name (a line without a minimum adds nothing)."""
        out: dict[str, float] = {}
        for i, (key, lic) in enumerate(self.licence_lines(platform)):
            if not lic.min_per_order:
                continue
            units = sum(self.licence_units(platform, c)[i] * n for c, n in counts.items() if n > 0)
            short = max(0, lic.min_per_order - units)
            out[lic.called(key)] = lic.price * short * lic.terms(self.amortisation_months)
        return out

    def fleet_cost(self, platform: str, counts: Mapping[int, int]) -> CostBreakdown:
        """What a fleet (servers by core count) costs on ``platform``, part by part, each
        licence line's order minimum applied to the whole order."""
        total: CostBreakdown | None = None
        for cores, n in sorted(counts.items()):
            if n <= 0:
                continue
            part = self.server_cost(platform, cores).times(n)
            total = part if total is None else total.plus(part)
        if total is None:
            return CostBreakdown(hardware=0.0)
        return total.with_topups(self.order_topups(platform, counts))

    def licence_words(self, platform: str | None) -> str:
        """The licences a cost on ``platform`` pays, in words (empty: none): ``licence
        (vSphere Foundation + NGINX Plus)``; bare metal ``no hypervisor licence (bare
        metal) + licence (NGINX Plus)``. None: each platform's, ``licences (ESXi: vSphere
        Foundation + NGINX Plus; KVM: Proxmox VE + NGINX Plus; bare metal: no hypervisor
        licence, NGINX Plus)``."""
        if platform is not None:
            names = [lic.name or k for k, lic in self.licence_lines(platform)]
            if self.licences and cost_family(platform) == "baremetal":
                if not self.own_licence_key(platform):
                    return " + ".join(
                        [NO_HYPERVISOR_LICENCE, *([f"licence ({' + '.join(names)})"] * bool(names))]
                    )
            return f"licence ({' + '.join(names)})" if names else ""
        if not self.licences:
            return ""
        each = []
        for key in sorted(k for k in self.licences if k != EVERY_PLATFORM):
            names = [lic.name or lic.describe() for _, lic in self.licence_lines(key)]
            each.append(f"{KEY_WORDS.get(key, key)}: {' + '.join(names)}")
        if not self.own_licence_key("baremetal"):
            more = [lic.name or lic.describe() for _, lic in self.licence_lines("baremetal")]
            each.append(", ".join(["bare metal: no hypervisor licence", *more]))
        if EVERY_PLATFORM in self.licences:
            every = [lic.name or lic.describe() for lic in lines_of(self.licences[EVERY_PLATFORM])]
            each.append(f"any other platform: {' + '.join(every)}")
        return f"licences ({'; '.join(each)})"

    def scope(self, platform: str | None = None, offer: ServerOffer | None = None) -> CostScope:
        """What a cost includes and leaves out, in words: of one ``offer`` on ``platform``
        (the words of :attr:`CostBreakdown.left_out`), or, given neither, of any server of
        the catalog (its licences, and the servers whose power draw it does not state)."""
        months = self.amortisation_months
        priced = ["hardware (the catalog's server price)"]
        left: list[str] = []
        words = self.licence_words(platform)
        if platform is not None and cost_family(platform) == "baremetal":
            # not a missing cost: there is none (and any other licence it pays is named)
            priced.append(words or NO_HYPERVISOR_LICENCE)
        elif words:
            priced.append(f"platform {words}")
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
        if words := self.licence_words(platform):
            parts.append(words)
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
                k: [
                    {
                        "name": v.called(k),
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
                    for v in lines_of(entry)
                ]
                for k, entry in sorted(self.licences.items())
            },
        }
