"""Pydantic models of the cost catalog and reference dataset files (validation at the edge).

Imported only when a file must be validated: a user's ``--catalog``, or a bundled file
the fast path in :mod:`sizing.catalog` could not read. Defining these models costs tens of
milliseconds, which ``sizing recommend`` on the bundled data does not pay.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from sizing.catalog.aliases import LICENCE_ALIASES
from sizing.filemodel import FileModel

# A licence is priced per cost family (sizing.model.cost_family) or per platform, which
# overrides its family; libvirt and vsphere (the inventory's names) are kvm and esxi; the
# lines under "all" apply to every platform besides (sizing.engine.licences).
LicenceKey = Literal[
    "baremetal",
    "hypervisor",
    "kubernetes",
    "esxi",
    "kvm",
    "libvirt",
    "vsphere",
    "virtualized-host",
    "all",
]


# The most any one price may be (a server, a licence): far above any real one, and low
# enough that a fleet's cost stays an exact, printable number (1e300 is a typo, not a price).
MAX_PRICE = 1e9


class _Model(FileModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# -- cost catalog ----------------------------------------------------------------------


class ServerModel(_Model):
    """One server on offer."""

    cores: int = Field(ge=1, le=1024, description="Physical CPU cores of the server.")
    price: float = Field(
        gt=0,
        le=MAX_PRICE,
        description="Hardware price in the catalog's currency (a server costs something: "
        "0 is refused).",
    )
    sockets: int = Field(default=1, ge=1, le=16, description="CPU sockets (for licences).")
    watts: float | None = Field(default=None, gt=0, le=100_000, description="Power draw at load.")
    name: str = Field(
        default="", max_length=80, description="The server model, printed with every answer."
    )
    cpu_model: str = Field(
        default="",
        description="CPU model this price is for: a measured basis whose CPU model contains "
        "it (case-insensitive) is priced by the entries that match.",
    )
    discount: float | None = Field(
        default=None, ge=0, lt=1, description="0.15: 15% off this line's list price."
    )
    source: str = Field(default="", description="Where this price comes from.")


class CeilingModel(_Model):
    """A CPU's stated crypto ceiling: what ``recommend --cpu`` translates handshake
    figures to (an estimate, with ``--allow-translation``)."""

    cpu_model: str = Field(min_length=1, description="The CPU model (matched by substring).")
    tls_key: Literal["rsa2048", "ecdsa-p256"] = "rsa2048"
    sign_per_core: float = Field(
        gt=0, le=1e7, description="Private-key signatures per second of one core (HT off)."
    )
    sign_per_core_ht: float | None = Field(
        default=None, gt=0, le=1e7, description="The same of one core's two HT siblings together."
    )
    source: str = Field(min_length=1, description="Where the figure comes from.")


class LicenceModel(_Model):
    """A platform licence: per core, socket, socket pair (OpenShift), server or NGINX
    instance, once or every year, in the catalog's currency or its own."""

    per: Literal["core", "socket", "socket-pair", "server", "instance"]
    price: float = Field(
        gt=0, le=MAX_PRICE, description="Per unit; a licence that costs nothing is left out."
    )
    term: Literal["once", "yearly"] = "once"
    min_cores_per_socket: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="Per-core licences: the fewest cores paid for on each socket.",
    )
    min_per_order: int = Field(
        default=0,
        ge=0,
        le=1_000_000,
        description="The fewest units (cores, sockets or servers) an order pays for.",
    )
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    discount: float | None = Field(
        default=None, ge=0, lt=1, description="0.15: 15% off this licence's list price."
    )
    source: str = Field(default="", description="Where this price and term come from.")
    name: str = Field(
        default="",
        max_length=60,
        description="What is licensed (vSphere Foundation, NGINX Plus), in every output.",
    )


# A key holds one licence (a mapping) or a list of them that all apply. The tags are
# pydantic's names for the two forms in an error's path; problems_of leaves them out.
_ONE, _LIST = "[one]", "[list]"


def _form(v: Any) -> str:
    return _LIST if isinstance(v, list) else _ONE


LicenceLines = Annotated[
    Annotated[LicenceModel, Tag(_ONE)]
    | Annotated[Annotated[list[LicenceModel], Field(min_length=1, max_length=20)], Tag(_LIST)],
    Discriminator(_form),
]


class SupportModel(_Model):
    """Hardware support: a share of each server's price, every year of the period."""

    share_of_hardware_per_year: float = Field(
        gt=0, le=1, description="0.1: 10% of the hardware price a year."
    )
    source: str = ""


class PowerModel(_Model):
    """The price of electricity."""

    price_per_kwh: float = Field(gt=0, le=1_000)
    source: str = ""


class RateModel(_Model):
    """What one unit of another currency is worth in the catalog's currency."""

    rate: float = Field(gt=0, le=1e6, description="1 unit of the currency in the catalog's.")
    source: str = Field(min_length=1, description="Where the rate comes from (and when).")
    date: str = ""

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_written(cls, v: Any) -> Any:
        return v.isoformat() if isinstance(v, dt.date) else v


class CatalogModel(_Model):
    """A hardware cost catalog file."""

    kind: Literal["catalog"] = "catalog"
    name: str = ""
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    source: str = ""
    date: str = Field(default="", description="When the prices were given (a quote's date).")
    servers: list[ServerModel] = Field(min_length=1)
    licences: dict[LicenceKey, LicenceLines] = Field(default_factory=dict)
    support: SupportModel | None = None
    power: PowerModel | None = None
    amortisation_months: int | None = Field(default=None, ge=1, le=240)
    ceilings: list[CeilingModel] = Field(default_factory=list)
    discount: float | None = Field(
        default=None, ge=0, lt=1, description="Off every line without its own discount."
    )
    exchange_rates: dict[str, RateModel] = Field(default_factory=dict)

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_written(cls, v: Any) -> Any:
        # YAML reads an unquoted 2026-11-03 as a date: keep it as the ISO text it was
        return v.isoformat() if isinstance(v, dt.date) else v

    @model_validator(mode="after")
    def _consistent(self) -> CatalogModel:
        problems: list[str] = []
        # a catalog is a list of servers: several of one core count (other vendors,
        # sockets, CPUs, prices) are all priced; only the same server twice is refused
        seen: dict[tuple[int, int, str, str], int] = {}
        for i, s in enumerate(self.servers):
            slot = (s.cores, s.sockets, s.cpu_model.strip().lower(), s.name.strip().lower())
            if slot in seen:
                first = seen[slot]
                problems.append(
                    f"servers.{i}.name: {s.cores} cores listed twice with the same name, "
                    f"sockets and CPU (also servers.{first}): give each its own name"
                )
            seen.setdefault(slot, i)
        if self.power is not None:
            if self.amortisation_months is None:
                problems.append("amortisation_months: required when power is priced")
            for i, s in enumerate(self.servers):
                if s.watts is None:
                    problems.append(f"servers.{i}.watts: required when power is priced")
        problems += self._licence_problems()
        for code in self.exchange_rates:
            if not re.fullmatch(r"[A-Z]{3}", code) or code == self.currency:
                problems.append(
                    f"exchange_rates.{code}: a currency code (EUR) other than the catalog's"
                )
        for alias, name in LICENCE_ALIASES.items():
            if alias in self.licences and name in self.licences:
                problems.append(f"licences.{alias}: the same platform as licences.{name}")
        if self.support is not None and self.amortisation_months is None:
            problems.append("amortisation_months: required when support is priced")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _licence_problems(self) -> list[str]:
        """Each licence line's terms, and the names that tell a platform's lines apart."""
        problems: list[str] = []
        for platform, entry in self.licences.items():
            many = isinstance(entry, list)
            lines = entry if isinstance(entry, list) else [entry]
            for i, lic in enumerate(lines):
                at = f"licences.{platform}" + (f".{i}" if many else "")
                if lic.term == "yearly" and self.amortisation_months is None:
                    problems.append(
                        f"amortisation_months: required by the yearly licence of {platform}"
                    )
                if lic.min_cores_per_socket and lic.per != "core":
                    problems.append(f"{at}.min_cores_per_socket: only a per-core licence has one")
                if lic.currency and lic.currency != self.currency:
                    if lic.currency not in self.exchange_rates:
                        problems.append(
                            f"{at}.currency: {lic.currency} is not the catalog's "
                            f"{self.currency}: state exchange_rates: {{{lic.currency}: {{rate: "
                            f"<1 {lic.currency} in {self.currency}>, source: ...}}}}"
                        )
                if len(lines) > 1 and not lic.name.strip():
                    problems.append(
                        f"{at}.name: required when {platform} has several licences "
                        "(what each one licenses, shown in every answer)"
                    )
        every = self.licences.get("all")
        every_names = {x.name.strip().lower() for x in _lines(every) if x.name.strip()}
        for platform, entry in self.licences.items():
            seen: set[str] = set() if platform == "all" else set(every_names)
            many = isinstance(entry, list)
            for i, lic in enumerate(_lines(entry)):
                name = lic.name.strip().lower()
                if name and name in seen:
                    at = f"licences.{platform}" + (f".{i}" if many else "")
                    problems.append(
                        f"{at}.name: {lic.name!r} is named twice among the licences "
                        f"{platform} pays (all apply: give each line its own name)"
                    )
                seen.add(name)
        return problems


def _lines(entry: LicenceModel | list[LicenceModel] | None) -> list[LicenceModel]:
    return [] if entry is None else entry if isinstance(entry, list) else [entry]


# -- reference dataset -----------------------------------------------------------------


class SourceModel(_Model):
    """Where published figures come from."""

    title: str = Field(min_length=1)
    publisher: str = Field(min_length=1)
    url: str = ""
    date: str = ""
    short: str = ""


TraditionalColumn = Literal["rps_baremetal", "rps_hypervisor", "tps_baremetal", "tps_hypervisor"]


class TraditionalRow(_Model):
    """One row of the traditional-architecture table; ``lower_bound`` names the figures the
    source calls client-bound (the true capacity may be higher)."""

    cores: int = Field(ge=1)
    hardware_cost: float = Field(ge=0)
    rps_baremetal: float = Field(gt=0)
    rps_hypervisor: float = Field(gt=0)
    tps_baremetal: float = Field(gt=0)
    tps_hypervisor: float = Field(gt=0)
    lower_bound: list[TraditionalColumn] = Field(default_factory=list)


class KubernetesRow(_Model):
    """One row of the Kubernetes (NGINX Ingress Controller) table."""

    cores: int = Field(ge=1)
    hardware_cost: float = Field(ge=0)
    rps: float = Field(gt=0)
    tps: float = Field(gt=0)
    tps_ht: float = Field(gt=0)


class HardwareModel(_Model):
    """The hardware the source states."""

    system: str = ""
    cpu_model: str = ""


class WorkloadModel(_Model):
    """The workload identity of one architecture's figures."""

    role: Literal["static", "load-balance", "proxy", "api-jwt"]
    file_size: int = Field(ge=1)
    tls_key: Literal["rsa2048", "ecdsa-p256", ""] = ""
    protocol: str = "HTTP/1.1"


class ReferenceModel(_Model):
    """The published reference dataset."""

    kind: Literal["reference"] = "reference"
    source: SourceModel
    conditions: dict[str, dict[str, str]] = Field(default_factory=dict)
    hardware: HardwareModel = Field(default_factory=HardwareModel)
    software: dict[Literal["traditional", "kubernetes"], str] = Field(default_factory=dict)
    workload: dict[Literal["traditional", "kubernetes"], WorkloadModel] = Field(
        default_factory=dict
    )
    traditional: list[TraditionalRow] = Field(min_length=1)
    kubernetes: list[KubernetesRow] = Field(default_factory=list)


# Why a price of 0 (or below) is refused, by the section it is in: a zero is never taken
# as "free", and a part that is not priced is left out (and said so in every answer).
_NOT_POSITIVE = {
    "servers": "must be above 0: a server has a price (write the one quoted)",
    "licences": "must be above 0: a licence that costs nothing is left out of the catalog",
    "power": "must be above 0: leave power out when it is not priced",
    "support": "must be above 0: leave support out when it is not priced",
}


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys a model accepts where ``loc`` (an unknown key's path) points: the fields
    of the model that holds it, found through optional values, lists and mappings (an
    index or a key of the path is a container's); empty when unknown."""
    node: Any = model
    for part in loc[:-1]:
        node = _optional(node, part)
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            if field is None:
                return []
            node = field.annotation
            continue
        args = get_args(node)  # list[X] or dict[K, X]: this part is an index or a key
        if not args:
            return []
        node = args[-1]
    node = _optional(node, loc[-1] if loc else "")
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return []


def _optional(node: Any, part: Any = "") -> Any:
    """``X`` of ``X | None`` (and of ``Annotated[X, ...]``); of a licence key's two forms
    (one licence or a list), the list when ``part`` is an index, else the one; anything
    else as it is."""
    while get_origin(node) is Annotated:
        node = get_args(node)[0]
    if get_origin(node) in (Union, UnionType):
        args = [a for a in get_args(node) if a is not type(None)]
        if len(args) == 1:
            return _optional(args[0], part)
        forms = [_optional(a) for a in args]
        want = [a for a in forms if (get_origin(a) is list) == isinstance(part, int)]
        return want[0] if len(want) == 1 else node
    return node


def unknown_key(key: str, expected: list[str]) -> str:
    """``unknown field; expected one of a, b, c (did you mean b?)``."""
    if not expected:
        return "unknown field"
    near = difflib.get_close_matches(key, expected, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]}?" if near else ""
    return f"unknown field{hint} (expected: {', '.join(expected)})"


def problems_of(exc: ValidationError, model: type[BaseModel] | None = None) -> list[str]:
    """One ``field.path: message`` line per problem of a pydantic validation error; an
    unknown key lists the keys ``model`` accepts there."""
    out: list[str] = []
    for e in exc.errors():
        e["loc"] = tuple(p for p in e["loc"] if p not in (_ONE, _LIST))
        loc = ".".join(str(p) for p in e["loc"] if p != "[key]")
        if e["type"] == "value_error":
            # our own cross-field checks: already "field: message" lines
            msg = str(e["ctx"]["error"]) if "ctx" in e else e["msg"]
            out.extend(line for line in msg.splitlines() if line)
            continue
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            key = str(e["loc"][-1]) if e["loc"] else ""
            msg = unknown_key(key, [] if model is None else _fields_at(model, tuple(e["loc"])))
        first = str(e["loc"][0]) if e["loc"] else ""
        if e["type"] == "greater_than" and first in _NOT_POSITIVE:
            msg = f"{_NOT_POSITIVE[first]}, not {e.get('input')!r}"
        if e["type"] == "literal_error" and "input" in e:
            msg = f"{e['input']!r} is not allowed; {e['msg'].lower()}"
            words = re.findall(r"'([^']*)'", str(e.get("ctx", {}).get("expected", "")))
            near = difflib.get_close_matches(str(e["input"]), words, n=1, cutoff=0.6)
            if near:
                msg += f" (did you mean {near[0]}?)"
        out.append(f"{loc or '(top)'}: {msg}")
    return out
