"""A sizing basis: the figures that may share one scaling curve, one table block and one price.

A basis is one hardware (CPU model and topology), one platform (bare metal, KVM, ESXi, a
virtualized/containerized host that is never called bare metal, or Kubernetes), one
workload and one software stack. The bundled reference data is a basis of its own. A series,
a table row, an overhead or a recommendation never mixes bases (DESIGN.md, "A figure belongs
to a basis").

:func:`choose` picks the bases a command sizes from:

- ``requested`` ids (exact, or a unique prefix; a prefix that matches one group's bases
  takes them all) are taken as asked, qualified or not: asking by name counts as asking
  for a virtualized-host or emulated basis. An unknown id is a :class:`UsageError` that lists
  the ids.
- Otherwise a *measured* basis qualifies when it has figures and is neither emulated nor a
  virtualized host (unless ``include_*``). Among the qualifying ones the basis with the most
  distinct core counts wins, then the newest run; its group (:func:`group_key`: the same
  physical host, hardware, workload and software on other platforms) comes with it.
- None qualifies: the reference group (the group of ``reference/baremetal``).

Pure: bases are built by :mod:`sizing.sources` and handed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.ceilings import Bound
from sizing.engine.costs import CostCatalog, ServerOffer
from sizing.model import VIRTUALIZED_HOST_WORDS, Figure, SizingMetric

REFERENCE_DEFAULT = "reference/baremetal"

ROLE_LABELS = {
    "static": "static file",
    "load-balance": "load-balancing to web servers",
    "proxy": "reverse proxy",
    "api-jwt": "API gateway with JWT",
}
KEY_LABELS = {"rsa2048": "RSA-2048", "ecdsa-p256": "ECDSA P-256"}
# Flags every figure of a basis may share that keep it out of the default choice.
DISQUALIFYING = ("emulated", "virtualized-host")


@dataclass(frozen=True)
class Hardware:
    """The CPU a basis ran on: model and topology (``None`` / ``""`` when unknown)."""

    cpu_model: str
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int | None = None

    @property
    def physical_cores(self) -> int | None:
        if self.sockets is None or self.cores_per_socket is None:
            return None
        return self.sockets * self.cores_per_socket

    def label(self) -> str:
        """``Intel Xeon Silver 4110, 2 × 8 cores × 2 threads``."""
        name = self.cpu_model or "unknown CPU"
        if self.sockets is None or self.cores_per_socket is None:
            return name
        topo = f"{self.sockets} × {self.cores_per_socket} cores"
        if self.threads_per_core is not None:
            plural = "s" if self.threads_per_core > 1 else ""
            topo += f" × {self.threads_per_core} thread{plural}"
        return f"{name}, {topo}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "cpu_model": self.cpu_model,
            "sockets": self.sockets,
            "cores_per_socket": self.cores_per_socket,
            "threads_per_core": self.threads_per_core,
            "physical_cores": self.physical_cores,
            "label": self.label(),
        }


@dataclass(frozen=True)
class Workload:
    """What the RPS and TPS figures of one basis share.

    ``role`` is ``static`` (nginx serves the file), ``load-balance``, ``proxy`` or
    ``api-jwt``; ``tls_key`` is the TPS profile's key (``rsa2048``, ``ecdsa-p256``, or ``""``
    when the basis has no TPS figures). ``keepalive`` and ``handshake`` (``full`` or
    ``resumed``) default to the articles' method.
    """

    role: str
    file_size: int
    tls_key: str = ""
    protocol: str = "HTTP/1.1"
    keepalive: bool = True
    handshake: str = "full"
    # the load generator that measured it, when not the default one (the articles'):
    # figures of two generators are never pooled nor compared
    generator: str = ""
    # a replayed customer workload (issue 57): its key (workload_key), a basis of its own,
    # stated in the customer's own requests per second
    customer: str = ""

    def label(self) -> str:
        """``static file 128 B, RSA-2048`` or ``load-balancing to web servers, 128 B, ...``."""
        role = ROLE_LABELS.get(self.role, self.role)
        if self.customer:
            return f"your workload replayed ({role}, {self.customer})"
        parts = [f"{role} {self.file_size:,} B" if self.role == "static" else role]
        if self.role != "static":
            parts.append(f"{self.file_size:,} B")
        if self.tls_key:
            parts.append(KEY_LABELS.get(self.tls_key, self.tls_key))
        if not self.keepalive:
            parts.append("no keepalive")
        if self.handshake != "full":
            parts.append(f"{self.handshake} handshakes")
        if self.generator:
            parts.append(f"measured with {self.generator}")
        return ", ".join(parts)

    def same_as(self, other: Workload, profile: str | None = None) -> bool:
        """Whether figures of the two workloads measure the same thing. For ``rps`` figures
        the TLS key and handshake mode do not matter (the RPS profile has no handshake)."""
        if (self.generator, self.customer) != (other.generator, other.customer):
            return False
        if profile == SizingMetric.RPS:
            return (self.role, self.file_size, self.protocol, self.keepalive) == (
                other.role,
                other.file_size,
                other.protocol,
                other.keepalive,
            )
        if profile == SizingMetric.TPS:
            return (self.role, self.tls_key, self.handshake) == (
                other.role,
                other.tls_key,
                other.handshake,
            )
        return self == other

    def shared(self) -> tuple[str, int, str, str]:
        """What every profile of the workload shares (role, file size, protocol, the
        generator): bases alike in it may share a table block even when one lacks a
        profile's figures (a guest measured for RPS only beside its host measured for RPS
        and TPS)."""
        return (self.role, self.file_size, self.protocol, self.generator + self.customer)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "file_size": self.file_size,
            "tls_key": self.tls_key,
            "protocol": self.protocol,
            "keepalive": self.keepalive,
            "handshake": self.handshake,
        }
        if self.generator:  # the default generator's bases read as they always did
            out["generator"] = self.generator
        if self.customer:
            out["customer"] = self.customer
        out["label"] = self.label()
        return out


@dataclass(frozen=True)
class Price:
    """What servers of one basis cost, and where that price came from.

    ``source`` says it in words (``inventory sizing_price_usd of r640-01``, ``catalog lab
    matched to Xeon``, ``article 2021 price list``); ``offers`` are the core counts sold.
    """

    source: str
    offers: tuple[ServerOffer, ...]

    def catalog(self, base: CostCatalog) -> CostCatalog:
        """``base`` (its currency, licences, power and period) selling these offers."""
        return CostCatalog(
            servers=self.offers,
            name=self.source,
            currency=base.currency,
            licences=base.licences,
            price_per_kwh=base.price_per_kwh,
            amortisation_months=base.amortisation_months,
            support=base.support,
            discount=base.discount,
            exchange_rates=base.exchange_rates,
            sources=base.sources,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "offers": [
                {
                    "cores": o.cores,
                    "price": o.price,
                    "sockets": o.sockets,
                    "name": o.name,
                    "cpu_model": o.cpu_model,
                }
                for o in sorted(self.offers, key=lambda o: o.cores)
            ],
        }


@dataclass(frozen=True)
class Basis:
    """One coherent, labelled set of figures (see the module docstring).

    ``id`` is stable and typed by users: ``<host>/<platform>/<workload slug>`` for a
    measured basis (``localhost/virtualized-host/static-128b``), ``reference/<platform>``
    for the bundled data. ``physical_host`` is the machine the figures ran on (a guest's
    hypervisor host). ``flags`` are the flags every figure shares that disqualify it by
    default (``emulated``, ``virtualized-host``) or that say what it is (``simulated``).
    """

    id: str
    origin: str  # measured | reference
    platform: str
    hardware: Hardware
    workload: Workload
    software: str
    physical_host: str
    hosts: tuple[str, ...] = ()
    runs: tuple[int, ...] = ()
    figures: tuple[Figure, ...] = ()
    flags: tuple[str, ...] = ()
    price: Price | None = None
    citation: str = ""
    pooled_into: str = ""  # the pooled basis of several hosts that agree, this one among them
    disagrees: tuple[str, ...] = ()  # where hosts of the same identity disagree, in words
    bounds: tuple[Bound, ...] = ()  # physical ceilings of its series (sizing.ceilings)

    @property
    def kind(self) -> str:
        """What its figures are, in a word before "basis": measured, reference, or
        simulated (an example store's made-up figures: never called measured)."""
        return "simulated" if "simulated" in self.flags else str(self.origin)

    def bounds_of(self, profile: str, ht: str) -> tuple[Bound, ...]:

        return tuple(b for b in self.bounds if b.profile == profile and b.ht == ht)

    def qualifies(self, *, include_virtualized: bool, include_emulated: bool) -> tuple[bool, str]:
        """Whether the default choice may use this basis, and if not, why not."""
        if not self.figures:
            return False, "no valid figures"
        if self.pooled_into:
            return False, f"pooled with the other hosts that agree into {self.pooled_into}"
        if "emulated" in self.flags and not include_emulated:
            return False, "emulated (software-emulated guest)"
        virtualized = self.platform == "virtualized-host" or "virtualized-host" in self.flags
        if virtualized and not include_virtualized:
            return False, VIRTUALIZED_HOST_WORDS
        return True, ""

    def core_counts(self, profile: str | None = None) -> tuple[int, ...]:
        """Distinct core counts with a figure (of ``profile``, or of any profile)."""
        return tuple(
            sorted({f.cores for f in self.figures if profile is None or f.profile == profile})
        )

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(sorted({f.profile for f in self.figures}))

    def label(self) -> str:
        """One line: id, platform, hardware, workload and software."""
        parts = [self.platform, self.hardware.label(), self.workload.label()]
        if self.software:
            parts.append(self.software)
        return f"{self.id} ({'; '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "origin": self.origin,
            "platform": self.platform,
            "hardware": self.hardware.to_dict(),
            "workload": self.workload.to_dict(),
            "software": self.software,
            "physical_host": self.physical_host,
            "hosts": list(self.hosts),
            "runs": list(self.runs),
            "flags": list(self.flags),
            "core_counts": {p: list(self.core_counts(p)) for p in self.profiles},
            "points": len(self.figures),
            "price": None if self.price is None else self.price.to_dict(),
            "citation": self.citation,
            "pooled_into": self.pooled_into or None,
            "disagrees": list(self.disagrees),
            "bounds": [b.to_dict() for b in self.bounds],
        }


GroupKey = tuple[str, str, tuple[str, int, str, str], str, str]


def group_key(b: Basis) -> GroupKey:
    """Bases that may share one table block: origin, CPU model, the workload's shared
    part (:meth:`Workload.shared`; a profile's own settings are compared figure by figure),
    software and physical host (a bare-metal host and the guests it runs). The CPU *model*, not the
    topology: a guest sees its own vCPU layout of the same host CPU."""
    return (b.origin, b.hardware.cpu_model, b.workload.shared(), b.software, b.physical_host)
