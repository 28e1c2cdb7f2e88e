"""What the guide's body covers, and what it leaves out (pure).

The body (the limits, the CPU chart, the methodology's hosts, latency, gateway) shows the
points of the hosts the guide is sized on and of other hosts with valid figures. A host
whose points do not qualify (a virtualized host or an emulated guest the request did not
include, or a host with no valid figure) is left out of the body: Appendix A lists its
points, labelled as what they are, and the cover says in one line what was left out, why,
and how to include it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sizing.engine.choice import Choice
from sizing.model import VIRTUALIZED_HOST_WORDS, Status
from sizing.sources import RunData

__all__ = ["LeftOut", "scope"]


@dataclass(frozen=True)
class LeftOut:
    """One host whose points the body leaves out, and why, in words."""

    host: str
    what: str  # "a virtualized host (KVM guest or container measured as bare metal)"
    points: int
    invalid: int
    option: str = ""  # the guide option that includes it, if one does
    skipped: int = 0  # not measured (a stated reason each, in Appendix A)
    failed: int = 0

    def sentence(self) -> str:
        """``localhost, a virtualized host (...): 8 points, 1 invalid, 6 skipped; listed in
        Appendix A (--include-virtualized sizes on it).``"""
        counts = f"{self.points} point{'s' if self.points != 1 else ''}"
        # every point is counted (issue 62: "8 points, 1 invalid" said nothing of 6 skipped)
        for n, what in (
            (self.invalid, "invalid"),
            (self.skipped, "skipped"),
            (self.failed, "failed"),
        ):
            if n:
                counts += f", {'all' if n == self.points else n} {what}"
        how = f" ({self.option} sizes on it)" if self.option and self.invalid < self.points else ""
        return f"{self.host}, {self.what}: {counts}; listed in Appendix A{how}."


def _what(host: str, runs: Sequence[RunData], flags: set[str], valid: int) -> tuple[str, str]:
    """What a left-out host is, and the option that would include it."""
    seen = (r.record.environment.get(host) for r in runs)
    vendor = next((h.hypervisor for h in seen if h is not None and h.hypervisor), None)
    if "emulated" in flags:
        return "a software-emulated guest (not real hardware)", "--include-emulated"
    if "virtualized-host" in flags:
        # the terminal's words (one vocabulary, issue 62), and what the host's facts detected
        detected = f", detected as {vendor}" if vendor else ""
        return f"a {VIRTUALIZED_HOST_WORDS}{detected}", "--include-virtualized"
    if not valid:
        return "no valid figure", ""
    return "not used", ""


def scope(
    runs: Sequence[RunData],
    choice: Choice,
    *,
    include_virtualized: bool = False,
    include_emulated: bool = False,
) -> tuple[tuple[RunData, ...], tuple[LeftOut, ...]]:
    """The runs cut to the points of the hosts the body shows, and the hosts left out.

    A host the guide is sized on stays. Another host is left out when none of its points
    is valid, or when every one is a virtualized host's or an emulated guest's and the
    request did not include those; its other points (a latency or gateway run, another
    basis) stay."""
    chosen = {h for b in choice.bases if b.origin == "measured" for h in b.hosts}
    points: dict[str, list[tuple[Status, tuple[str, ...]]]] = {}
    for run in runs:
        for p in run.points:
            points.setdefault(p.result.key.host, []).append((p.result.status, p.result.flags))
    left: list[LeftOut] = []
    for host, pts in points.items():
        if host in chosen:
            continue
        flags = {f for _, fl in pts for f in fl}
        valid = sum(1 for s, _ in pts if s is Status.MEASURED)
        # what a host is, its measured points say: a skipped or failed point carries no flag
        seen = [fl for s, fl in pts if s in (Status.MEASURED, Status.INVALID)]
        virtual = all("virtualized-host" in fl for fl in seen) and not include_virtualized
        emulated = all("emulated" in fl for fl in seen) and not include_emulated
        if valid and not virtual and not emulated:
            continue
        count = {st: sum(1 for s, _ in pts if s is st) for st in Status}
        what, option = _what(host, runs, flags, valid)
        left.append(
            LeftOut(
                host,
                what,
                len(pts),
                count[Status.INVALID],
                option,
                skipped=count[Status.SKIPPED],
                failed=count[Status.FAILED],
            )
        )
    out = {x.host for x in left}
    body: list[RunData] = []
    for run in runs:
        mine = tuple(p for p in run.points if p.result.key.host not in out)
        if mine:
            body.append(replace(run, points=mine))
    return tuple(body), tuple(left)
