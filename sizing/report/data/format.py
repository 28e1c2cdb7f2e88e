"""The one format layer: labels, provenance marks and number formatting, shared by the
guide (:mod:`sizing.report.data`), the terminal tables (:mod:`sizing.report.render.text`)
and the templates. Pure, no imports beyond the standard library.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from sizing.model import VIRTUALIZED_HOST_WORDS, FigureKind

MISSING = "–"  # a figure that is not there
PLATFORM_LABELS = {
    "baremetal": "Bare metal",
    "virtualized-host": "Virtualized host",
    "hypervisor": "Hypervisor",
    "kvm": "KVM",
    "esxi": "ESXi",
    "kubernetes": "Kubernetes",
    "container": "Container",
}
# What the measured container leg is, said wherever it or the Kubernetes reference shows.
CONTAINER_NOTE = (
    "Container: NGINX measured in a Podman container on the same host, paired with that "
    "host's bare metal (sizing_platform: container). It isolates the container network "
    "path (a network namespace, a veth pair, a bridge and NAT); it does not measure an "
    "Ingress Controller, kube-proxy at scale or a CNI plugin other than a bridge, so it is "
    "never a Kubernetes figure."
)
PROFILE_LABELS = {"rps": "RPS", "tps": "SSL TPS"}
MARKS: dict[str, str] = {
    FigureKind.MEASURED: "m",
    FigureKind.REFERENCE: "r",
    FigureKind.INTERPOLATED: "i",
    FigureKind.SHAPE: "s",
    FigureKind.EXTRAPOLATED: "x",
    FigureKind.EMULATED: "e",
    FigureKind.TRANSLATED: "t",
    FigureKind.FLOOR: "f",
    FigureKind.ASSUMED: "a",
    FigureKind.SIMULATED: "d",
}
PROVENANCE_TEXT: dict[str, str] = {
    FigureKind.MEASURED: "measured with sizing on the inventory's hosts",
    FigureKind.REFERENCE: "published reference data",
    FigureKind.INTERPOLATED: "interpolated between two measured core counts of the same basis",
    FigureKind.SHAPE: "scaled with another basis' scaling shape (same workload), wider interval",
    FigureKind.EXTRAPOLATED: "extrapolated by the fitted scaling model",
    FigureKind.EMULATED: "measured in a software-emulated guest (not real hardware)",
    FigureKind.TRANSLATED: "translated from another CPU by the ratio of their crypto ceilings "
    "(estimate)",
    FigureKind.FLOOR: "at least what the largest measured core count carries (not measured "
    "beyond it)",
    FigureKind.ASSUMED: "another platform's figure times a stated share (an assumption, with its "
    "source)",
    FigureKind.SIMULATED: "made up for an example (examples/simulated.py), not measured",
}
FLAG_TEXT = {
    "client-bound": "the load generator saturated before the server",
    "cpu-quota": "a cgroup CPU limit throttled the server or the load generator",
    "connections": "fewer connections were established than asked",
    "errors": "socket errors or non-2xx/3xx responses",
    "reused-sessions": "TLS sessions were resumed in a handshake test",
    "no-tls-proof": "no proof that the TLS handshakes were full ones",
    "unstable": "CPU was stolen or throttled while throughput dropped",
    "noisy": "the interval of the median stayed wider than the target",
    "emulated": "software-emulated guest (QEMU TCG), not real hardware",
    "network-bound": "the network interface, not the CPU, set the figure",
    "virtualized-host": f"a {VIRTUALIZED_HOST_WORDS}",
    "generator-lag": "the load generator sent below the offered rate at some rates",
    "no-knee": "latency stayed flat over the whole sweep: the knee lies above it",
    "knee-below": "the lowest rate was already past the knee: the knee lies below the sweep",
    "slo-not-converged": "the search for the SLO capacity did not converge",
    "lower-bound": "a lower bound: the true capacity may be higher",
    "far-below-ceiling": "a handshake figure under half its crypto ceiling: something other "
    "than the private-key operation dominates",
    "ceiling-bound": "a prediction held down by a physical ceiling (crypto or NIC)",
    "translated": "carried from another CPU by the ratio of their crypto ceilings (an estimate)",
    "drift": "the repetitions rose or fell in order, more than chance explains across the run's "
    "points (at a 5% false-discovery rate): the host may have changed during the test",
    "erratic": "a repetition far from the others (below half or above twice the median)",
    # examples/simulated.py flags every point it makes up: no output shows one as measured
    "simulated": "made up for an example (examples/simulated.py), not measured",
}
STATUS_TEXT = {
    "measured": "measured",
    "invalid": "invalid (not used)",
    "skipped": "skipped",
    "failed": "failed",
}


def number(v: float | None) -> str:
    """A throughput for print: thousands separated, no decimals (``48,000``)."""
    if v is None:
        return MISSING
    return f"{v:,.0f}"


def platform_words(platform: str) -> str:
    """A platform inside a sentence: ``bare metal``, ``a container``'s kind lower-cased,
    a product name as it is spelt (``ESXi``, ``KVM``, ``Kubernetes``)."""
    label = PLATFORM_LABELS.get(platform, platform)
    return label if platform in ("esxi", "kvm", "kubernetes") else label.lower()


def counted_total(per_server: float, servers: int) -> float:
    """The capacity of ``servers`` servers as a page shows it: the number of servers times
    one server's figure as printed (whole units), so that multiplying what the page says
    gives the total."""
    return servers * float(round(per_server))


def currency_sign(currency: str) -> str:
    """What goes before an amount: ``$`` for USD, else the code and a space (``EUR ``)."""
    return "$" if currency == "USD" else f"{currency} "


def money(v: float | None, currency: str = "USD", *, cents: bool | None = None) -> str:
    """A price: whole units from 100 on, cents below (``$2,200``, ``$15.63``); ``cents``
    True or False forces the one or the other. The one place money is written."""
    if v is None:
        return MISSING
    if cents is None:
        cents = abs(v) < 100
    return f"{currency_sign(currency)}{v:,.2f}" if cents else f"{currency_sign(currency)}{v:,.0f}"


def amount(v: float, currency: str = "USD") -> str:
    """A total as the buyer checks it: whole units when the amount is whole, cents
    otherwise (``$3,000``, ``$3,230.72``): the one rule for every fleet's cost in the
    terminal, the JSON's text and the guide."""
    return money(v, currency, cents=abs(v - round(v)) >= 0.005)


def percent(v: float | None, digits: int = 1) -> str:
    """A percentage (``12.5%``)."""
    if v is None:
        return MISSING
    return f"{v:.{digits}f}%"


def series_label(platform: str, ht: str, profile: str, *, with_ht: bool = True) -> str:
    """``Bare metal RPS (HT off)``."""
    text = f"{PLATFORM_LABELS.get(platform, platform)} {PROFILE_LABELS.get(profile, profile)}"
    return f"{text} (HT {ht})" if with_ht else text


def cell_source(source: str, emulated: bool, flags: Sequence[str]) -> str:
    """The provenance shown for a figure: emulated beats measured, and a figure flagged
    ``simulated`` (made up by examples/simulated.py) is never shown as measured."""
    if source != FigureKind.MEASURED:
        return source
    if "simulated" in flags:
        return FigureKind.SIMULATED
    return FigureKind.EMULATED if emulated else source


def provenance_text(*, simulated: bool) -> dict[str, str]:
    """The provenance legend: every kind, the made-up one only where figures are made up."""
    return {k: v for k, v in PROVENANCE_TEXT.items() if simulated or k != FigureKind.SIMULATED}


def inventory_name(path: str) -> str:
    """An inventory's name for the title page: the file name without ``.yml``."""
    name = PurePath(path).name
    for suffix in (".yml", ".yaml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name or path


def latency_ms(v: float | None) -> str:
    """A latency for print: three significant figures or so (``0.84``, ``12.5``, ``1,204``)."""
    if v is None:
        return MISSING
    if abs(v) < 10:
        return f"{v:.2f}"
    if abs(v) < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def mark(source: str) -> str:
    """The one-letter provenance mark of a figure (``m``, ``r``, ``x``, ``e``)."""
    return MARKS.get(source, "")
