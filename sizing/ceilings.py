"""Physical ceilings: what the hardware allows a figure at most, and how close it came.

**Crypto.** A full TLS handshake costs the server one private-key operation of its
certificate (RSA-2048 or ECDSA P-256 signing), besides the key exchange, the TCP
connection and the request. ``openssl speed`` of that operation, pinned to one of the
point's cores, single-process (HT on: one process per sibling of one core, together), is
the most full handshakes that core could do if nothing else cost anything: a handshake
figure divided by cores × that rate is the share of the ceiling it reached. A run measures
it once per server host and OpenSSL build (``playbooks/ceiling.yml``) and stores it with
the host's facts (``environment[host]["ceilings"]``). ``openssl speed`` divides by the
process's CPU time, so other load on the machine lowers it less than it lowers a
wall-clock rate.

**Network.** A link's line rate (sysfs, or the inventory's ``sizing_nic_gbps``) divided by
the bytes one request costs on the wire in its busier direction (the server interface's
measured bytes/s over the figure) is the request rate the link allows. Loopback has no
line rate: the ceiling is then unknown and said so, never guessed.

Reference figures (the article) state no CPU model: their ceilings are "not stated".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.records import CeilingsRecord, CryptoRecord, HostRecord, PointMeta

__all__ = [
    "ALGORITHMS",
    "Bound",
    "FAR_BELOW",
    "Ceiling",
    "CryptoRate",
    "HostCeilings",
    "StatedCeiling",
    "crypto_bound",
    "crypto_ceiling",
    "far_below",
    "nic_bound",
    "nic_ceiling",
    "openssl_build",
    "point_ceilings",
]

# tls_key (a profile's certificate) -> the operation whose rate bounds a full handshake
ALGORITHMS = {"rsa2048": "RSA-2048 signing", "ecdsa-p256": "ECDSA P-256 signing"}
# A saturated handshake figure below this share of its crypto ceiling is flagged: something
# other than the private-key operation dominates the server's CPU.
FAR_BELOW = 0.5
# A figure above its ceiling cannot be: the ceiling was measured low or the work was not it
ABOVE = (
    " (above the ceiling: it was measured low, e.g. under other load, or the handshakes were "
    "not all full ones)"
)


@dataclass(frozen=True)
class CryptoRate:
    """One ``openssl speed`` measurement: ``threads`` processes on ``cpus`` together."""

    alg: str
    cpus: str
    threads: int
    sign_per_s: float
    verify_per_s: float | None = None

    @property
    def what(self) -> str:
        return ALGORITHMS.get(self.alg, self.alg)

    def to_dict(self) -> dict[str, Any]:
        return {
            "alg": self.alg,
            "cpus": self.cpus,
            "threads": self.threads,
            "sign_per_s": self.sign_per_s,
            "verify_per_s": self.verify_per_s,
        }


@dataclass(frozen=True)
class HostCeilings:
    """What a run measured of one host's ceilings (``environment[host]["ceilings"]``)."""

    openssl: str = ""  # `openssl version` of the binary measured
    crypto: tuple[CryptoRate, ...] = ()
    missing: str = ""  # why nothing could be measured (no openssl binary, ...)
    took_s: float | None = None

    def rate(self, alg: str, threads: int) -> CryptoRate | None:
        return next((r for r in self.crypto if r.alg == alg and r.threads == threads), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "openssl": self.openssl,
            "crypto": [r.to_dict() for r in self.crypto],
            "missing": self.missing,
            "took_s": self.took_s,
        }

    def record(self) -> CeilingsRecord:
        """What the run's record of the host keeps (:meth:`of` reads it back)."""
        return CeilingsRecord(
            openssl=self.openssl,
            crypto=tuple(
                CryptoRecord(r.alg, r.cpus, r.threads, r.sign_per_s, r.verify_per_s)
                for r in self.crypto
            ),
            missing=self.missing,
            took_s=self.took_s,
        )

    @classmethod
    def of(cls, host: HostRecord | None) -> HostCeilings | None:
        """What the run's record of a host kept of its ceilings (None: not measured)."""
        if host is None or host.ceilings is None:
            return None
        stored = host.ceilings
        crypto = tuple(
            CryptoRate(r.alg, r.cpus, r.threads, r.sign_per_s, r.verify_per_s)
            for r in stored.crypto
            # one unreadable measurement leaves the others
            if r.alg is not None
            and r.cpus is not None
            and r.threads is not None
            and r.sign_per_s is not None
        )
        return cls(stored.openssl or "", crypto, stored.missing or "", stored.took_s)


@dataclass(frozen=True)
class Ceiling:
    """A figure's ceiling at its core count: ``limit`` in the figure's unit (None: not
    known, ``note`` says why), ``what`` names it ("RSA-2048 signing on cpu 0")."""

    kind: str  # crypto | nic
    limit: float | None
    what: str
    note: str = ""
    per_core: float | None = None  # crypto: the rate of one core (one HT pair when HT on)

    def share(self, value: float | None) -> float | None:
        if value is None or not self.limit or self.limit <= 0.0:
            return None
        return value / self.limit

    def words(self, value: float | None, unit: str = "") -> str:
        """ "1,885 hs/s = 46% of RSA-2048 signing on cpu 0 (4,133/s per core)", or why
        the ceiling is unknown."""
        share = self.share(value)
        if share is None:
            return self.note or f"{self.what}: not known"
        shown = f"{value:,.0f}{' ' + _short(unit) if unit else ''}"
        return f"{shown} = {share * 100:.0f}% of {self.what}" + (ABOVE if share > 1.05 else "")

    def to_dict(self, value: float | None = None) -> dict[str, Any]:
        share = self.share(value)
        return {
            "kind": self.kind,
            "limit": None if self.limit is None else round(self.limit, 3),
            "what": self.what,
            "note": self.note,
            "share": None if share is None else round(share, 4),
            "per_core": None if self.per_core is None else round(self.per_core, 3),
        }


def openssl_build(version: str) -> str:
    """``OpenSSL 3.0.19`` of ``openssl version``'s ``OpenSSL 3.0.19 27 Jan 2026 (Library:
    ...)``."""
    return " ".join(version.split()[:2])


def _short(unit: str) -> str:
    return {"requests/s": "req/s", "handshakes/s": "hs/s"}.get(unit, unit)


def crypto_ceiling(
    ceilings: HostCeilings | None, tls_key: str, cores: int, ht: str
) -> Ceiling | None:
    """The handshake ceiling of ``cores`` physical cores: cores × the per-core signing rate
    (HT on: the rate of one core's siblings together). None for a profile with no
    certificate; a ceiling with ``limit=None`` and the reason when it was not measured."""
    if not tls_key:
        return None
    what = ALGORITHMS.get(tls_key, tls_key)
    if ceilings is None:
        return Ceiling(
            "crypto",
            None,
            what,
            f"{what} ceiling not measured for this server (a virtual machine's is not "
            "measured, nor was any before sizing measured ceilings)",
        )
    if ceilings.missing:
        return Ceiling("crypto", None, what, f"{what} ceiling not measured: {ceilings.missing}")
    rate = ceilings.rate(tls_key, 2 if ht == "on" else 1)
    if rate is None:
        mode = "one core's HT siblings together" if ht == "on" else "one core"
        return Ceiling("crypto", None, what, f"{what} ceiling not measured on {mode}")
    label = "cpus" if "," in rate.cpus or "-" in rate.cpus else "cpu"
    build = f", {openssl_build(ceilings.openssl)}" if ceilings.openssl else ""
    per = "per core" if ht != "on" else "per core, both siblings"
    return Ceiling(
        "crypto",
        cores * rate.sign_per_s,
        f"{cores} × {what} on {label} {rate.cpus} ({rate.sign_per_s:,.0f}/s {per}{build})"
        if cores != 1
        else f"{what} on {label} {rate.cpus} ({rate.sign_per_s:,.0f}/s{build})",
        per_core=rate.sign_per_s,
    )


def nic_ceiling(meta: PointMeta, value: float | None) -> Ceiling | None:
    """The request rate the server's busiest interface allows this workload: its line rate
    over the bytes one request cost in the busier direction. None when the point stored no
    interface counters."""
    ev = meta.evidence
    iface = ev.server_net_interface
    if not iface or value is None or value <= 0.0:
        return None
    tx = ev.server_net_tx_bytes_per_s or 0.0
    rx = ev.server_net_rx_bytes_per_s or 0.0
    link = ev.server_link_bytes_per_s
    per_request = max(tx, rx) / value
    if meta.env.platform == "container":  # its interface is one end of a veth pair
        why = f"{iface} is the container's end of a veth pair (its speed is no line rate)"
        return Ceiling("nic", None, f"the {iface} link", f"no NIC ceiling: {why}")
    if not link:
        why = "loopback has no line rate" if iface == "lo" else f"{iface} reports no link speed"
        return Ceiling("nic", None, f"the {iface} link", f"no NIC ceiling: {why}")
    if per_request <= 0.0:
        return Ceiling("nic", None, f"the {iface} link", "no NIC ceiling: no bytes counted")
    gbps = float(link) * 8 / 1e9
    return Ceiling(
        "nic",
        float(link) / per_request,
        f"{gbps:g} Gb/s on {iface} ({per_request:,.0f} B per request on the wire)",
    )


def point_ceilings(
    *,
    tls_key: str,
    full_handshakes: bool,
    cores: int,
    ht: str,
    value: float | None,
    meta: PointMeta,
    host: HostRecord | None,
) -> list[Ceiling]:
    """Every ceiling of one point: the crypto one for a handshake figure, the NIC one for
    any figure with interface counters."""
    out: list[Ceiling] = []
    if full_handshakes:
        c = crypto_ceiling(HostCeilings.of(host), tls_key, cores, ht)
        if c is not None:
            out.append(c)
    n = nic_ceiling(meta, value)
    if n is not None:
        out.append(n)
    return out


def binding(ceilings: Sequence[Ceiling], value: float | None) -> Ceiling | None:
    """The known ceiling closest to the figure (the highest share)."""
    known = [(c.share(value), c) for c in ceilings if c.share(value) is not None]
    return max(known, key=lambda t: t[0] or 0.0)[1] if known else None


def far_below(
    ceiling: Ceiling | None, value: float | None, split: Mapping[str, float] | None = None
) -> str | None:
    """The ``far-below-ceiling`` warning of a saturated handshake figure under
    :data:`FAR_BELOW` of its crypto ceiling, saying what the server's CPU did instead
    (user, system, softirq shares); None when the figure is near its ceiling or the ceiling
    is unknown. A warning: the figure stays valid (it is what this server did)."""
    if ceiling is None or ceiling.kind != "crypto":
        return None
    share = ceiling.share(value)
    if share is None or share >= FAR_BELOW:
        return None
    did = ""
    if split:
        parts = [f"{k} {v:.0f}%" for k, v in split.items()]
        did = f" (the pinned CPUs: {', '.join(parts)})"
    return (
        f"far-below-ceiling: {share * 100:.0f}% of {ceiling.what}, under "
        f"{FAR_BELOW * 100:.0f}% on a saturated server: something other than the "
        f"private-key operation dominates{did}: the key exchange, the TCP connections, the "
        "proxied request or the kernel"
    )


@dataclass(frozen=True)
class Bound:
    """A ceiling of one series (basis × profile × HT) that bounds its predictions: a
    crypto ceiling per core (× cores) or a NIC ceiling (the same at every core count)."""

    profile: str
    ht: str
    kind: str  # crypto | nic
    what: str  # "RSA-2048 signing, 4,133/s per core (OpenSSL 3.0.19)"
    per_core: float | None = None
    limit: float | None = None
    tls_key: str = ""

    def at(self, cores: int) -> float | None:
        if self.per_core is not None:
            return self.per_core * cores
        return self.limit

    def words(self, cores: int) -> str:
        if self.per_core is not None:
            return f"{cores} × {self.what}"
        return self.what

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "ht": self.ht,
            "kind": self.kind,
            "what": self.what,
            "per_core": self.per_core,
            "limit": self.limit,
            "tls_key": self.tls_key,
        }


def crypto_bound(
    profile: str, ht: str, tls_key: str, ceilings: HostCeilings | None
) -> Bound | None:
    """A handshake series' crypto bound from its host's measured ceiling (None when not
    measured)."""
    if ceilings is None or not tls_key:
        return None
    rate = ceilings.rate(tls_key, 2 if ht == "on" else 1)
    if rate is None:
        return None
    build = f", {openssl_build(ceilings.openssl)}" if ceilings.openssl else ""
    per = "per core" if ht != "on" else "per core, both HT siblings"
    what = f"{ALGORITHMS.get(tls_key, tls_key)} ({rate.sign_per_s:,.0f}/s {per}{build})"
    return Bound(profile, ht, "crypto", what, per_core=rate.sign_per_s, tls_key=tls_key)


def nic_bound(
    profile: str, ht: str, metas: Sequence[tuple[PointMeta, float | None]]
) -> Bound | None:
    """A series' NIC bound: the median over its points (record, figure) of the request
    rate their link allows (None when no point has a link speed)."""
    limits: list[tuple[float, str]] = []
    for m, value in metas:
        c = nic_ceiling(m, value)
        if c is not None and c.limit is not None:
            limits.append((c.limit, c.what))
    if not limits:
        return None
    limits.sort()
    limit, what = limits[len(limits) // 2]
    return Bound(profile, ht, "nic", f"{what}: {limit:,.0f}/s", limit=limit)


@dataclass(frozen=True)
class StatedCeiling:
    """A CPU's crypto ceiling stated in the catalog (``ceilings:``), with its source: a
    published figure, or ``sizing probe-ceiling`` on a candidate host."""

    cpu_model: str
    tls_key: str
    per_core: float
    per_core_ht: float | None = None
    source: str = ""

    def rate(self, ht: str) -> float | None:
        return self.per_core_ht if ht == "on" else self.per_core

    def matches(self, name: str) -> bool:
        a, b = self.cpu_model.lower(), name.lower()
        return bool(a and b) and (a in b or b in a)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StatedCeiling:
        ht = d.get("sign_per_core_ht")
        return cls(
            cpu_model=str(d["cpu_model"]),
            tls_key=str(d.get("tls_key", "rsa2048")),
            per_core=float(d["sign_per_core"]),
            per_core_ht=None if ht is None else float(ht),
            source=str(d.get("source", "")),
        )
