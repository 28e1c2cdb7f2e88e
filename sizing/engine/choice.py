"""Which bases an answer is sized on (:func:`choose`): the one asked for, else the measured
basis with the most core counts, else the reference group that serves the request; and
why the others were passed over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.basis import REFERENCE_DEFAULT, Basis, group_key
from sizing.engine.workload_use import WorkloadUse
from sizing.errors import UsageError
from sizing.model import BasisPlatform, Figure, FigureKind


@dataclass(frozen=True)
class Want:
    """What a command asks of a basis: any of these platforms (None: any), this HT mode
    (None: any), figures of every one of these profiles."""

    platforms: frozenset[str] | None = None
    ht: str | None = None
    profiles: tuple[str, ...] = ()

    def met_by(self, b: Basis) -> bool:
        if self.platforms is not None and b.platform not in self.platforms:
            return False
        return all(
            any(f.profile == p and (self.ht is None or f.ht == self.ht) for f in b.figures)
            for p in self.profiles
        )

    def describe(self) -> str:
        parts = []
        if self.platforms is not None:
            parts.append("/".join(sorted(self.platforms)))
        parts.append("/".join(p.upper() for p in self.profiles) or "any")
        if self.ht is not None:
            parts.append(f"HT {self.ht}")
        return " ".join(parts)


@dataclass(frozen=True)
class Choice:
    """The bases a command sizes from, why, the bases it passed over (id, reason) and the
    workload they are of, against the one asked (:mod:`sizing.engine.roles`)."""

    bases: tuple[Basis, ...]
    why: str
    passed_over: tuple[tuple[str, str], ...] = ()
    workload: WorkloadUse | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.bases)

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(f for b in self.bases for f in b.figures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bases": [b.to_dict() for b in self.bases],
            "why": self.why,
            "passed_over": [{"basis": i, "reason": r} for i, r in self.passed_over],
            "workload": None if self.workload is None else self.workload.to_dict(),
        }


def resolve(bases: Sequence[Basis], requested: Sequence[str]) -> tuple[Basis, ...]:
    """The bases named by ``requested`` (exact id, or a prefix matching one basis or the
    bases of one group), in the order asked. UsageError lists the ids otherwise."""
    out: list[Basis] = []
    ids = ", ".join(b.id for b in bases) or "none"
    for want in requested:
        exact = [b for b in bases if b.id == want]
        hits = exact or [b for b in bases if b.id.startswith(want)]
        if not hits:
            raise UsageError(f"unknown basis {want!r} (known: {ids})")
        if len(hits) > 1 and len({group_key(b) for b in hits}) > 1:
            names = ", ".join(b.id for b in hits)
            raise UsageError(f"basis {want!r} is ambiguous: {names}")
        out.extend(b for b in hits if b not in out)
    return tuple(out)


def _newest(b: Basis) -> int:
    return max(b.runs, default=-1)


def choose(
    bases: Sequence[Basis],
    requested: Sequence[str] | None = None,
    *,
    include_virtualized: bool = False,
    include_emulated: bool = False,
    serves: Want | None = None,
    every_reference: bool = False,
) -> Choice:
    """The bases to size from (see the module docstring for the rule).

    ``serves`` (what the command asks: platforms, HT mode, profiles) narrows the measured
    bases to those that can answer it; among the reference groups only the platform asked
    for (``--platform kubernetes``) leaves the default group: an HT mode the default group
    lacks is said by the answer, never answered from another workload.
    ``every_reference`` (``table``): when the choice falls back to the reference data,
    every reference group is taken (the article has two tables)."""
    if requested:
        chosen = resolve(bases, requested)
        asked = ", ".join(b.id for b in chosen)
        notes = [
            f"{b.id}: {why}"
            for b in chosen
            for ok, why in [b.qualifies(include_virtualized=False, include_emulated=False)]
            if not ok
        ]
        why = f"basis {asked} as asked" + (f" (although {'; '.join(notes)})" if notes else "")
        passed = tuple((b.id, "not asked for") for b in bases if b not in chosen)
        return Choice(chosen, why, passed)

    reasons: dict[str, str] = {}
    qualifying: list[Basis] = []
    beside: list[Basis] = []  # measured container legs: shown beside (table), never switched to
    containers_asked = serves is not None and BasisPlatform.CONTAINER in (
        serves.platforms or frozenset()
    )
    for b in bases:
        ok, why_not = b.qualifies(
            include_virtualized=include_virtualized, include_emulated=include_emulated
        )
        if ok and serves is not None and not serves.met_by(b):
            ok, why_not = False, f"has no {serves.describe()} figures"
        if b.origin != FigureKind.MEASURED:
            continue
        if ok and b.platform == BasisPlatform.CONTAINER and not containers_asked:
            # Ask, do not switch: a container leg is another architecture, as Kubernetes is
            beside.append(b)
            ok, why_not = False, "a container leg: sized only when asked (--platform container)"
        if ok and b.workload.customer:
            # a customer's replayed workload sizes that customer's demand: never switched
            # to for another request (its requests are the customer's, not the profiles')
            ok, why_not = (
                False,
                f"a customer's workload replayed: sized only when asked (--basis {b.id})",
            )
        if ok:
            qualifying.append(b)
        else:
            reasons[b.id] = why_not
    if qualifying:
        group, why = _measured_group(qualifying, reasons)
    else:
        group, why = _reference_group(bases, reasons, serves, every_reference)
    if every_reference:  # the table shows them in their own blocks, never pooled
        group += beside
    for b in bases:
        if b not in group and b.id not in reasons:
            reasons[b.id] = "another group" if b.origin == FigureKind.REFERENCE else "not chosen"
    ordered = tuple(sorted(group, key=_platform_order))
    passed = tuple((i, r) for i, r in reasons.items() if i not in {b.id for b in ordered})
    return Choice(ordered, why, passed)


def _measured_group(
    qualifying: Sequence[Basis], reasons: dict[str, str]
) -> tuple[list[Basis], str]:
    """The measured basis with the most core counts (the newest among equals; the
    conservative one when hosts of its identity disagree) and its group; why the others
    were passed over goes in ``reasons``."""
    # on a tie, bare metal names the group (its guests are sized against it)
    best = max(
        qualifying, key=lambda b: (len(b.core_counts()), _newest(b), b.platform == "baremetal")
    )
    peers = [b for b in qualifying if b is not best and _same_identity(b, best)]
    disagree = bool(best.disagrees) and bool(peers)
    if disagree:  # hosts of one identity disagree: size on the conservative one
        best = min([best, *peers], key=lambda b: _level(b, [best, *peers]))
    key = group_key(best)
    group = [best] + [b for b in qualifying if b is not best and group_key(b) == key]
    n = len(best.core_counts())
    why = (
        f"{best.kind} basis {best.id} ({n} core count{'s' if n != 1 else ''}, valid"
        + (f", run {_newest(best)}" if best.runs else "")
        + ")"
    )
    if disagree:
        why += (
            f"; hosts of the same hardware, platform, workload and software disagree "
            f"({'; '.join(best.disagrees)}): sized on the conservative {best.id}; name "
            "another with --basis"
        )
    for b in qualifying:
        if b not in group:
            reasons[b.id] = (
                f"disagrees with {best.id} (the conservative one is sized)"
                if disagree and _same_identity(b, best)
                else f"{best.id} has more core counts or a newer run"
            )
    return group, why


def _reference_group(
    bases: Sequence[Basis], reasons: Mapping[str, str], serves: Want | None, every_reference: bool
) -> tuple[list[Basis], str]:
    """No measured basis qualifies: the reference group that serves the request (every one
    for ``table``), and why."""
    refs = [b for b in bases if b.origin == FigureKind.REFERENCE]
    # Ask, do not switch: only the platform asked for (--platform kubernetes) leaves the
    # default group; an HT mode or a profile the default group lacks is said, not answered
    # from another workload.
    fit_refs = [
        b
        for b in refs
        if serves is None or serves.platforms is None or b.platform in serves.platforms
    ] or refs
    anchor = next(
        (b for b in fit_refs if b.id == REFERENCE_DEFAULT), fit_refs[0] if fit_refs else None
    )
    group = [] if anchor is None else [b for b in refs if group_key(b) == group_key(anchor)]
    if every_reference:
        group = list(refs)
    not_ok = "; ".join(f"{i}: {r}" for i, r in reasons.items())
    why = "reference: no measured basis qualifies" + (f" ({not_ok})" if not_ok else "")
    if anchor is not None and anchor.id != REFERENCE_DEFAULT and serves is not None:
        asked = "/".join(sorted(serves.platforms or ()))
        if asked:
            why += f"; {anchor.id} is the reference data for --platform {asked}"
        else:  # chosen by the workload's role (its only reference data), not by a platform
            why += f"; {anchor.id} is the only reference data of this workload"
    if anchor is None:
        why = "no basis to size from: nothing measured qualifies and no reference data"
    return group, why


def _same_identity(a: Basis, b: Basis) -> bool:
    return (a.platform, a.hardware, a.workload, a.software) == (
        b.platform,
        b.hardware,
        b.workload,
        b.software,
    )


def _level(b: Basis, peers: Sequence[Basis]) -> float:
    """How high a basis' figures stand against its peers at the configurations they all
    measured: the mean of its value / the peers' mean value (lower is conservative)."""
    slots = [(f.profile, f.cores, f.ht) for f in b.figures]
    ratios = []
    for slot in slots:
        vals = [f.value for p in peers for f in p.figures if (f.profile, f.cores, f.ht) == slot]
        mine = next(f.value for f in b.figures if (f.profile, f.cores, f.ht) == slot)
        if len(vals) == len(peers) and vals:
            ratios.append(mine / (sum(vals) / len(vals)))
    return sum(ratios) / len(ratios) if ratios else 1.0


_PLATFORMS = ("baremetal", "virtualized-host", "kvm", "esxi", "kubernetes", "container")


def _platform_order(b: Basis) -> tuple[int, str]:
    p = _PLATFORMS.index(b.platform) if b.platform in _PLATFORMS else len(_PLATFORMS)
    return (p, b.id)
