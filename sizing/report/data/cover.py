"""What the guide's cover says it contains, in one voice (pure).

One of four, never two at once:

- ``measured``: the guide is sized on figures measured on the hosts it names;
- ``simulated``: the guide is sized on made-up figures (``examples/simulated.py``'s
  example stores: every figure flagged ``simulated``), never called measured;
- ``not-qualifying``: points were measured, but none qualifies for sizing (a virtualized
  host, an emulated guest, no valid figure, or a request the measured bases do not
  serve), so every figure is the published reference's, and the cover says why;
- ``reference``: nothing was measured; every figure is the published reference's.

The cover's "Measured on" row appears only with the first: a host that was measured but
not sized on is named in the banner with the reason, never as what the guide rests on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.choice import Choice
from sizing.model import Status
from sizing.sources import RunData

__all__ = ["SIMULATED", "Cover", "cover", "simulated"]

MEASURED, NOT_QUALIFYING, REFERENCE = "measured", "not-qualifying", "reference"
SIMULATED = "simulated"
COVER_HOSTS = 2  # the most groups of hosts the cover names one by one


@dataclass(frozen=True)
class Cover:
    """The cover's statement: its ``kind``, the hosts it names (measured ones, as what
    they are) and, for ``not-qualifying``, why nothing measured was sized on."""

    kind: str
    hosts: tuple[str, ...] = ()
    why: str = ""

    @property
    def measured(self) -> bool:
        return self.kind == MEASURED

    @property
    def hosts_text(self) -> str:
        """The hosts as the cover names them (each entry a group of hosts of one hardware):
        every one when they are few, else the first and how many more (the methodology
        names each). The cover is one page: a lab's long host names, said in full in its
        table and again in its banner, pushed the page's foot onto the next page, below
        its margin."""
        if len(self.hosts) <= COVER_HOSTS:
            return "; ".join(self.hosts)
        more = len(self.hosts) - COVER_HOSTS + 1
        return (
            "; ".join(self.hosts[: COVER_HOSTS - 1])
            + f" and {more} more (the methodology names each)"
        )


def simulated(choice: Choice) -> bool:
    """Whether every basis of ``choice`` that is not the published reference is made up
    (:attr:`sizing.engine.basis.Basis.kind`): its figures are then never called measured."""
    own = [b for b in choice.bases if b.origin != "reference"]
    return bool(own) and all(b.kind == SIMULATED for b in own)


def _measured_hosts(runs: Sequence[RunData]) -> tuple[str, ...]:
    """The hosts a run measured something on (a point with a figure, valid or not)."""
    seen = (p.result for r in runs for p in r.points)
    hit = (r.key.host for r in seen if r.status in (Status.MEASURED, Status.INVALID))
    return tuple(dict.fromkeys(hit))


def cover(
    reference_only: bool,
    measured_on: Sequence[str],
    left_out: Sequence[Any],
    runs: Sequence[RunData],
    choice: Choice,
) -> Cover:
    """The cover's statement (module docstring). ``measured_on`` are the body's hosts as
    what they are; ``left_out`` the hosts the body leaves out (:mod:`.scope`)."""
    if not reference_only:
        return Cover(SIMULATED if simulated(choice) else MEASURED, tuple(measured_on))
    named = tuple(measured_on) or _measured_hosts(runs) or tuple(x.host for x in left_out)
    if not named:
        return Cover(REFERENCE)
    if left_out:
        why = " ".join(x.sentence() for x in left_out)
    else:
        # the choice's own words: "reference: --source reference", or what was passed over
        passed = "; ".join(f"{i}: {r}" for i, r in choice.passed_over if not i.startswith("ref"))
        why = (passed or choice.why.removeprefix("reference: ")).rstrip(".") + "."
    return Cover(NOT_QUALIFYING, named, why)
