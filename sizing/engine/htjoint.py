"""One model for HT: the HT-on and HT-off series of one basis, platform and profile share
a scaling shape and differ by the HT gain measured where both were measured.

Each HT mode fitted alone can reverse a gain measured at every core count (HT on predicted
below HT off at 16 and 32 cores although it measured +5% at 1, 2, 4 and 8). So the series
with fewer measured core counts (HT on, on a tie) predicts what it did not measure as the
other's prediction times the gain: its ratio to the other at their common measured counts
(geometric mean), the interval widened to the lowest and highest of those ratios. A gain
that changes sign across the counts is carried too: the data say so. The gain itself is
measured in :mod:`sizing.engine.overhead` (:func:`~sizing.engine.overhead.ht_gain_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sizing.engine.overhead import HtGain
from sizing.model import PREDICTED, Figure

__all__ = ["scaled"]


def scaled(
    got: Figure | str, cores: int, gain: HtGain, partner: Callable[[int], Figure | str], cap: float
) -> Figure | str:
    """A predicted ``got`` replaced by the partner's prediction at ``cores`` times the
    gain (observed figures and refusals are kept)."""
    if isinstance(got, str) or got.source not in PREDICTED:
        return got
    base = partner(cores)
    if isinstance(base, str) or base.source not in PREDICTED:
        return got
    value = min(base.value * gain.ratio, cap)
    low = None if base.ci_low is None else min(value, base.ci_low * gain.low)
    high = None if base.ci_high is None else min(cap, max(value, base.ci_high * gain.high))
    return replace(
        got,
        value=value,
        ci_low=low,
        ci_high=high,
        source=base.source,
        origin=f"{base.origin}; {gain.words()}",
        flags=tuple(dict.fromkeys((*got.flags, *base.flags))),
        coverage=None if (low, high) != (base.ci_low, base.ci_high) else base.coverage,
        interval=f"{base.interval}; times the HT gain's range" if base.interval else "",
    )
