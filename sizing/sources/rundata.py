"""One stored run as the readers receive it (:class:`RunData`); its own module so that
:mod:`sizing.sources.bases` can name it without importing the package that imports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sizing.model import Sample
    from sizing.store import RunRecord, StoredPoint

__all__ = ["RunData"]


@dataclass(frozen=True)
class RunData:
    """One stored run with its points and each point's samples (by point id)."""

    record: RunRecord
    points: tuple[StoredPoint, ...]
    samples: Mapping[int, tuple[tuple[int, Sample], ...]] = field(default_factory=dict)
