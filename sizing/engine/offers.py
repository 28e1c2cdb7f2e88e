"""Which catalog server stands for each core count, by name, on one basis and platform.

A catalog is a list of servers, not a map of core counts: two machines of one core count
(2 × 16 Intel cores and 1 × 32 AMD cores; two vendors; one and two sockets) are two
offers at two prices. On one basis, servers of the same CPU and core count carry the same
figures, so on each platform the one that costs least over the period stands for its core
count, and every other is named with why it was passed over. A server of another CPU than
the basis' is refused by name (never sized on the other CPU's figures); a server that
names no CPU is taken to be the basis' CPU, and the answer says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sizing.engine.basis import Basis
from sizing.engine.costs import CostCatalog, ServerOffer
from sizing.engine.translate import other_cpu


@dataclass(frozen=True)
class PassedOver:
    """A catalog server not sized on a basis and platform, and why (in words)."""

    offer: ServerOffer
    reason: str


def offer_words(o: ServerOffer) -> str:
    """``HPE DL325 (1 × 32 cores)``, or ``the 32-core server (1 × 32 cores)``."""
    name = o.name or f"the {o.cores}-core server"
    per = o.cores // o.sockets if o.sockets and o.cores % o.sockets == 0 else None
    shape = f"{o.sockets} × {per} cores" if per is not None else f"{o.cores} cores"
    cpu = f", {o.cpu_model}" if o.cpu_model else ""
    return f"{name} ({shape}{cpu})"


def pick_offers(
    catalog: CostCatalog, platform: str, basis: Basis | None
) -> tuple[CostCatalog, tuple[PassedOver, ...]]:
    """``catalog`` selling one server per core count on ``platform`` (the one costing
    least over the period, catalog order on a tie), and every other server with why."""
    passed: list[PassedOver] = []
    best: dict[int, tuple[float, ServerOffer]] = {}
    for offer in catalog.servers:
        why = other_cpu(offer, basis)
        if why:
            passed.append(PassedOver(offer, why))
            continue
        cost = replace(catalog, servers=(offer,)).server_cost(platform, offer.cores).total
        held = best.get(offer.cores)
        if held is None or cost < held[0] - 0.005:
            if held is not None:
                passed.append(PassedOver(held[1], _dearer(held, (cost, offer), catalog)))
            best[offer.cores] = (cost, offer)
        else:
            passed.append(PassedOver(offer, _dearer((cost, offer), held, catalog)))
    chosen = tuple(o for _, o in sorted(best.values(), key=lambda x: x[1].cores))
    return replace(catalog, servers=chosen), tuple(passed)


def _dearer(
    dear: tuple[float, ServerOffer], cheap: tuple[float, ServerOffer], catalog: CostCatalog
) -> str:
    cur = catalog.currency
    return (
        f"{offer_words(dear[1])}: {cur} {dear[0]:,.2f} a server against {cur} "
        f"{cheap[0]:,.2f} for {offer_words(cheap[1])}, the same {dear[1].cores} cores on the "
        "same figures: passed over"
    )


def assumed_cpu(catalog: CostCatalog, basis: Basis | None) -> tuple[ServerOffer, ...]:
    """The servers that name no CPU, in a catalog where others name theirs: each is
    taken to be the CPU of the measured basis it is sized on (said in the answer)."""
    if basis is None or basis.origin == "reference" or not basis.hardware.cpu_model:
        return ()
    if not any(o.cpu_model for o in catalog.servers):
        return ()
    return tuple(o for o in catalog.servers if not o.cpu_model)
