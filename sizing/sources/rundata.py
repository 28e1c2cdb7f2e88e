"""One stored run as the readers receive it (:class:`RunData`); its own module so that
:mod:`sizing.sources.bases` can name it without importing the package that imports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sizing.store.drift_flag import timed_values

if TYPE_CHECKING:
    from sizing.model import Sample
    from sizing.store import RunRecord, StoredPoint

__all__ = ["RunData"]


@dataclass(frozen=True)
class RunData:
    """One stored run with its points, each point's samples (by point id) where they were
    read, and each point's timed repetitions (by point id) as the store read them."""

    record: RunRecord
    points: tuple[StoredPoint, ...]
    samples: Mapping[int, tuple[tuple[int, Sample], ...]] = field(default_factory=dict)
    repetitions: Mapping[int, tuple[float, ...]] | None = None

    def timed(self, point_id: int) -> list[float]:
        """A point's timed repetitions (not the warm-up, not the per-client samples, not
        a sweep's windows): as the store read them without decoding a sample, or, for a
        run given without them, from its samples (the same rule, :func:`timed_values`)."""
        if self.repetitions is not None:
            return list(self.repetitions.get(point_id, ()))
        return timed_values(self.samples.get(point_id, ()))
