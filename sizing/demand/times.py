"""The arrival second of a chunk's distinct keys, as arrays (the regular-expression path
of :mod:`sizing.demand.scan`; :mod:`sizing.demand.fastscan` reads the same from the
compiled reader's columns, and the two are checked to agree).

The logged time is when the response ended: ``$request_time``, when logged, takes each
request back to the second it arrived (docs/demand.md, "arrival second").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from sizing.demand.clock import (
    LATEST,
    MAX_OFFSET_MIN,
    MONTHS,
    in_range,
    iso_seconds,
    local_seconds,
    seconds_ms,
)

Ints = npt.NDArray[np.int64]
Cache = dict[tuple[bytes, ...], int | None]


def arrival(ms: Ints, bad: npt.NDArray[np.bool_], rt: Ints | None) -> Ints:
    """Each arrival second (-1 where ``bad``): the logged time in ms less the request's
    time in ms (``rt``; -1 where it is not readable, which makes the time bad too)."""
    if rt is not None:
        bad = bad | (rt < 0)
        ms = ms - np.maximum(rt, 0)
    secs = ms // 1000
    bad = bad | (secs < 0) | (secs > LATEST)
    secs[bad] = -1
    return secs


_POW = np.array([1000, 100, 10, 1], np.int64)


def seconds(
    offsets: dict[str, int],
    time: str,
    cols: list[tuple[bytes, ...]],
    rt_col: tuple[bytes, ...] | None,
    cache: Cache,
    line_at: Callable[[int], int],
) -> Ints:
    """The arrival second of each key (-1 where its time is not readable): the logged
    time, when the response ended, less ``$request_time`` when that is logged. ``$msec``
    is to the ms, so the arrival is too; ``$time_local`` and ``$time_iso8601`` name the
    second the response ended in, so the arrival is the most likely second: that second's
    middle less the request's time (a request of 0.6 s logged at 05:01:04 most likely
    arrived in 05:01:03). The first line of each UTC offset goes into ``offsets``."""
    if time == "msec":
        whole = np.array(cols[0], dtype="S")
        bad = np.char.str_len(whole) > 12
        whole[bad] = b"0"
        frac = np.array(cols[1], dtype="S3")
        ms = whole.astype(np.int64) * 1000 + frac.astype(np.int64) * _POW[np.char.str_len(frac)]
    else:
        if time == "time_local":
            logged = local_seconds_array(offsets, cols[0], line_at)
        else:
            to_sec = _to_second(offsets, time, cache, line_at)
            logged = np.fromiter(
                (-1 if (x := to_sec(i, t)) is None else x for i, t in enumerate(cols[0])),
                np.int64,
                len(cols[0]),
            )
        bad = logged < 0
        ms = logged * 1000 + 500
    rt = None
    if rt_col is not None:
        known = {v: seconds_ms(v) for v in set(rt_col)}
        rt = np.fromiter(
            (-1 if (x := known[v]) is None else x for v in rt_col), np.int64, len(rt_col)
        )
    return arrival(ms, bad, rt)


_MONTHS = np.array(
    sorted((ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]) for m in MONTHS), np.int64
)
_MONTH_OF = {(ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]): i + 1 for i, m in enumerate(MONTHS)}
_MONTH_NO = np.array([_MONTH_OF[int(k)] for k in _MONTHS], np.int64)
_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25]
_SEPS = {2: b"/", 6: b"/", 11: b":", 14: b":", 17: b":", 20: b" "}


def local_seconds_array(
    offsets: dict[str, int], col: tuple[bytes, ...], line_at: Callable[[int], int]
) -> Ints:
    """``$time_local`` (``28/Nov/2026:05:01:04 +0100``) to epoch seconds, as arrays; a
    value of another length goes through :func:`local_ms` one at a time."""
    raw = np.array(col, dtype="S")
    secs = np.full(len(col), -1, np.int64)
    if raw.dtype.itemsize != 26:
        raw = np.array(col, dtype="S26")
    fixed = np.char.str_len(np.array(col, dtype="S27")) == 26
    m = raw.view(np.uint8).reshape(-1, 26).astype(np.int64)
    d = m[:, _DIGITS] - 48
    ok = fixed & ((d >= 0) & (d <= 9)).all(axis=1)
    for pos, sep in _SEPS.items():
        ok &= m[:, pos] == sep[0]
    ok &= (m[:, 21] == ord("+")) | (m[:, 21] == ord("-"))
    key = (m[:, 3] << 16) | (m[:, 4] << 8) | m[:, 5]
    at = np.minimum(np.searchsorted(_MONTHS, key), len(_MONTHS) - 1)
    ok &= _MONTHS[at] == key
    mon = _MONTH_NO[at]
    day, year = d[:, 0] * 10 + d[:, 1], d[:, 2] * 1000 + d[:, 3] * 100 + d[:, 4] * 10 + d[:, 5]
    hh, mm, ss = d[:, 6] * 10 + d[:, 7], d[:, 8] * 10 + d[:, 9], d[:, 10] * 10 + d[:, 11]
    oh, om = d[:, 12] * 10 + d[:, 13], d[:, 14] * 10 + d[:, 15]
    ok &= (day >= 1) & (day <= 31) & (hh < 24) & (mm < 60) & (ss <= 60) & (om < 60)
    ok &= oh * 60 + om <= MAX_OFFSET_MIN
    # days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)
    y = year - (mon <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mon + np.where(mon > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    sign = np.where(m[:, 21] == ord("+"), 1, -1)
    got = days * 86400 + hh * 3600 + mm * 60 + ss - sign * (oh * 3600 + om * 60)
    ok &= (got >= 0) & (got <= LATEST)
    secs[ok] = got[ok]
    if ok.any():
        packed = m[:, 21] * (1 << 32) + oh * 100 + om  # sign, hh, mm
        for p in np.unique(packed[ok]).tolist():
            off = f"{chr(p >> 32)}{(p & 0xFFFFFFFF) // 100:02d}{(p & 0xFFFFFFFF) % 100:02d}"
            if off not in offsets:  # its first line: the keys come in line order
                offsets[off] = line_at(int(np.flatnonzero(ok & (packed == p))[0]))
    for i in np.flatnonzero(~fixed).tolist():  # another length: read one at a time
        ms = local_ms(col[i], offsets, line_at(i))
        if ms >= 0:
            secs[i] = ms // 1000
    return secs


def local_ms(value: bytes, offsets: dict[str, int], line: int) -> int:
    """A ``$time_local`` of any length in ms (its second's middle), -1 when it is not
    one; its offset's first line is ``line`` when it is new."""
    try:
        sec, off = local_seconds(value)
    except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
        return -1
    if not in_range(sec):
        return -1
    if off not in offsets:
        offsets[off] = line
    return sec * 1000 + 500


def _to_second(
    offsets: dict[str, int], time: str, cache: Cache, line_at: Callable[[int], int]
) -> Callable[[int, bytes], int | None]:
    """The second of the i-th distinct key's ``$time_iso8601`` (None when not readable),
    cached by value."""
    parse = local_seconds if time == "time_local" else iso_seconds

    def logged(i: int, value: bytes) -> int | None:
        t = (value,)
        sec = cache.get(t)
        if sec is None:
            try:
                sec, off = parse(t[0])
            except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
                return None
            if not in_range(sec):
                return None
            if off not in offsets:
                offsets[off] = line_at(i)
            if len(cache) > 100_000:
                cache.clear()
            cache[t] = sec
        return sec

    return logged
