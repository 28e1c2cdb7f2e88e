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

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.engine.costs import CostCatalog, Licence, ServerOffer
from sizing.errors import InputError
from sizing.model import Figure
from sizing.yamlfile import read_yaml

DEFAULT_CATALOG = paths.PROFILES / "catalog.yml"
REFERENCE = paths.PROFILES / "reference.yml"
UNITS = {"rps": "requests/s", "tps": "handshakes/s"}

__all__ = [
    "DEFAULT_CATALOG",
    "REFERENCE",
    "Reference",
    "catalog_from_dict",
    "load_catalog",
    "load_reference",
    "reference_from_dict",
]


@dataclass(frozen=True)
class Reference:
    """The published reference dataset: where it comes from, its conditions, its figures."""

    title: str
    publisher: str
    url: str
    date: str
    short: str
    conditions: Mapping[str, Mapping[str, str]]
    hardware_costs: Mapping[int, float]  # the published price per core count
    figures: tuple[Figure, ...]

    def citation(self) -> str:
        """The source in a few words, for labels."""
        if self.short:
            return self.short
        return f"{self.publisher}, {self.title}" + (f" ({self.date})" if self.date else "")


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
    )
    origin = ref.citation()
    figures: list[Figure] = []

    def add(platform: str, cores: int, ht: str, profile: str, value: float) -> None:
        figures.append(
            Figure(
                platform=platform,
                cores=int(cores),
                ht=ht,
                profile=profile,
                value=float(value),
                unit=UNITS[profile],
                source="reference",
                origin=origin,
            )
        )

    for r in data["traditional"]:
        add("baremetal", r["cores"], "off", "rps", r["rps_baremetal"])
        add("hypervisor", r["cores"], "off", "rps", r["rps_hypervisor"])
        add("baremetal", r["cores"], "off", "tps", r["tps_baremetal"])
        add("hypervisor", r["cores"], "off", "tps", r["tps_hypervisor"])
    for k in data.get("kubernetes", []):
        add("kubernetes", k["cores"], "off", "rps", k["rps"])
        add("kubernetes", k["cores"], "off", "tps", k["tps"])
        add("kubernetes", k["cores"], "on", "tps", k["tps_ht"])
    return replace(ref, figures=tuple(figures))


def catalog_from_dict(data: Mapping[str, Any]) -> CostCatalog:
    """Build the engine's :class:`CostCatalog` from a validated (or trusted) mapping."""
    power = data.get("power")
    return CostCatalog(
        servers=tuple(
            ServerOffer(
                cores=int(s["cores"]),
                price=float(s["price"]),
                sockets=int(s.get("sockets", 1)),
                watts=None if s.get("watts") is None else float(s["watts"]),
                name=str(s.get("name", "")),
            )
            for s in data["servers"]
        ),
        name=str(data.get("name", "")),
        currency=str(data.get("currency", "USD")),
        licences={
            str(k): Licence(per=v["per"], price=float(v["price"]), term=v.get("term", "once"))
            for k, v in (data.get("licences") or {}).items()
        },
        price_per_kwh=None if power is None else float(power["price_per_kwh"]),
        amortisation_months=data.get("amortisation_months"),
    )


# -- reading ---------------------------------------------------------------------------


def _read(path: Path, what: str) -> Any:
    data = read_yaml(path, what)
    if not isinstance(data, dict):
        raise InputError(str(path), [f"expected a mapping at the top of the {what} file"])
    return data


def _is_bundled(path: Path, bundled: Path) -> bool:
    try:
        return path.resolve() == bundled.resolve()
    except OSError:
        return False


def _validated_catalog(path: Path, data: Any) -> CostCatalog:
    from pydantic import ValidationError

    from sizing.catalog.models import CatalogModel, problems_of

    try:
        model = CatalogModel.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_of(exc)) from exc
    return catalog_from_dict(model.model_dump())


def _validated_reference(path: Path, data: Any) -> Reference:
    from pydantic import ValidationError

    from sizing.catalog.models import ReferenceModel, problems_of

    try:
        model = ReferenceModel.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_of(exc)) from exc
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
