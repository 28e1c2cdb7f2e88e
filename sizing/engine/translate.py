"""Carrying handshake figures to another CPU by the ratio of their crypto ceilings.

A full-handshake figure measured on CPU A reached a share s(N) = X(N) / (N · c_A) of A's
crypto ceiling c_A (private-key signatures per second per core, ``sizing.ceilings``). On
CPU B with ceiling c_B the same server does X_B(N) = s(N) · N · c_B = X(N) · c_B / c_A if
the share stays the same: the private-key operation scales with the CPU, the rest of a
handshake (key exchange, TCP, the proxied request) is assumed to scale alike. That is an
estimate, not a measurement: a translated figure is its own kind (``translated``), never
mixed with measured ones, used by ``recommend`` only with ``--allow-translation``, and its
interval is the measured one times the ratio, widened by 10 points (other hardware, as a
borrowed shape) plus half the range of the shares across the basis' core counts (how far
"the share stays the same" already failed to hold on A).

Plain RPS is not translated unless asked (``--allow-cpu-translation``): a keepalive
request is not bound by one instruction mix. Asked, it follows a stated, one-sided rule:
RPS × min(1, the same per-core ceiling ratio), its interval widened by the same 10 points:
a slower core is assumed slower for plain requests by no less than it is for signatures,
and a faster one is never credited (the measured CPU's figures are the most it gets).
"""

from __future__ import annotations

from dataclasses import replace

from sizing.ceilings import ALGORITHMS, Bound, StatedCeiling
from sizing.engine.basis import Basis, Hardware
from sizing.engine.costs import ServerOffer
from sizing.model import Figure, FigureKind, SizingMetric

__all__ = ["TRANSLATION_FLOOR", "other_cpu", "translate"]

TRANSLATION_FLOOR = 0.10


def translate(basis: Basis, target: StatedCeiling, *, rps: bool = False) -> Basis | str:
    """``basis``'s handshake figures carried to ``target``'s CPU, as a basis of its own
    (``<basis id>~<cpu slug>``), or why it cannot be done; ``rps``: its RPS figures too,
    by the stated rule of the module docstring."""
    tps = [f for f in basis.figures if f.profile == SizingMetric.TPS]
    if not tps:
        return f"{basis.id} has no TLS handshake (TPS) figure to translate"
    if basis.workload.tls_key != target.tls_key:
        return (
            f"{basis.id} was measured with a {basis.workload.tls_key or 'no'} certificate; the "
            f"ceiling stated for {target.cpu_model} is of {target.tls_key}"
        )
    figures: list[Figure] = []
    bounds: list[Bound] = []
    why: list[str] = []
    for ht in sorted({f.ht for f in tps}):
        own = next((b for b in basis.bounds_of("tps", ht) if b.kind == "crypto"), None)
        to = target.rate(ht)
        if own is None or not own.per_core:
            why.append(f"HT {ht}: no crypto ceiling was measured on {basis.id}")
            continue
        if to is None:
            why.append(f"HT {ht}: the catalog states no HT-on ceiling for {target.cpu_model}")
            continue
        series = sorted((f for f in tps if f.ht == ht), key=lambda f: f.cores)
        ratio = to / own.per_core
        shares = [f.value / (f.cores * own.per_core) for f in series if not f.lower_bound]
        spread = (max(shares) - min(shares)) / 2 if len(shares) > 1 else 0.0
        widen = TRANSLATION_FLOOR + spread
        what = ALGORITHMS.get(target.tls_key, target.tls_key)
        origin = (
            f"translated from {basis.id} ({basis.hardware.cpu_model or 'CPU not named'}) by the "
            f"{what} ceiling ratio {to:,.0f}/{own.per_core:,.0f} = {ratio:.2f} per core "
            f"({target.source})"
        )
        words = (
            f"translated: the measured interval × {ratio:.2f}, widened by {widen * 100:.0f} "
            f"points ({TRANSLATION_FLOOR * 100:.0f} for other hardware, {spread * 100:.0f} for "
            "the share of the ceiling varying across core counts)"
        )
        for f in series:
            lo = f.ci_low if f.ci_low is not None else f.value
            hi = f.ci_high if f.ci_high is not None else f.value
            figures.append(
                replace(
                    f,
                    value=f.value * ratio,
                    ci_low=max(0.0, lo * ratio * (1.0 - widen)),
                    ci_high=hi * ratio * (1.0 + widen),
                    source=FigureKind.TRANSLATED,
                    origin=origin,
                    flags=(*f.flags, "translated"),
                    reps=tuple(v * ratio for v in f.reps),
                    coverage=None,
                    interval=words,
                )
            )
        bounds.append(replace(own, per_core=to, what=f"{what} ({to:,.0f}/s per core, stated)"))
        if rps:
            figures += _rps(basis, ht, min(1.0, ratio), origin)
    if not figures:
        return f"nothing of {basis.id} can be translated to {target.cpu_model}: " + "; ".join(why)
    slug = "".join(c if c.isalnum() else "-" for c in target.cpu_model.lower()).strip("-")
    new_id = f"{basis.id}~{slug}"
    return replace(
        basis,
        id=new_id,
        origin=FigureKind.MEASURED,
        hardware=Hardware(cpu_model=target.cpu_model),
        figures=tuple(replace(f, basis=new_id) for f in figures),
        flags=tuple(dict.fromkeys((*basis.flags, "translated"))),
        price=None,
        bounds=tuple(bounds),
        pooled_into="",
        citation=f"translated from {basis.id} by the stated ceiling of {target.cpu_model} "
        f"({target.source})",
    )


def _rps(basis: Basis, ht: str, ratio: float, origin: str) -> list[Figure]:
    """The RPS figures of one HT mode carried by the stated rule (module docstring)."""
    words = (
        f"translated by the stated rule RPS × min(1, ceiling ratio) = × {ratio:.2f}, the "
        f"measured interval widened by {TRANSLATION_FLOOR * 100:.0f} points (other hardware)"
    )
    out = []
    for f in basis.figures:
        if f.profile != SizingMetric.RPS or f.ht != ht:
            continue
        lo = f.ci_low if f.ci_low is not None else f.value
        hi = f.ci_high if f.ci_high is not None else f.value
        out.append(
            replace(
                f,
                value=f.value * ratio,
                ci_low=max(0.0, lo * ratio * (1.0 - TRANSLATION_FLOOR)),
                ci_high=hi * ratio * (1.0 + TRANSLATION_FLOOR),
                source=FigureKind.TRANSLATED,
                origin=f"{origin}; RPS by the stated rule × min(1, ratio) = × {ratio:.2f}",
                flags=(*f.flags, "translated"),
                reps=tuple(v * ratio for v in f.reps),
                coverage=None,
                interval=words,
            )
        )
    return out


def other_cpu(offer: ServerOffer | None, basis: Basis | None) -> str:
    """Why a catalog server is not sized on a measured basis of another CPU (empty: same
    CPU, or one of the two does not name it): never silently on the other CPU's figures."""
    if offer is None or basis is None or not offer.cpu_model or basis.origin != "measured":
        return ""
    have = basis.hardware.cpu_model
    if not have or offer.cpu_model.lower() in have.lower():
        return ""
    name = offer.name or f"the {offer.cores}-core server"
    # the run that would size it measures a host of ITS CPU, never the lab's other one
    return (
        f"{name} has the CPU {offer.cpu_model}, {basis.id} was measured on {have}: not "
        f"sized on another CPU's figures (add an {offer.cpu_model} host to the inventory "
        "and measure it, or translate with --cpu MODEL --allow-translation, and "
        "--allow-cpu-translation for RPS)"
    )
