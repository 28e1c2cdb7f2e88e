"""Cost catalogs and the published reference dataset: YAML files validated at the edge.

A cost catalog (``profiles/catalog.yml`` by default, ``--catalog FILE`` otherwise) becomes
a :class:`sizing.engine.CostCatalog`; the reference dataset (``profiles/reference.yml``)
becomes a :class:`Reference` whose figures carry ``source="reference"``. A malformed file
raises :class:`sizing.errors.InputError` with one ``field.path: message`` line per problem.

**Fast path.** The bundled default catalog and reference dataset are read without pydantic
(defining the models costs more than the rest of ``sizing recommend``): they are plain
YAML in a known shape, and the unit tests check that the fast path and full validation
agree on them. Any file given by the user is validated in full
(:mod:`sizing.catalog.models`), and so is a bundled file the fast path cannot read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.catalog.aliases import LICENCE_ALIASES
from sizing.engine.costs import CostCatalog, Licence, ServerOffer, Support
from sizing.errors import InputError
from sizing.model import PROFILE_UNITS, Figure, FigureKind
from sizing.yamlfile import read_yaml

DEFAULT_CATALOG = paths.PROFILES / "catalog.yml"
REFERENCE = paths.PROFILES / "reference.yml"

__all__ = [
    "DEFAULT_CATALOG",
    "REFERENCE",
    "Reference",
    "REFERENCE_BASES",
    "catalog_from_dict",
    "cpu_offers",
    "load_catalog",
    "load_catalog_data",
    "load_reference",
    "reference_from_dict",
]


@dataclass(frozen=True)
class Reference:
    """The published reference dataset: where it comes from, its conditions, its figures,
    and the identity the source states for them (hardware, software, workload per
    architecture: ``traditional`` and ``kubernetes``).

    ``figures`` keep the table's platform names (``baremetal``, ``hypervisor``,
    ``kubernetes``) and carry their basis id (``reference/baremetal``, ``reference/esxi``,
    ``reference/kubernetes``); a figure the source calls client-bound is a lower bound
    (``bound="lower"``, flag ``client-bound``).
    """

    title: str
    publisher: str
    url: str
    date: str
    short: str
    conditions: Mapping[str, Mapping[str, str]]
    hardware_costs: Mapping[int, float]  # the published price per core count
    figures: tuple[Figure, ...]
    hardware: Mapping[str, str] = field(default_factory=dict)  # system, cpu_model
    software: Mapping[str, str] = field(default_factory=dict)  # per architecture
    workloads: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def citation(self) -> str:
        """The source in a few words, for labels."""
        if self.short:
            return self.short
        return f"{self.publisher}, {self.title}" + (f" ({self.date})" if self.date else "")


# The basis of each table column: (architecture, basis id).
REFERENCE_BASES = {
    "baremetal": ("traditional", "reference/baremetal"),
    "hypervisor": ("traditional", "reference/esxi"),
    "kubernetes": ("kubernetes", "reference/kubernetes"),
}


def reference_from_dict(data: Mapping[str, Any]) -> Reference:
    """Build a :class:`Reference` from a validated (or trusted) mapping.

    The traditional table's figures carry no HT mode and are taken as HT off; the
    Kubernetes table's "SSL TPS with hyper-threading" is HT on.
    """
    src = data["source"]
    ref = Reference(
        title=str(src["title"]),
        publisher=str(src["publisher"]),
        url=str(src.get("url", "")),
        date=str(src.get("date", "")),
        short=str(src.get("short", "")),
        conditions=data.get("conditions", {}),
        hardware_costs={int(r["cores"]): float(r["hardware_cost"]) for r in data["traditional"]},
        figures=(),
        hardware={str(k): str(v) for k, v in (data.get("hardware") or {}).items()},
        software={str(k): str(v) for k, v in (data.get("software") or {}).items()},
        workloads={str(k): dict(v) for k, v in (data.get("workload") or {}).items()},
    )
    origin = ref.citation()
    figures: list[Figure] = []

    def add(
        platform: str, cores: int, ht: str, profile: str, value: float, lower: bool = False
    ) -> None:
        figures.append(
            Figure(
                platform=platform,
                cores=int(cores),
                ht=ht,
                profile=profile,
                value=float(value),
                unit=PROFILE_UNITS[profile],
                source=FigureKind.REFERENCE,
                origin=origin,
                basis=REFERENCE_BASES[platform][1],
                flags=("client-bound",) if lower else (),
                bound="lower" if lower else "",
            )
        )

    for r in data["traditional"]:
        lower = set(r.get("lower_bound") or ())
        for profile in ("rps", "tps"):
            for platform in ("baremetal", "hypervisor"):
                column = f"{profile}_{platform}"
                add(platform, r["cores"], "off", profile, r[column], column in lower)
    for k in data.get("kubernetes", []):
        add("kubernetes", k["cores"], "off", "rps", k["rps"])
        add("kubernetes", k["cores"], "off", "tps", k["tps"])
        add("kubernetes", k["cores"], "on", "tps", k["tps_ht"])
    return replace(ref, figures=tuple(figures))


def catalog_from_dict(data: Mapping[str, Any]) -> CostCatalog:
    """Build the engine's :class:`CostCatalog` from a validated (or trusted) mapping.

    Every server is offered, several of one core count included; one naming another CPU
    than a measured basis' is refused there by name (:mod:`sizing.engine.offers`), and
    entries naming a CPU price a basis of that CPU (:func:`cpu_offers`). Licence keys
    ``libvirt`` and ``vsphere`` (the inventory's platform names) become the basis
    platforms ``kvm`` and ``esxi``; a key's licence, or its list of licences, becomes a
    tuple of lines that all apply.
    """
    power = data.get("power")
    support = data.get("support")
    # every server is offered: one of another CPU than a measured basis' is refused by
    # name there (sizing.engine.offers), never left out of the answer
    general = list(data["servers"])
    date = data.get("date") or ""
    discount = float(data.get("discount") or 0.0)
    currency = str(data.get("currency", "USD"))
    rates = {
        str(k): (float(v["rate"]), _cited(v)) for k, v in (data.get("exchange_rates") or {}).items()
    }
    return CostCatalog(
        servers=tuple(_offer(s, discount) for s in general),
        name=str(data.get("name") or ""),
        currency=currency,
        licences={
            LICENCE_ALIASES.get(str(k), str(k)): tuple(
                _licence(line, currency, rates, discount)
                for line in (v if isinstance(v, list) else [v])
            )
            for k, v in (data.get("licences") or {}).items()
        },
        discount=discount,
        exchange_rates=rates,
        sources={
            k: str(data[k].get("source") or "")
            for k in ("power", "support")
            if data.get(k) and data[k].get("source")
        },
        price_per_kwh=None if power is None else float(power["price_per_kwh"]),
        amortisation_months=data.get("amortisation_months"),
        source=str(data.get("source") or ""),
        date=date.isoformat() if isinstance(date, dt.date) else str(date),
        support=None
        if support is None
        else Support(share_of_hardware_per_year=float(support["share_of_hardware_per_year"])),
    )


def _offer(s: Mapping[str, Any], catalog_discount: float = 0.0) -> ServerOffer:
    """A server line: its price after its own discount (else the catalog's)."""
    own = s.get("discount")
    discount = float(catalog_discount if own is None else own)
    price = float(s["price"])
    return ServerOffer(
        cores=int(s["cores"]),
        price=price * (1.0 - discount),
        sockets=int(s.get("sockets", 1)),
        watts=None if s.get("watts") is None else float(s["watts"]),
        name=str(s.get("name") or ""),
        cpu_model=str(s.get("cpu_model") or ""),
        list_price=price if discount else None,
        discount=discount,
        source=str(s.get("source") or ""),
    )


def _cited(v: Mapping[str, Any]) -> str:
    """An exchange rate's source with its date: ``ECB reference rate, 2026-11-02``."""
    date = v.get("date") or ""
    date = date.isoformat() if isinstance(date, dt.date) else str(date)
    return ", ".join(p for p in (str(v.get("source") or ""), date) if p)


def _licence(
    v: Mapping[str, Any],
    currency: str,
    rates: Mapping[str, tuple[float, str]],
    catalog_discount: float,
) -> Licence:
    """A licence line, its price in the catalog's currency after its discount (its own,
    else the catalog's); a currency without a stated rate is refused by validation."""
    own = v.get("discount")
    discount = float(catalog_discount if own is None else own)
    cur = str(v.get("currency") or currency)
    rate = 1.0 if cur == currency else rates[cur][0]
    listed = float(v["price"])
    return Licence(
        per=v["per"],
        price=listed * rate * (1.0 - discount),
        term=v.get("term", "once"),
        min_cores_per_socket=int(v.get("min_cores_per_socket") or 0),
        min_per_order=int(v.get("min_per_order") or 0),
        list_price=listed,
        currency=cur,
        rate=rate,
        discount=discount,
        source=str(v.get("source") or ""),
        name=str(v.get("name") or ""),
    )


def cpu_offers(data: Mapping[str, Any], cpu_model: str) -> tuple[ServerOffer, ...]:
    """The catalog entries whose ``cpu_model`` is part of ``cpu_model`` (case-insensitive):
    what prices that hardware. Empty when none matches or the CPU is unknown; else every
    server of the catalog, so that one of another CPU is refused by name and one naming no
    CPU is sized as this one (:mod:`sizing.engine.offers`), none left out."""
    if not cpu_model:
        return ()
    have = cpu_model.lower()
    servers = data["servers"]
    if not any(s.get("cpu_model") and str(s["cpu_model"]).lower() in have for s in servers):
        return ()
    discount = float(data.get("discount") or 0.0)
    return tuple(_offer(s, discount) for s in servers)


# -- reading ---------------------------------------------------------------------------


# A catalog prices tens of servers, a reference dataset a few hundred figures. 256 KiB
# holds about 3,500 servers (each one more costs about 1.6 ms to read, validate and size
# with `recommend`: 9,000 took 16 s here, 2,000 took 6 s). A larger file is refused in one
# line before it is parsed (a 50 MB one took 152 s and 3 GB of memory).
MAX_FILE_BYTES = 256 << 10


def _read(path: Path, what: str) -> Any:
    data = read_yaml(path, what, max_bytes=MAX_FILE_BYTES)
    if not isinstance(data, dict):
        raise InputError(str(path), [f"expected a mapping at the top of the {what} file"])
    return data


def _is_bundled(path: Path, bundled: Path) -> bool:
    try:
        return path.resolve() == bundled.resolve()
    except OSError:
        return False


def _validated_catalog(path: Path, data: Any) -> CostCatalog:
    # deferred (as below): defining the models costs more than the rest of recommend
    from pydantic import ValidationError

    from sizing.catalog.models import CatalogModel, problems_of

    try:
        model = CatalogModel.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_of(exc, CatalogModel)) from exc
    return catalog_from_dict(model.model_dump())


def _validated_reference(path: Path, data: Any) -> Reference:
    from pydantic import ValidationError

    from sizing.catalog.models import ReferenceModel, problems_of

    try:
        model = ReferenceModel.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_of(exc, ReferenceModel)) from exc
    return reference_from_dict(model.model_dump())


def load_catalog(path: Path | str | None = None, *, validate: bool = False) -> CostCatalog:
    """Read a cost catalog (the bundled default when ``path`` is None).

    A user's file is always validated in full; the bundled one only with ``validate``.
    """
    p = Path(path) if path is not None else DEFAULT_CATALOG
    data = _read(p, "catalog")
    if not validate and _is_bundled(p, DEFAULT_CATALOG):
        try:
            return catalog_from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # fall through to full validation, which names the problem
    return _validated_catalog(p, data)


def load_catalog_data(path: Path | str | None = None) -> dict[str, Any]:
    """A catalog file's validated mapping (for :func:`cpu_offers`)."""
    p = Path(path) if path is not None else DEFAULT_CATALOG
    data = _read(p, "catalog")
    if _is_bundled(p, DEFAULT_CATALOG) and "servers" in data:
        return dict(data)
    from pydantic import ValidationError

    from sizing.catalog.models import CatalogModel, problems_of

    try:
        dumped: dict[str, Any] = CatalogModel.model_validate(data).model_dump()
    except ValidationError as exc:
        raise InputError(str(p), problems_of(exc, CatalogModel)) from exc
    return dumped


def load_reference(path: Path | str | None = None, *, validate: bool = False) -> Reference:
    """Read the reference dataset (the bundled one when ``path`` is None)."""
    p = Path(path) if path is not None else REFERENCE
    data = _read(p, "reference dataset")
    if not validate and _is_bundled(p, REFERENCE):
        try:
            return reference_from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    return _validated_reference(p, data)
