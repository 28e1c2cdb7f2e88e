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

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}


def local_seconds(text: bytes) -> tuple[int, str]:
    """Epoch seconds and the UTC offset of a ``$time_local``; ValueError if not one."""
    s = text.decode("ascii")
    day, mon, rest = s.split("/", 2)
    year, hh, mm, ss_off = rest.split(":", 3)
    ss, off = ss_off.split(" ")
    if len(off) != 5 or off[0] not in "+-":
        raise ValueError(s)
    base = calendar.timegm((int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), 0, 0, 0))
    sign = 1 if off[0] == "+" else -1
    shift = sign * (int(off[1:3]) * 3600 + int(off[3:5]) * 60)
    return base - shift, off


def iso_seconds(text: bytes) -> tuple[int, str]:
    """Epoch seconds and the UTC offset of a ``$time_iso8601``; ValueError if not one."""
    s = text.decode("ascii")
    when = datetime.fromisoformat(s)
    if when.tzinfo is None:
        raise ValueError(s)
    off = s[19:].replace(":", "") or "+0000"
    return int(when.timestamp()), "+0000" if off == "Z" else off


def seconds_ms(text: bytes) -> int:
    """``$request_time`` (``0.123``) in whole milliseconds."""
    whole, _, frac = text.partition(b".")
    return int(whole or b"0") * 1000 + int((frac + b"000")[:3])
