"""The exit status of a command, from its outcome: the one place it is decided (errors
raised as :class:`sizing.errors.SizingError` carry their own, which the CLI's guard uses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sizing.errors import ExitStatus
from sizing.model import RunStatus, RunSummary, Status

if TYPE_CHECKING:  # a type only: the plan's modules (and pydantic) load when a plan is made
    from sizing.plan.document import PlanDocument

__all__ = ["Answered", "Checked", "Planned", "exit_status"]


@dataclass(frozen=True)
class Planned:
    """``run --plan``: the dry-run document (:func:`sizing.sweep.plan_sweep`)."""

    doc: PlanDocument


@dataclass(frozen=True)
class Checked:
    """``inventory check``: the hosts that could not be reached, and why."""

    unreachable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Answered:
    """``recommend``: whether an answer could be given (the explanation says why not)."""

    answered: bool


Outcome = RunSummary | Planned | Checked | Answered | None


def exit_status(outcome: Outcome) -> ExitStatus:
    """``0`` unless the outcome says a host or nginx failed (``4``): a run with a failed
    point or that did not complete (what was measured is stored), a plan whose pre-flight
    checks failed, an inventory check that could not reach a host; ``1`` for a demand no
    configuration can carry or a plan that measures nothing. Nothing to do (None) is
    ``0``."""
    if isinstance(outcome, RunSummary):
        failed = any(p.status is Status.FAILED for p in outcome.points)
        if failed or outcome.status is not RunStatus.COMPLETE:
            return ExitStatus.HOST
    elif isinstance(outcome, Planned):
        if outcome.doc.preflight:
            return ExitStatus.HOST
        if outcome.doc.nothing_to_measure:
            return ExitStatus.ERROR
    elif isinstance(outcome, Checked):
        if outcome.unreachable:
            return ExitStatus.HOST
    elif isinstance(outcome, Answered) and not outcome.answered:
        return ExitStatus.ERROR
    return ExitStatus.OK
