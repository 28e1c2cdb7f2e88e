"""The options and fixed choices the commands share: StrEnums, :func:`choice` (one clear
line for a bad value, with a "did you mean"), :func:`metavar`, the number parsers
(:func:`rate`, :func:`percent`: ``200,000``, ``200k``, ``20%``) and the ``Annotated``
options."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum, StrEnum
from typing import Annotated, TypeVar

import typer

from sizing.cli.app import JsonOpt as JsonOpt  # defined there; imported from here too
from sizing.errors import UsageError
from sizing.model import VIRTUALIZED_HOST_WORDS, BasisPlatform, HtChoice


class RedundancyChoice(StrEnum):
    """``--redundancy``."""

    NONE = "none"
    N_PLUS_1 = "n+1"
    TWO_N = "2n"


E = TypeVar("E", bound=Enum)


def basis_ids(text: str | None) -> tuple[str, ...]:
    """``--basis a,b``: the ids asked for (empty: the default choice)."""
    if not text:
        return ()
    return tuple(t.strip() for t in text.split(",") if t.strip())


def did_you_mean(value: str, known: Iterable[str], aliases: Mapping[str, str] | None = None) -> str:
    """`` (did you mean esxi?)``: the known word closest to a mistyped ``value`` (an alias
    first: a word people use for one of ours, ``vmware`` for ``esxi``); empty when none is
    close."""
    near = (aliases or {}).get(value.lower()) or nearest(value.lower(), known)
    return f"; did you mean {near}?" if near else ""


def nearest(value: str, known: Iterable[str]) -> str | None:
    """The known word most like ``value`` (difflib's ratio, at least 0.7: at Click's 0.6
    ``--bogus`` would be "--verbose"), or None. Two letters swapped is the commonest slip,
    so a word of the same letters wins a tie: ``--rsp`` is ``--rps``, not ``--tps``."""
    close = difflib.get_close_matches(value, list(known), n=3, cutoff=0.7)
    if not close:
        return None
    ratio = {w: difflib.SequenceMatcher(None, value, w).ratio() for w in close}
    return max(close, key=lambda w: (sorted(w) == sorted(value), ratio[w]))


def unknown(
    option: str, value: str, known: Sequence[str], aliases: Mapping[str, str] | None = None
) -> str:
    """The one line for a value not among ``known``: what was expected, and the nearest."""
    return f"{option}: unknown value {value!r} (expected {', '.join(known)})" + did_you_mean(
        value, known, aliases
    )


def choice(enum: type[E], value: str, option: str, allowed: Sequence[E] = ()) -> E:
    """Parse a choice ourselves so a bad value is one clear line, not a usage block;
    ``allowed``: the members this option takes (all when empty)."""
    members = list(allowed or enum)
    for m in members:
        if str(m.value) == value.lower():
            return m
    raise UsageError(unknown(option, value, [str(m.value) for m in members]))


# What a number of a demand may look like: 200000, 200,000, 200 000, 200_000, 1.5 and 2e5,
# with an optional k or M. A comma groups thousands only (three digits after it), so a
# decimal comma ("1,5M") is refused rather than read as 15 million.
_GROUPED = r"\d{1,3}(?:(?P<sep>[,_ \u00a0\u202f])\d{3})(?:(?P=sep)\d{3})*"
_NUMBER = re.compile(
    rf"(?P<num>[-+]?(?:{_GROUPED}|\d+)(?:\.\d*)?|\.\d+)(?P<exp>[eE][-+]?\d+)?\s*(?P<mult>[kKmM]?)"
)
_MULTIPLIERS = {"": 1.0, "k": 1e3, "m": 1e6}
RATE_METAVAR = "N"  # --help: 200000, 200,000, 200k, 1.5M


def rate(value: str | None, option: str, unit: str) -> float | None:
    """``--rps``/``--tps``: a positive number as people write it: ``200000``, ``200,000``,
    ``200 000``, ``200k``, ``1.5M``, ``2e5``. Anything else is one line saying what was
    expected in words (``unit``: ``requests per second``); None stays None."""
    if value is None:
        return None
    text = value.strip()
    found = _NUMBER.fullmatch(text)
    number = None
    if found:
        digits = re.sub(r"[,_ \u00a0\u202f]", "", found["num"])
        number = float(digits + (found["exp"] or "")) * _MULTIPLIERS[found["mult"].lower()]
    if number is None or not math.isfinite(number):
        raise UsageError(
            f"{option}: {value!r} is not a number of {unit}: give e.g. 200000, 200,000 or 200k"
        )
    return number


def percent(value: str, option: str) -> float:
    """``--headroom``: a percentage, ``20`` or ``20%`` (never a fraction: ``0.2`` is 0.2%)."""
    text = value.strip().removesuffix("%").rstrip()
    # a plain decimal only: float() would also take "inf", "nan" and "1_0"
    if not re.fullmatch(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)", text):
        raise UsageError(f"{option}: {value!r} is not a percentage: give e.g. 20 or 20%")
    return float(text)


def demand_figures(
    rps: str | None, tps: str | None, headroom: str
) -> tuple[float | None, float | None, float]:
    """``--rps``, ``--tps`` and ``--headroom`` as numbers (headroom in percent), each bad
    one refused in one line naming the option."""
    return (
        rate(rps, "--rps", RPS_UNIT),
        rate(tps, "--tps", TPS_UNIT),
        percent(headroom, "--headroom"),
    )


def run_platforms(text: str | None) -> tuple[str, ...]:
    """``run --platform a,b``: the platforms to measure (empty: all), each one checked."""
    if not text:
        return ()
    known = sorted(RUN_PLATFORMS)
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    for item in items:
        if item not in RUN_PLATFORMS:
            raise UsageError(
                f"--platform: {item!r} is not one of {', '.join(known)}"
                + did_you_mean(item, known, RUN_PLATFORM_ALIASES)
            )
    return items


def completer(words: Iterable[str | Enum]) -> Callable[[str], list[str]]:
    """The shell completion of a choice (``--platform <TAB>``): the words that begin with
    what is typed so far."""
    known = [str(w.value) if isinstance(w, Enum) else w for w in words]

    def complete(incomplete: str) -> list[str]:
        return [w for w in known if w.startswith(incomplete.lower())]

    return complete


def metavar(enum: type[Enum] | Sequence[Enum]) -> str:
    """``a|b|c``: the choices, for --help."""
    return "|".join(str(m.value) for m in enum)


ANY = "any"
PLATFORM_METAVAR = "|".join([*BasisPlatform, ANY])
RUN_HT = (HtChoice.OFF, HtChoice.ON, HtChoice.BOTH)  # run measures each of both
SIZING_HT = (HtChoice.OFF, HtChoice.ON, HtChoice.ANY)  # sizing takes either
# Words people use for a platform of ours: VMware's names for ESXi, the article's hypervisor
# (``hypervisor`` names either hypervisor); "did you mean" offers ours.
PLATFORM_ALIASES = {
    "vmware": "esxi (or hypervisor: KVM or ESXi)",
    "vsphere": "esxi (or hypervisor: KVM or ESXi)",
    "esx": "esxi (or hypervisor: KVM or ESXi)",
    "bare-metal": "baremetal",
    "metal": "baremetal",
    "libvirt": "kvm",
    "qemu": "kvm",
    "vm": "hypervisor",
    "k8s": "kubernetes",
}
RUN_PLATFORMS = frozenset({"baremetal", "hypervisor", "libvirt", "vsphere"})
# ``run --platform`` names the backends that make guests: vSphere for ESXi, libvirt for KVM
RUN_PLATFORM_ALIASES = {
    "vmware": "vsphere",
    "esxi": "vsphere",
    "esx": "vsphere",
    "kvm": "libvirt",
    "qemu": "libvirt",
    "bare-metal": "baremetal",
    "metal": "baremetal",
}


def platform_choice(value: str, option: str = "--platform") -> BasisPlatform | None:
    """``--platform``: one basis platform, or None for ``any``."""
    if value.lower() == ANY:
        return None
    try:
        return BasisPlatform(value.lower())
    except ValueError:
        raise UsageError(
            unknown(option, value, PLATFORM_METAVAR.split("|"), PLATFORM_ALIASES)
        ) from None


RPS_UNIT = "requests per second"
TPS_UNIT = "TLS handshakes per second"


VirtualizedOpt = Annotated[
    bool,
    typer.Option(
        "--include-virtualized",
        help=f"Let the default choice use a {VIRTUALIZED_HOST_WORDS}; never called bare metal.",
    ),
]
DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Results database: a file (default: $SIZING_DB, else sizing.sqlite in the user "
        "data directory, ~/.local/share/sizing), or a team's PostgreSQL database, "
        "postgresql://user@host/dbname (the password from PGPASSWORD or ~/.pgpass, never "
        "here; docs/team-store.md).",
    ),
]
EmulatedOpt = Annotated[
    bool,
    typer.Option(
        "--include-emulated",
        help="Also use figures measured in software-emulated guests (never by default).",
    ),
]


class FormatChoice(StrEnum):
    """``guide --format``."""

    PDF = "pdf"
    HTML = "html"
    MD = "md"


class PaperChoice(StrEnum):
    """``guide --paper``."""

    A4 = "a4"
    LETTER = "letter"
