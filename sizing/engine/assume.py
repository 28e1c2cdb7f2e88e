"""A platform priced from a stated assumption instead of a measurement (issue 44).

``--assume guest-share=kvm:0.92 --assume-source "vendor benchmark 2025"`` prices KVM
where no KVM guest was measured: KVM's figures are bare metal's of the same basis times
the share, per core count and HT mode (the interval and every repetition scaled alike, so
bare metal's own uncertainty is carried; the share's is not known and is not added). The
figures are kind ``assumed``, flagged ``assumed``, and every one says the share and its
source; the answer carries the :class:`Assumption` (``assumptions`` in ``--json``) for
every rendering to print. Measured guests of that platform always win: the assumption is
then not used, and the answer says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from sizing.engine.basis import Basis
from sizing.errors import UsageError
from sizing.model import HYPERVISOR_PLATFORMS, Figure, FigureKind

__all__ = ["ASSUMED", "Assumption", "assumed_guest", "parse_assume"]

ASSUMED = "assumed"  # a figure's flag: made from a stated assumption, not measured
KINDS = ("guest-share",)
PLATFORM_WORDS = {"kvm": "KVM", "esxi": "ESXi"}


@dataclass(frozen=True)
class Assumption:
    """A stated assumption an answer rests on: what, its value, its source, what it made."""

    what: str  # guest-share
    platform: str  # kvm | esxi
    value: float
    source: str
    basis: str = ""  # the basis it made
    from_basis: str = ""  # the basis it was made from
    used: bool = True
    note: str = ""  # why it was not used

    def words(self) -> str:
        """The sentence every rendering prints."""
        name = PLATFORM_WORDS.get(self.platform, self.platform)
        text = (
            f"Assumption: {name}'s figures are bare metal's × {self.value:g} (a guest share "
            f"of {self.value * 100:g}%, per core count; source: {self.source}), not measured"
        )
        if self.from_basis:
            text += f"; made from {self.from_basis}"
        return text if self.used else f"{text}; not used: {self.note}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "platform": self.platform,
            "value": self.value,
            "source": self.source,
            "basis": self.basis or None,
            "from_basis": self.from_basis or None,
            "used": self.used,
            "note": self.note or None,
            "words": self.words(),
        }


def parse_assume(text: str, source: str | None) -> Assumption:
    """``guest-share=kvm:0.92`` and its ``--assume-source``; one usage line otherwise."""
    what, sep, rest = text.partition("=")
    platform, sep2, value = rest.partition(":")
    if not sep or not sep2 or what.strip() not in KINDS:
        raise UsageError(
            f"--assume {text}: expected guest-share=PLATFORM:SHARE (e.g. guest-share=kvm:0.92)"
        )
    platform = platform.strip().lower()
    if platform not in HYPERVISOR_PLATFORMS:
        raise UsageError(
            f"--assume {text}: the platform must be one of {', '.join(HYPERVISOR_PLATFORMS)}"
        )
    try:
        share = float(value)
    except ValueError:
        raise UsageError(f"--assume {text}: the share must be a number, not {value!r}") from None
    if not (math.isfinite(share) and 0.05 <= share <= 1.5):
        raise UsageError(f"--assume {text}: the share must be between 0.05 and 1.5")
    if not source or not source.strip():
        raise UsageError(
            f"--assume {text}: say where the share comes from with --assume-source TEXT "
            '(e.g. --assume-source "vendor benchmark 2025"); an assumption is printed '
            "with its source"
        )
    return Assumption(what.strip(), platform, share, source.strip())


def _scaled(f: Figure, a: Assumption, basis_id: str) -> Figure:
    def x(v: float | None) -> float | None:
        return None if v is None else v * a.value

    return replace(
        f,
        platform=a.platform,
        value=f.value * a.value,
        ci_low=x(f.ci_low),
        ci_high=x(f.ci_high),
        reps=tuple(v * a.value for v in f.reps),
        source=FigureKind.ASSUMED,
        origin=(
            f"bare metal's {f.source} figure ({f.basis}) × {a.value:g}, the assumed "
            f"{PLATFORM_WORDS.get(a.platform, a.platform)} guest share (source: {a.source})"
        ),
        basis=basis_id,
        flags=tuple(dict.fromkeys((*f.flags, ASSUMED))),
        pair="",
        pair_ratios=(),
        pair_role="",
        pair_c_ratios=(),
    )


def assumed_guest(bare: Basis, a: Assumption) -> tuple[Basis, Assumption]:
    """The guest basis the assumption makes from a bare-metal basis, and the assumption
    naming it."""
    new_id = f"{bare.id}~{a.platform}-share-{a.value:g}"
    basis = replace(
        bare,
        id=new_id,
        platform=a.platform,
        figures=tuple(_scaled(f, a, new_id) for f in bare.figures),
        pooled_into="",
        citation=f"assumed from {bare.id} (source: {a.source})",
    )
    return basis, replace(a, basis=new_id, from_basis=bare.id)
