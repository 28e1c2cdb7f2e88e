"""``openssl speed``: a pure parser of its machine-readable (``-mr``) output (the argv
that measures a private-key operation rate pinned to CPUs is built on the host, by
``playbooks/files/ceiling.py``'s ``speed_argv``).

``-mr`` prints one ``+F<n>:<index>:<bits>:<sign/s>:<verify/s>`` line per algorithm at the
end (``+F2`` RSA, ``+F4`` ECDSA in OpenSSL 3.0); with ``-multi N`` each child's line is
printed as ``Got: +F2:... from <i>`` and the parent's own ``+F2`` line is their sum. The
rates divide by the processes' CPU time (OpenSSL's default without ``-elapsed``).
"""

from __future__ import annotations

from sizing.ceilings import ALGORITHMS, CryptoRate

__all__ = ["OPENSSL_ALG", "SpeedParseError", "parse_speed"]

# a profile's tls_key -> openssl speed's name of its signing operation
OPENSSL_ALG = {"rsa2048": "rsa2048", "ecdsa-p256": "ecdsap256"}
_LINE = {"rsa2048": "+F2:", "ecdsa-p256": "+F4:"}
_BITS = {"rsa2048": 2048, "ecdsa-p256": 256}


class SpeedParseError(ValueError):
    """``openssl speed`` gave no rate for the algorithm (not run, cut short, unknown)."""


def parse_speed(text: str, alg: str, *, cpus: str = "", threads: int = 1) -> CryptoRate:
    """The rates of ``alg`` (a profile's ``tls_key``) in ``openssl speed -mr`` output (the
    parent's sum with -multi)."""
    prefix = _LINE.get(alg)
    if prefix is None:
        raise SpeedParseError(f"no ceiling for the certificate {alg!r}")
    found = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith(prefix):
            continue  # "Got: +F2:... from 1" lines are the children's
        parts = line.split(":")
        if len(parts) < 5:
            raise SpeedParseError(f"openssl speed line is cut short: {line!r}")
        try:
            bits, sign, verify = int(parts[2]), float(parts[3]), float(parts[4])
        except ValueError as exc:
            raise SpeedParseError(f"openssl speed line is malformed: {line!r}") from exc
        if bits == _BITS[alg]:
            found = (sign, verify)
    if found is None:
        first = text.strip().splitlines()[:1] or ["no output"]
        raise SpeedParseError(f"openssl speed gave no {ALGORITHMS[alg]} rate ({first[0][:160]})")
    sign, verify = found
    if not sign > 0.0 or sign == float("inf"):
        raise SpeedParseError(f"openssl speed gave a {ALGORITHMS[alg]} rate of {sign}")
    return CryptoRate(alg, cpus, threads, sign, verify if verify > 0.0 else None)
