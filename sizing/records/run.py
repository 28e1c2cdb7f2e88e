"""What a stored run's options record says, read back typed.

The record is written from :class:`sizing.sweep.RunOptions` (``run_options_record``: one
key per stored option) with the measuring process beside it (``owner``); ``--resume``
decodes it field by field from those declarations. Everything else reads it through
:class:`RunOptionsRecord`, by attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sizing.records.codec import load
from sizing.records.host import LockOwner

__all__ = ["RunOptionsRecord"]


@dataclass(frozen=True)
class RunOptionsRecord:
    """The stored options a report shows: the run's ``--label``, the warm-up its points
    had (``warmup_s``, None: the profile's own) and who measured it (``owner``, while it
    ran); the other options in ``extra``, as stored."""

    label: str | None = None
    warmup_s: float | None = None
    owner: LockOwner | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Any) -> RunOptionsRecord:
        return load(cls, data) if isinstance(data, Mapping) else cls()
