"""Rates from counters' samples (:mod:`sizing.demand.counters`): each counter's
difference over each scrape interval, as arrays (a few of the samples' length at a time,
never an object per interval)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sizing.demand.counters import Samples


@dataclass
class Rates:
    """A counter's rate per interval, keyed by the interval's first second on the scrape
    grid, in the order the intervals were first met (as a dict keeps them)."""

    keys: npt.NDArray[np.int64]
    values: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.keys)

    def peak_at(self) -> int:
        """The first interval with the highest rate."""
        return int(self.keys[int(np.argmax(self.values))])


Series = tuple[Rates, float, int]


MAX_RATE = 1e12  # per second: above any server's (a counter this steep is damaged or wrapped)


def _bad_intervals(s: Samples) -> npt.NDArray[np.bool_]:
    """Per sample, whether the interval it starts is one in which any counter went down
    (a restart) or the time did not move: left out of every counter's rates alike, so that
    requests and connections cover the same intervals (one skipped for requests alone made
    requests per connection fall below 1)."""
    bad = np.zeros(len(s), np.bool_)
    if len(s) < 2:
        return bad
    dt = np.diff(s.time)
    bad[:-1] = dt <= 0
    for col in s.values.values():
        a, b = col[:-1], col[1:]
        both = ~np.isnan(a) & ~np.isnan(b)
        with np.errstate(invalid="ignore"):
            ok = (b - a >= 0) & (b - a <= MAX_RATE * dt)
        bad[:-1] |= both & ~ok
    return bad


def _round3(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Python's ``round(x, 3)`` (correctly rounded; numpy's differs in the last place), a
    slice at a time: no list of a million floats."""
    out = np.empty(len(x))
    for a in range(0, len(x), 1 << 16):
        out[a : a + (1 << 16)] = [round(v, 3) for v in x[a : a + (1 << 16)].tolist()]
    return out


def rates(series: list[Samples], name: str, step: float) -> Series | None:
    """Per interval (keyed by its first second, on the step's grid): the counter's rate
    summed over the series (one per server); the total change and the intervals skipped
    (a counter went down, in any of the counters; or a rate above :data:`MAX_RATE`).
    A few arrays of the samples' length at a time (no object per interval)."""
    keys, values, changes = [], [], []
    resets, found = 0, False
    for s in series:
        col = s.values.get(name)
        if col is None:
            continue
        bad = _bad_intervals(s)
        t, v = s.time, col
        if np.isnan(col).any():  # only the samples that hold this counter
            have = np.flatnonzero(~np.isnan(col))
            t, v, bad = t[have], v[have], bad[have]
            del have
        found = found or len(t) >= 2
        dt, dv = np.diff(t), np.diff(v)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = dv / dt
        skip = bad[:-1] | (dv < 0) | (dt <= 0) | (rate > MAX_RATE)
        del dt, bad
        resets += int(skip.sum())
        t0 = t[:-1]
        if skip.any():
            ok = ~skip
            t0, rate, dv = t0[ok], rate[ok], dv[ok]
        key = t0 / step
        np.rint(key, out=key)
        key *= step
        np.trunc(key, out=key)
        keys.append(key.astype(np.int64))
        del key
        # Python's round (correctly rounded to 3 places), as the rates were always shown
        values.append(_round3(rate))
        changes.append(dv)
    if not found:
        return None
    k, r = np.concatenate(keys), np.concatenate(values)
    del keys, values
    change = np.concatenate(changes)
    total = float(np.cumsum(change)[-1]) if len(change) else 0.0  # in order, as a loop adds
    if len(k) < 2 or bool((np.diff(k) > 0).all()):  # one interval a key, in order
        return Rates(k, r), total, resets
    uniq, first, inv = np.unique(k, return_index=True, return_inverse=True)
    summed = np.zeros(len(uniq), np.float64)
    np.add.at(summed, inv, r)  # in the intervals' order, as a running sum per key
    order = np.argsort(first, kind="stable")
    return Rates(uniq[order], summed[order]), total, resets
