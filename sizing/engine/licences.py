"""Licences: how one is sold (per core, socket, socket pair, server or NGINX instance; once
or yearly; its minimums), and which of a catalog's licence lines a platform pays. Pure.

A catalog's ``licences`` maps a key to one licence or a list of them, all of which apply:

- a platform's own key (``esxi``, ``kvm``) overrides its family's (``hypervisor``), as a
  single licence always did;
- the lines under :data:`EVERY_PLATFORM` (``all``) apply to every platform besides,
  bare metal included: a per-instance NGINX Plus subscription is one (``per: instance``).

A server runs one NGINX instance in this sizing (bare metal's own, or one guest or pod
over all its cores), so a per-instance line pays one a server, as a per-server line does;
it is named for what it licenses. A per-socket-pair line (OpenShift's subscription covers
two sockets) pays half the sockets, rounded up: a one-socket server pays a whole pair.

Each line is named (``vSphere Foundation``, ``NGINX Plus``) in every output; a line
without a ``name`` is called after its key (``ESXi licence``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sizing.model import cost_family

__all__ = [
    "EVERY_PLATFORM",
    "KEY_WORDS",
    "Licence",
    "LicenceCost",
    "applying",
    "lines_of",
    "unit_words",
]

# The key whose licences every platform pays (bare metal included): "all" reads as it is
# meant in a catalog (``licences: {all: [...]}``) and is no platform's or family's name.
EVERY_PLATFORM = "all"
# A licence key in words (an unnamed line is "<words> licence").
KEY_WORDS = {
    "baremetal": "Bare metal",
    "hypervisor": "Hypervisor",
    "kubernetes": "Kubernetes",
    "esxi": "ESXi",
    "kvm": "KVM",
    "virtualized-host": "Virtualized host",
    EVERY_PLATFORM: "every platform",
}


# What a licence is sold per, in words: (one, several).
UNIT_WORDS = {
    "core": ("core", "cores"),
    "socket": ("socket", "sockets"),
    "socket-pair": ("socket pair", "socket pairs"),
    "server": ("server", "servers"),
    "instance": ("instance", "instances"),
}


def unit_words(per: str, n: int = 1) -> str:
    """``core``, ``socket pairs``: the unit a licence is sold per, for ``n`` of them."""
    one, many = UNIT_WORDS.get(per, (per, f"{per}s"))
    return one if n == 1 else many


# A platform that no catalog key names pays the licence of the platform it runs under.
_RUNS_UNDER = {"container": "kubernetes"}


@dataclass(frozen=True)
class Licence:
    """A licence line, priced per core, socket, socket pair, server or NGINX instance (one
    a server: the module's docstring), once or every year; a per-core licence counts at
    least ``min_cores_per_socket`` cores on each socket (0: no minimum), and an order pays
    for at least ``min_per_order`` units (0: no minimum), which makes a fleet's licence
    cost not linear in its servers.

    ``price`` is what one unit costs in the catalog's currency after the discount; the
    list price, its currency, the exchange rate and the discount are kept to be stated."""

    per: str  # "core" | "socket" | "socket-pair" | "server" | "instance"
    price: float
    term: str = "once"  # "once" | "yearly"
    min_cores_per_socket: int = 0
    min_per_order: int = 0
    list_price: float | None = None  # in ``currency``, before the discount
    currency: str = ""  # "" : the catalog's
    rate: float = 1.0  # 1 unit of ``currency`` in the catalog's currency
    discount: float = 0.0
    source: str = ""
    name: str = ""  # "vSphere Foundation", "NGINX Plus"; "" : called after its key

    def units(self, *, cores: int, sockets: int) -> int:
        """The servers, instances, socket pairs, sockets or cores paid for on one server."""
        if self.per in ("server", "instance"):
            return 1
        if self.per == "socket":
            return sockets
        if self.per == "socket-pair":
            return (sockets + 1) // 2
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
            minimum += (
                f", at least {self.min_per_order} {unit_words(self.per, self.min_per_order)}"
                " an order"
            )
        return f"per {unit_words(self.per)}{minimum}, {self.term}"

    def called(self, key: str) -> str:
        """The line's name, else its key's: ``NGINX Plus``, ``ESXi licence``."""
        if self.name:
            return self.name
        if key == EVERY_PLATFORM:
            return "licence for every platform"
        return f"{KEY_WORDS.get(key, key)} licence"


@dataclass(frozen=True)
class LicenceCost:
    """What one licence line costs a server or a fleet: its name, the catalog key it is
    under (``esxi``, ``hypervisor``, ``all``) and the amount."""

    name: str
    key: str
    cost: float

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "key": self.key, "cost": round(self.cost, 2)}


def lines_of(entry: Licence | Sequence[Licence]) -> tuple[Licence, ...]:
    """A catalog entry's lines: one licence, or a list of them."""
    return (entry,) if isinstance(entry, Licence) else tuple(entry)


def applying(
    licences: Mapping[str, Licence | Sequence[Licence]], platform: str
) -> tuple[tuple[str, Licence], ...]:
    """The licence lines ``platform`` pays, with their keys: its own key's (``esxi``)
    before its family's (``hypervisor``, which the own key overrides), then every
    platform's (``all``)."""
    out: list[tuple[str, Licence]] = []
    for key in (platform, cost_family(platform), _RUNS_UNDER.get(platform, "")):
        if key and key != EVERY_PLATFORM and key in licences:
            out += [(key, lic) for lic in lines_of(licences[key])]
            break
    if EVERY_PLATFORM in licences:
        out += [(EVERY_PLATFORM, lic) for lic in lines_of(licences[EVERY_PLATFORM])]
    return tuple(out)
