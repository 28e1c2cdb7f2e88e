"""A customer's workload: the role NGINX plays for them and the traffic mix their logs show.

One vocabulary for every stage that meets it (issue 57): :mod:`sizing.demand` reads a mix
from the customer's logs and writes it in the demand file; the plan and the load generators
replay it in the lab; the measuring stage reads the lab nginx's own log back through the
same reader and compares the two mixes here (:func:`compare`); the engine sizes a demand on
figures of its role, and a replayed point belongs to the basis of :func:`workload_key`.

Pure and stdlib-only: it sits beside :mod:`sizing.model` at the bottom of the layers.

The mix, as the logs give it:

- ``sizes``: the response-size histogram, ``(upper edge in bytes or None for the open
  last bucket, share of responses)``; ``size_field`` says whether the log counted the body
  (``$body_bytes_sent``) or the whole response with headers (``$bytes_sent``).
- ``per_connection``: the distribution of requests per connection, ``(lowest, highest or
  None, share of connections)``, from the histogram of ``$connection_requests`` (the
  connections that reached k requests each log exactly one line with ``k``).
- ``tls_share``: the share of connections over TLS (``$ssl_session_reused`` is ``.`` or
  ``r`` on a TLS connection, empty on a plain one).
- ``resumption_share``: the share of TLS connections whose session was resumed.
- ``status``: the share of responses per status class.

A figure the log does not give is ``None`` and named in ``missing``; the user may state it
(``--assume``), and then it carries its source in ``assumed``. Nothing is invented.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Role(StrEnum):
    """What NGINX does with a request: the profiles' ``role:`` values."""

    STATIC = "web"  # serves files itself
    LOAD_BALANCE = "load-balance"  # round robin over an upstream pool (the sizing article)
    PROXY = "proxy"  # reverse proxy to an upstream (keepalive)
    API_JWT = "api-jwt"  # API gateway: validates an HS256 JWT per request, then proxies


ROLE_WORDS = {
    Role.STATIC: "static files",
    Role.LOAD_BALANCE: "load balancing",
    Role.PROXY: "reverse proxy",
    Role.API_JWT: "API gateway validating a JWT per request",
}
# What a user may type for a role (``--role``), and what each means.
ROLE_ALIASES = {
    "static": Role.STATIC,
    "web": Role.STATIC,
    "lb": Role.LOAD_BALANCE,
    "load-balance": Role.LOAD_BALANCE,
    "load-balancing": Role.LOAD_BALANCE,
    "proxy": Role.PROXY,
    "reverse-proxy": Role.PROXY,
    "api-jwt": Role.API_JWT,
    "jwt": Role.API_JWT,
    "api-gateway": Role.API_JWT,
}
# The CPU a request costs, in the direction of the error when one role is sized on another's
# figures: a higher rank costs more CPU per request on the same hardware (a JWT check and a
# proxied hop cost more than a file served from the page cache).
ROLE_COST_RANK = {Role.STATIC: 0, Role.LOAD_BALANCE: 1, Role.PROXY: 1, Role.API_JWT: 2}


def parse_role(text: str) -> Role:
    """A role as typed (``static``, ``lb``, ``api-jwt`` ...); ValueError naming the choices."""
    role = ROLE_ALIASES.get(text.strip().lower())
    if role is None:
        choices = ", ".join(sorted(ROLE_ALIASES))
        raise ValueError(f"{text!r} is not a role (expected one of: {choices})")
    return role


def other_workload_error(sized: Role, needed: Role) -> str:
    """The direction of the error, in words, when ``needed`` is sized on ``sized``'s figures."""
    a, b = ROLE_COST_RANK[needed], ROLE_COST_RANK[sized]
    if a > b:
        return (
            f"{ROLE_WORDS[needed]} costs more CPU per request than {ROLE_WORDS[sized]}:"
            " this fleet is too small"
        )
    if a < b:
        return (
            f"{ROLE_WORDS[needed]} costs less CPU per request than {ROLE_WORDS[sized]}:"
            " this fleet is larger than needed"
        )
    return (
        f"{ROLE_WORDS[needed]} and {ROLE_WORDS[sized]} cost about the same CPU per request,"
        " but were not measured the same: the error has no known direction"
    )


Bin = tuple[int, int | None, float]  # lowest, highest (None: open), share


@dataclass(frozen=True)
class Assumed:
    """A figure the logs do not give, stated by the user with its source."""

    figure: str  # one of ASSUMABLE
    value: float
    source: str


ASSUMABLE = ("tls_share", "resumption_share", "requests_per_connection")


@dataclass(frozen=True)
class WorkloadMix:
    """The customer's workload: role and traffic mix (see the module's docstring)."""

    role: Role | None = None
    role_source: str = ""  # "stated with --role", "the demand file"
    sizes: tuple[Bin, ...] = ()
    size_field: str = ""  # "bytes_sent" (with headers) or "body_bytes_sent" (body only)
    per_connection: tuple[Bin, ...] = ()
    requests_per_connection: float | None = None  # the mean
    tls_share: float | None = None
    resumption_share: float | None = None
    status: tuple[tuple[str, float], ...] = ()  # ("2xx", 0.93), ...
    assumed: tuple[Assumed, ...] = ()
    missing: tuple[str, ...] = field(default=())

    def key(self) -> str:
        """The basis key of this workload (:func:`workload_key` of its canonical form):
        what defines the replay (role, sizes, connections, TLS, resumption, status, the
        figures assumed) and nothing else, so that the demand file's reader and the
        replay's compute the same key however the file spells its numbers."""
        return workload_key(canonical(self))

    def figure(self, name: str) -> float | None:
        """A scalar figure of the mix: the logged one, else the assumed one."""
        value = getattr(self, name)
        if value is not None:
            return float(value)
        for a in self.assumed:
            if a.figure == name:
                return a.value
        return None


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def canonical(w: WorkloadMix) -> dict[str, object]:
    """The mix as the key hashes it: numbers as floats rounded to 6 digits, the assumed
    figures in place of the missing ones, no wording (role_source, missing)."""
    return {
        "role": None if w.role is None else w.role.value,
        "size_field": w.size_field,
        "sizes": [[hi, _r(share)] for _, hi, share in w.sizes],
        "per_connection": [[lo, hi, _r(share)] for lo, hi, share in w.per_connection],
        "requests_per_connection": _r(w.figure("requests_per_connection")),
        "tls_share": _r(w.figure("tls_share")),
        "resumption_share": _r(w.figure("resumption_share")),
        "status": sorted([c, _r(v)] for c, v in w.status),
    }


CUSTOMER_PREFIX = "customer-"  # a replayed customer workload's profile and basis key


def workload_key(mix_document: Mapping[str, object]) -> str:
    """The basis key of a customer workload: ``customer-`` and 12 hex digits of the SHA-256
    of its canonical JSON (the demand file's workload section): the same mix, the same
    basis, whatever the file's other content."""
    text = json.dumps(mix_document, sort_keys=True, separators=(",", ":"), default=str)
    return CUSTOMER_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]


# -- the closed loop: the replayed mix against the customer's --------------------------

# Tolerances of the comparison (docs/workload.md states them): a replayed point outside
# any of them is flagged ``mix-mismatch`` and never sized.
TOLERANCE = {
    "requests_per_connection": 0.15,  # relative difference of the means
    "per_connection": 0.20,  # total variation distance of the distributions
    "tls_share": 0.05,  # absolute difference of shares
    "resumption_share": 0.10,  # absolute
    "sizes": 0.10,  # total variation distance
    "status": 0.05,  # total variation distance
}


REPLAYED_CLASSES = ("2xx", "3xx")  # the status classes a replay serves


def tvd(a: Sequence[tuple[object, float]], b: Sequence[tuple[object, float]]) -> float:
    """Total variation distance of two distributions over the same keys (each normalised;
    a key missing on one side counts 0 there)."""
    pa, pb = _normalised(a), _normalised(b)
    keys = set(pa) | set(pb)
    return 0.5 * sum(abs(pa.get(k, 0.0) - pb.get(k, 0.0)) for k in keys)


def _normalised(d: Sequence[tuple[object, float]]) -> dict[object, float]:
    total = sum(v for _, v in d)
    if not total or not math.isfinite(total):
        return {}
    return {k: v / total for k, v in d}


@dataclass(frozen=True)
class MixRow:
    """One figure of the comparison: the customer's, the replay's, the distance and the
    tolerance it is held to."""

    figure: str
    yours: str
    replayed: str
    distance: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.distance <= self.tolerance


@dataclass(frozen=True)
class MixComparison:
    """The replayed mix against the customer's: one row per figure both sides have."""

    rows: tuple[MixRow, ...]
    not_compared: tuple[str, ...] = ()  # figures one side lacks

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    @property
    def mismatched(self) -> tuple[MixRow, ...]:
        return tuple(r for r in self.rows if not r.ok)


def _bins_key(bins: Sequence[Bin]) -> list[tuple[object, float]]:
    return [((lo, hi), share) for lo, hi, share in bins]


def compare(yours: WorkloadMix, replayed: WorkloadMix) -> MixComparison:
    """Each figure both mixes have, its distance and whether it is within tolerance."""
    rows: list[MixRow] = []
    skipped: list[str] = []
    ya, ra = yours.figure("requests_per_connection"), replayed.requests_per_connection
    if ya is not None and ra is not None and ya > 0:
        rows.append(
            MixRow(
                "requests per connection",
                f"{ya:.1f}",
                f"{ra:.1f}",
                abs(ra - ya) / ya,
                TOLERANCE["requests_per_connection"],
            )
        )
    else:
        skipped.append("requests per connection")
    for name, label in (("per_connection", "requests per connection (shape)"),):
        a, b = getattr(yours, name), getattr(replayed, name)
        if a and b:
            rows.append(MixRow(label, "", "", tvd(_bins_key(a), _bins_key(b)), TOLERANCE[name]))
        else:
            skipped.append(label)
    for name, label in (("tls_share", "TLS share"), ("resumption_share", "resumption")):
        a_val, b_val = yours.figure(name), replayed.figure(name)
        if a_val is not None and b_val is not None:
            rows.append(
                MixRow(label, f"{a_val:.0%}", f"{b_val:.0%}", abs(a_val - b_val), TOLERANCE[name])
            )
        else:
            skipped.append(label)
    if yours.sizes and replayed.sizes:
        rows.append(
            MixRow(
                "response sizes (TVD)",
                "",
                "",
                tvd(_bins_key(yours.sizes), _bins_key(replayed.sizes)),
                TOLERANCE["sizes"],
            )
        )
    else:
        skipped.append("response sizes")
    # the replay serves answers (2xx) and redirects (3xx); errors are not replayed (the
    # error guards would refuse the point): the mix compared is that of 2xx and 3xx alone
    ours = [(c, v) for c, v in yours.status if c in REPLAYED_CLASSES]
    theirs = [(c, v) for c, v in replayed.status if c in REPLAYED_CLASSES]
    if ours and theirs:
        rows.append(
            MixRow("status mix, 2xx/3xx (TVD)", "", "", tvd(ours, theirs), TOLERANCE["status"])
        )
    else:
        skipped.append("status mix")
    return MixComparison(tuple(rows), tuple(skipped))
