"""Pydantic models of the cost catalog and reference dataset files (validation at the edge).

Imported only when a file must be validated: a user's ``--catalog``, or a bundled file
the fast path in :mod:`sizing.catalog` could not read. Defining these models costs tens of
milliseconds, which ``sizing recommend`` on the bundled data does not pay.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PlatformName = Literal["baremetal", "hypervisor", "kubernetes"]


# The most any one price may be (a server, a licence): far above any real one, and low
# enough that a fleet's cost stays an exact, printable number (1e300 is a typo, not a price).
MAX_PRICE = 1e9


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# -- cost catalog ----------------------------------------------------------------------


class ServerModel(_Model):
    """One server on offer."""

    cores: int = Field(ge=1, le=1024, description="Physical CPU cores of the server.")
    price: float = Field(
        ge=0, le=MAX_PRICE, description="Hardware price in the catalog's currency."
    )
    sockets: int = Field(default=1, ge=1, le=16, description="CPU sockets (for licences).")
    watts: float | None = Field(default=None, gt=0, le=100_000, description="Power draw at load.")
    name: str = ""
    cpu_model: str = Field(
        default="",
        description="CPU model this price is for: a measured basis whose CPU model contains "
        "it (case-insensitive) is priced by the entries that match.",
    )


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
    """A platform licence: per socket or per core, once or every year."""

    per: Literal["socket", "core"]
    price: float = Field(ge=0, le=MAX_PRICE)
    term: Literal["once", "yearly"] = "once"


class PowerModel(_Model):
    """The price of electricity."""

    price_per_kwh: float = Field(ge=0, le=1_000)


class CatalogModel(_Model):
    """A hardware cost catalog file."""

    kind: Literal["catalog"] = "catalog"
    name: str = ""
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    source: str = ""
    servers: list[ServerModel] = Field(min_length=1)
    licences: dict[PlatformName, LicenceModel] = Field(default_factory=dict)
    power: PowerModel | None = None
    amortisation_months: int | None = Field(default=None, ge=1, le=240)
    ceilings: list[CeilingModel] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> CatalogModel:
        problems: list[str] = []
        seen: dict[tuple[int, str], int] = {}
        for i, s in enumerate(self.servers):
            slot = (s.cores, s.cpu_model.lower())
            if slot in seen:
                first = seen[slot]
                problems.append(
                    f"servers.{i}.cores: {s.cores} cores listed twice (also servers.{first})"
                )
            seen.setdefault(slot, i)
        if self.power is not None:
            if self.amortisation_months is None:
                problems.append("amortisation_months: required when power is priced")
            for i, s in enumerate(self.servers):
                if s.watts is None:
                    problems.append(f"servers.{i}.watts: required when power is priced")
        for platform, lic in self.licences.items():
            if lic.term == "yearly" and self.amortisation_months is None:
                problems.append(
                    f"amortisation_months: required by the yearly licence of {platform}"
                )
        if problems:
            raise ValueError("\n".join(problems))
        return self


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


def problems_of(exc: ValidationError) -> list[str]:
    """One ``field.path: message`` line per problem of a pydantic validation error."""
    out: list[str] = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e["loc"] if p != "[key]")
        if e["type"] == "value_error":
            # our own cross-field checks: already "field: message" lines
            msg = str(e["ctx"]["error"]) if "ctx" in e else e["msg"]
            out.extend(line for line in msg.splitlines() if line)
            continue
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        if e["type"] == "literal_error" and "input" in e:
            msg = f"{e['input']!r} is not allowed; {e['msg'].lower()}"
        out.append(f"{loc or '(top)'}: {msg}")
    return out
