"""The cost-per-throughput table: the sizing guide's table, computed.

The table is made of **blocks**, one per group of bases (:func:`sizing.engine.basis.group_key`:
the same physical host, hardware, workload and software; the reference is a group of its
own), each titled with its bases. For every series of a block (basis platform × HT mode ×
profile) and every core count the block's pricing sells it gives the throughput (with its
interval, flags, and "≥" for a lower bound), the throughput per core, the scaling
efficiency against one core (X(N) / (N · X(1))), the cost per 1,000 RPS or per 100 TPS of
one server, and, **inside a block only**, where a bare-metal and a guest figure were both
observed (a hypervisor's guest or a container), the overhead ``(bare metal − guest) / bare
metal`` in percent (:mod:`sizing.engine.overhead`, where every overhead is computed).
Figures the engine refuses to derive (:meth:`Series.estimate`) are left out of the rows
and listed with their reason in the block's ``refused``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.engine.basis import Basis, Price, group_key
from sizing.engine.cell import COST_UNIT_LABELS, COST_UNITS, Cell
from sizing.engine.costs import CostCatalog
from sizing.engine.figures import build_series, series_order
from sizing.engine.overhead import guest_overhead, ht_gain
from sizing.engine.predict import Bootstrapper
from sizing.engine.recommend import pricing
from sizing.engine.series import Series
from sizing.model import HYPERVISOR_PLATFORMS, Figure, FigureKind, Source
from sizing.model import OBSERVED as MODEL_OBSERVED

GUEST_PLATFORMS = ("hypervisor", *HYPERVISOR_PLATFORMS)
OBSERVED = MODEL_OBSERVED


@dataclass(frozen=True)
class TableRow:
    """One core count: its hardware price and every series' cell."""

    cores: int
    hardware_cost: float
    cells: tuple[Cell, ...]
    sold: bool = True  # the catalog sells a server of this core count (else: not priced)
    observed: bool = False  # a figure was measured (or published) at this core count
    server_name: str = ""  # the catalog's model at this core count, when it names one

    def cell(self, platform: str, ht: str, profile: str) -> Cell | None:
        for c in self.cells:
            if (c.platform, c.ht, c.profile) == (platform, ht, profile):
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cores": self.cores,
            "hardware_cost": self.hardware_cost if self.sold else None,
            "in_catalog": self.sold,
            "observed": self.observed,
            "server_name": self.server_name,
            "cells": [c.to_dict() for c in self.cells],
        }


@dataclass(frozen=True)
class Refused:
    """A cell the engine would not fill, and why."""

    basis_id: str
    platform: str
    ht: str
    profile: str
    cores: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class TableGroup:
    """The rows of one group of bases, titled; overheads are computed only in here."""

    title: str
    bases: tuple[str, ...]
    labels: tuple[str, ...]
    rows: tuple[TableRow, ...]
    series: tuple[Series, ...]
    price_sources: tuple[tuple[str, str], ...] = ()  # (basis id, price source or why none)
    refused: tuple[Refused, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "bases": list(self.bases),
            "labels": list(self.labels),
            "price_sources": [{"basis": b, "price": p} for b, p in self.price_sources],
            "rows": [r.to_dict() for r in self.rows],
            "series": [s.to_dict() for s in self.series],
            "refused": [r.to_dict() for r in self.refused],
        }


@dataclass(frozen=True)
class SizingTable:
    """The whole table: its blocks, and (for old readers) every cell by core count."""

    rows: tuple[TableRow, ...]
    series: tuple[Series, ...]
    source: str
    sources_used: tuple[str, ...]
    cost_basis: str
    currency: str
    blocks: tuple[TableGroup, ...] = field(default=())
    catalog: CostCatalog | None = None  # the customer's catalog: name, source, date

    @property
    def left_out(self) -> tuple[str, ...]:
        """What the table's server costs leave out, in words, each once."""
        return tuple(
            dict.fromkeys(
                x for r in self.rows for c in r.cells if c.cost is not None for x in c.cost.left_out
            )
        )

    def to_dict(self) -> dict[str, Any]:
        cat = self.catalog
        return {
            "catalog": None
            if cat is None
            else {"name": cat.name, "source": cat.source, "date": cat.date, "label": cat.label},
            "left_out": list(self.left_out),
            "blocks": [b.to_dict() for b in self.blocks],
            "source": self.source,
            "sources_used": list(self.sources_used),
            "cost_basis": self.cost_basis,
            "currency": self.currency,
            "rows": [r.to_dict() for r in self.rows],
            "series": [s.to_dict() for s in self.series],
        }


def build_table(
    figures: Sequence[Figure],
    catalog: CostCatalog,
    *,
    bases: Sequence[Basis] = (),
    prices: Mapping[str, Price] | None = None,
    article_prices: bool = False,
    allow_extrapolation: bool = False,
    bootstrapper: Bootstrapper | None = None,
    observed_only: bool = False,
) -> SizingTable:
    """The table of ``figures`` in blocks per basis group (module docstring).

    ``observed_only``: only the rows of the core counts a series observed (what the
    overheads between observed figures read: recommend's platform comparison), not the
    catalog's others, which would each be predicted for nothing.

    ``bases`` are every known basis (labels, prices, shapes); figures without a known basis
    form one block per origin. Prices as in :func:`sizing.engine.recommend.recommend`;
    ``bootstrapper`` as in :func:`sizing.engine.figures.build_series` (the fit cache).
    """
    by_id = {b.id: b for b in bases}
    price_map = dict(prices or {})
    series = build_series(
        figures,
        bases=bases,
        allow_extrapolation=allow_extrapolation,
        bootstrapper=bootstrapper,
    )
    grouped: dict[Any, list[Series]] = {}
    for s in series.values():
        b = by_id.get(s.basis_id)
        grouped.setdefault(("", s.origin) if b is None else group_key(b), []).append(s)
    blocks = [
        _block(members, catalog, by_id, price_map, article_prices, observed_only)
        for members in grouped.values()
    ]
    blocks.sort(key=lambda blk: (blk.series[0].origin != FigureKind.MEASURED, blk.title))
    all_rows: list[TableRow] = []
    for cores in sorted({r.cores for blk in blocks for r in blk.rows}):
        cells = tuple(c for blk in blocks for r in blk.rows if r.cores == cores for c in r.cells)
        offer = catalog.offer(cores)
        price = offer.price if offer is not None else 0.0
        name = offer.name if offer is not None else ""
        in_blocks = [r for blk in blocks for r in blk.rows if r.cores == cores]
        all_rows.append(
            TableRow(
                cores=cores,
                hardware_cost=price,
                cells=cells,
                sold=any(r.sold for r in in_blocks),
                observed=any(r.observed for r in in_blocks),
                server_name=name,
            )
        )
    used = sorted({c.source for r in all_rows for c in r.cells})
    return SizingTable(
        rows=tuple(all_rows),
        series=tuple(series.values()),
        source=_source_of(series.values()),
        sources_used=tuple(used),
        cost_basis=catalog.basis,
        currency=catalog.currency,
        blocks=tuple(blocks),
        catalog=catalog,
    )


def _block(
    members: Sequence[Series],
    catalog: CostCatalog,
    by_id: Mapping[str, Basis],
    prices: Mapping[str, Price],
    article_prices: bool,
    observed_only: bool = False,
) -> TableGroup:
    members = sorted(members, key=lambda s: series_order(s.key))
    ids = tuple(dict.fromkeys(s.basis_id for s in members))
    known = [by_id[i] for i in ids if i in by_id]
    pricing_of = {
        i: pricing(
            i,
            next(s.origin for s in members if s.basis_id == i),
            catalog,
            prices,
            by_id,
            article_prices,
        )
        for i in ids
    }
    sold = set(catalog.core_counts())
    for priced, _ in pricing_of.values():
        if priced is not None:
            sold |= set(priced.core_counts())
    # The lab's figures survive a customer's catalog: every observed core count has its row
    # (unpriced where the catalog sells no such server) beside the catalog's.
    observed = {f.cores for s in members for f in s.observed}
    counts = observed if observed_only else sold | observed
    if known:
        b0 = known[0]
        title = " + ".join(ids) + (
            f": {b0.hardware.label()}; {b0.workload.label()}"
            + (f"; {b0.software}" if b0.software else "")
            + f"; on {b0.physical_host}"
            + _across_runs(known)
        )
    else:
        title = f"{members[0].origin} figures"
    refused: list[Refused] = []
    rows: list[TableRow] = []
    for cores in sorted(counts):
        cells: list[Cell] = []
        for s in members:
            got = s.estimate(cores)
            if isinstance(got, str):
                refused.append(Refused(s.basis_id, s.platform, s.ht, s.profile, cores, got))
                continue
            cells.append(_cell(s, got, cores, pricing_of[s.basis_id][0], members, by_id))
        offer = catalog.offer(cores)
        rows.append(
            TableRow(
                cores=cores,
                hardware_cost=offer.price if offer else 0.0,
                cells=tuple(cells),
                sold=cores in sold,
                observed=cores in observed,
                server_name=offer.name if offer else "",
            )
        )
    return TableGroup(
        title=title,
        bases=ids,
        labels=tuple(b.label() for b in known),
        rows=tuple(rows),
        series=tuple(members),
        price_sources=tuple((i, p[1]) for i, p in pricing_of.items()),
        refused=tuple(refused),
    )


def _cell(
    s: Series,
    f: Figure,
    cores: int,
    priced: CostCatalog | None,
    block: Sequence[Series],
    by_id: Mapping[str, Basis],
) -> Cell:
    one = s.estimate(1)
    cost = breakdown = offer = None
    if priced is not None and (offer := priced.offer(cores)) is not None:
        breakdown = priced.server_cost(s.platform, cores)
        cost = breakdown.total
    return Cell(
        platform=s.platform,
        ht=s.ht,
        profile=s.profile,
        cores=cores,
        value=f.value,
        unit=f.unit,
        source=f.source,
        basis=s.origin,
        origin=f.origin,
        emulated=f.emulated,
        per_core=f.value / cores,
        efficiency=f.value / (cores * one.value) if isinstance(one, Figure) else None,
        server_cost=cost,
        cost_per_unit=None if cost is None else cost / (f.conservative / COST_UNITS[s.profile]),
        cost_unit=COST_UNIT_LABELS[s.profile],
        overhead=guest_overhead(s, f, cores, block, by_id),
        ht_gain=ht_gain(s, f, cores, block, by_id),
        basis_id=s.basis_id,
        flags=f.flags,
        bound=f.bound,
        ci_low=f.ci_low,
        ci_high=f.ci_high,
        interval=f.interval,
        cost=breakdown,
        server_name="" if offer is None else offer.name,
        coverage=f.coverage,
    )


def _source_of(series: Iterable[Series]) -> str:
    bases = {s.origin for s in series}
    return str(Source.of(bases)) if bases else "none"


def _across_runs(bases: Sequence[Basis]) -> str:
    """``; bare metal from run 1, guests from run 2: overheads across runs, unpaired`` when
    no run measured both (the overhead compares legs of different runs); "" otherwise."""
    bare = sorted({r for b in bases if b.platform == "baremetal" for r in b.runs})
    guests = sorted({r for b in bases if b.platform in GUEST_PLATFORMS for r in b.runs})
    if not bare or not guests or set(bare) & set(guests):
        return ""

    def runs(ids: Sequence[int]) -> str:
        return f"run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}"

    return (
        f"; bare metal from {runs(bare)}, guests from {runs(guests)}: overheads across "
        "runs, unpaired"
    )
