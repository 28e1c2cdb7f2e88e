"""Logged times to epoch seconds, and the arrival second.

``$time_local`` (``28/Nov/2026:05:01:04 +0100``) and ``$time_iso8601`` carry their UTC
offset: each is read with its own, so a log that crosses a DST change or a timezone change
keeps its seconds in order (the change is reported, not corrected). ``$msec`` is epoch
seconds with milliseconds; with ``$request_time`` the arrival is ``$msec − $request_time``
to the millisecond.
"""

from __future__ import annotations

import calendar
from datetime import datetime

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {m: i + 1 for i, m in enumerate(MONTHS)}


# The widest UTC offset a clock is set to: UTC+14:00 (Kiribati), UTC-12:00 the other way.
# A wider one (``-2400``, ``+9900``: a garbled digit) is no time: read, it moved requests
# days away and stretched the span, the average and the percentiles with them.
MAX_OFFSET_MIN = 14 * 60


def local_seconds(text: bytes) -> tuple[int, str]:
    """Epoch seconds and the UTC offset of a ``$time_local``; ValueError if not one."""
    s = text.decode("ascii")
    day, mon, rest = s.split("/", 2)
    year, hh, mm, ss_off = rest.split(":", 3)
    ss, off = ss_off.split(" ")
    if len(off) != 5 or off[0] not in "+-" or not off[1:].isdigit():
        raise ValueError(s)
    if int(off[1:3]) * 60 + int(off[3:5]) > MAX_OFFSET_MIN or int(off[3:5]) >= 60:
        raise ValueError(s)
    base = calendar.timegm((int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), 0, 0, 0))
    sign = 1 if off[0] == "+" else -1
    shift = sign * (int(off[1:3]) * 3600 + int(off[3:5]) * 60)
    return base - shift, off


def iso_seconds(text: bytes) -> tuple[int, str]:
    """Epoch seconds and the UTC offset of a ``$time_iso8601``; ValueError if not one."""
    s = text.decode("ascii")
    when = datetime.fromisoformat(s)
    if when.tzinfo is None or not offset_ok(when):
        raise ValueError(s)
    off = s[19:].replace(":", "") or "+0000"
    return int(when.timestamp()), "+0000" if off == "Z" else off


def offset_ok(when: datetime) -> bool:
    """Whether an aware time's UTC offset is one a clock is set to (within 14 hours)."""
    off = when.utcoffset()
    return off is not None and abs(off.total_seconds()) <= MAX_OFFSET_MIN * 60


# The seconds a logged time may name: 1970 to the end of 9999 (what ISO 8601 can write).
# A time outside is not readable; a time inside but far from the rest is an outlier.
LATEST = 253_402_300_799
_DIGITS = 12  # whole seconds: 12 digits reach past 9999; more is not a time


def in_range(sec: int) -> bool:
    """Whether an epoch second can be a logged time (1970 to 9999)."""
    return 0 <= sec <= LATEST


def msec_ms(whole: bytes, frac: bytes) -> int | None:
    """``$msec`` (its seconds and fraction) in milliseconds; None past 12 digits."""
    if len(whole) > _DIGITS:
        return None
    return int(whole) * 1000 + int((frac + b"00")[:3])


def seconds_ms(text: bytes) -> int | None:
    """``$request_time`` (``0.123``) in whole milliseconds; None when it is not one or
    has more than 12 digits of seconds."""
    whole, _, frac = text.partition(b".")
    if len(whole) > _DIGITS or not (whole or frac):
        return None
    # digits only, as NGINX writes it: int() also reads "-5", "+5", " 5" and "1_0", which
    # a JSON log's value can hold (a negative time moved the arrival later)
    if not (whole.isdigit() or not whole) or not (frac.isdigit() or not frac):
        return None
    try:
        return int(whole or b"0") * 1000 + int((frac + b"000")[:3])
    except ValueError:
        return None
