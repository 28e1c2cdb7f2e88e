"""What the inventory declares about each host (CPU, price, what a guest stands for), as
the run recorded it, and the prices of the measured bases from it and the catalog."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import paths
from sizing.catalog import cpu_offers
from sizing.engine.basis import Price
from sizing.engine.costs import ServerOffer
from sizing.errors import SizingError
from sizing.model import FigureKind
from sizing.records.host import DeclaredRecord, HostRecord
from sizing.sources.bases import Declared

if TYPE_CHECKING:
    from sizing.engine.basis import Basis, Price
    from sizing.sources.rundata import RunData


def declared_of(runs: Sequence[RunData]) -> dict[str, Declared]:
    """What the inventories declared per host: the run record's ``declared`` entry
    (``environment[host]["declared"]``, written by the sweep, or once by
    :func:`record_declared` for a run recorded before it did). Newest run wins."""
    out: dict[str, Declared] = {}
    for run in sorted(runs, key=lambda r: r.record.id):
        rec = run.record
        for h, d in _recorded(rec.environment).items():
            if d.empty and d.source is None:
                continue
            out[h] = Declared(
                price_usd=d.sizing_price_usd,
                cpu=d.sizing_cpu,
                cost_ref=d.sizing_cost_ref,
                where=f"run {rec.id}" if d.source is None else d.source,
            )
    return out


def _recorded(environment: Mapping[str, HostRecord]) -> dict[str, DeclaredRecord]:
    """Each host's ``declared`` entry, for the hosts that have one."""
    return {h: f.declared for h, f in environment.items() if f.declared is not None}


def record_declared(runs: Sequence[RunData]) -> dict[int, dict[str, HostRecord]]:
    """The ``declared`` entries of runs recorded before the sweep kept them, read once from
    each run's inventory file when it still exists (offline, never connected to; this is
    the one read-only path that imports Ansible's inventory parser): run id -> the
    environment patch (every host's entry, with ``declared`` added, empty when nothing is
    declared or the file is gone). The records in ``runs`` are patched in place; the caller
    writes the patches back, so that no later command reads the inventory again."""
    patches: dict[int, dict[str, HostRecord]] = {}
    for run in runs:
        env = run.record.environment
        if _recorded(env):
            continue
        declared = _declared_from_inventory(run.record.inventory)
        patch = {
            h: replace(env.get(h, HostRecord()), declared=declared.get(h, DeclaredRecord()))
            for h in sorted({*env, *declared})
        }
        if not patch:  # a run with no host at all: one marker entry
            patch["_declared"] = HostRecord(declared=DeclaredRecord())
        env.update(patch)
        patches[run.record.id] = patch
    return patches


def _declared_from_inventory(inventory: str) -> dict[str, DeclaredRecord]:
    """host -> its declared ``sizing_*`` variables, for runs recorded before the sweep kept
    them (``_from`` names the file they came from)."""
    if not inventory:
        return {}
    path = Path(inventory)
    if not path.is_file() and not path.is_absolute():
        path = paths.INVENTORIES / path.name
    if not path.is_file():
        return {}

    # deferred: only a run stored before the sweep kept its declared facts reads its
    # inventory (once, then backfilled); recommend on any other run imports no inventory code
    from sizing.inventory import load_inventory

    try:
        inv = load_inventory(path)
    except (SizingError, OSError, ValueError):
        return {}
    declared = inv.declared()
    return {
        h: DeclaredRecord.parse({**declared[h], "_from": f"inventory {inventory}"})
        if h in declared
        else DeclaredRecord()
        for h in inv.hosts
    }


def basis_prices(
    bases: Sequence[Basis],
    declared: Mapping[str, Declared],
    catalog_data: Mapping[str, Any] | None,
    catalog_name: str = "",
) -> dict[str, Price]:
    """The price of each measured basis that has one of its own: the inventory's
    ``sizing_price_usd`` of its physical host (one server at its physical core count),
    else the catalog entries whose ``cpu_model`` matches its CPU. Reference bases and
    unpriced measured ones are left to the engine (the catalog, or --article-prices)."""
    out: dict[str, Price] = {}
    for b in bases:
        if b.origin != FigureKind.MEASURED:
            continue
        for host in (b.physical_host, *b.hosts):
            d = declared.get(host)
            if d is None or d.price_usd is None:
                continue
            cores = b.hardware.physical_cores
            if cores is None and d.cpu is not None:
                cores = d.cpu.physical_cores
            if cores is None:
                continue
            sockets = b.hardware.sockets or 1
            out[b.id] = Price(
                f"inventory sizing_price_usd of {host} ({d.where})",
                (ServerOffer(cores=cores, price=float(d.price_usd), sockets=sockets, name=host),),
            )
            break
        if b.id in out or catalog_data is None:
            continue
        offers = cpu_offers(catalog_data, b.hardware.cpu_model)
        if offers:
            name = catalog_name or str(catalog_data.get("name") or "catalog")
            # the catalog's source and date go with every price taken from it
            cited = ", ".join(
                str(catalog_data[k]) for k in ("source", "date") if catalog_data.get(k)
            )
            out[b.id] = Price(
                f"catalog {name} matched to {b.hardware.cpu_model}"
                + (f": {cited}" if cited else ""),
                offers,
            )
    return out
