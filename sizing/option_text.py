"""The values the options are typed in, parsed: a latency objective (``--slo p95=10ms``),
a latency limit (``recommend --p95 10ms``), a duration (``--soak 10m``) and a list of rates
(``--rates 1000:10000:1000``). Pure; a bad value is one clear :class:`UsageError` line
naming the option."""

from __future__ import annotations

import math
import re

from sizing.errors import UsageError
from sizing.knee import STATS, Slo

__all__ = ["MAX_RATE", "parse_duration_s", "parse_limit_ms", "parse_rates", "parse_slo"]


_SLO_RE = re.compile(r"^\s*(mean|p50|p90|p95|p99|max)\s*(?:=|<=)\s*(\d+(?:\.\d+)?)\s*(us|ms|s)\s*$")
_UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_slo(text: str) -> Slo:
    """``p95=10ms`` (or ``p99<=1.5s``, ``mean=800us``) -> :class:`Slo`."""
    m = _SLO_RE.match(text.lower())
    if m is None:
        raise UsageError(
            f"--slo: {text!r} is not an objective like p95=10ms "
            f"(statistics: {', '.join(STATS)}; units us, ms, s)"
        )
    limit = float(m.group(2)) * _UNIT_MS[m.group(3)]
    if limit <= 0:
        raise UsageError(f"--slo: the limit must be positive, not {text!r}")
    return Slo(m.group(1), limit)


def parse_limit_ms(text: str, option: str) -> float:
    """``10ms`` / ``0.5s`` / ``800us`` -> milliseconds (``recommend --p95``)."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s)?\s*$", text.lower())
    if m is None or float(m.group(1)) <= 0:
        raise UsageError(f"{option}: {text!r} is not a latency like 10ms, 0.5s or 800us")
    return float(m.group(1)) * _UNIT_MS[m.group(2) or "ms"]


def parse_duration_s(text: str, option: str) -> float:
    """``90s`` / ``10m`` / ``2h`` / ``300`` (seconds) -> seconds (``--soak``)."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$", text.lower())
    if m is None or float(m.group(1)) <= 0:
        raise UsageError(f"{option}: {text!r} is not a duration like 90s, 10m or 2h")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2) or "s"]


MAX_RATE = 100_000_000  # requests/s: far above what one load generator host offers


def _finite_rate(text: str) -> float:
    """A rate as typed: a finite number no larger than :data:`MAX_RATE` (``inf``, ``nan``
    and ``1e300`` are refused, never rounded into an overflow)."""
    v = float(text)
    if not math.isfinite(v) or abs(v) > MAX_RATE:
        raise ValueError(text)
    return v


def parse_rates(text: str) -> tuple[int, ...]:
    """``1000:10000:1000`` (start:stop:step, inclusive) or ``500,1000,2000`` -> rates."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [_finite_rate(p) for p in text.split(":")]
            if len(parts) != 3:
                raise ValueError
            start, stop, step = parts
            if start < 1 or step <= 0 or stop < start:
                raise ValueError
            n = math.floor((stop - start) / step + 1e-9) + 1
            if n > 1000:
                raise UsageError(f"--rates: {text!r} gives {n} rates; 1000 at most")
            rates = [round(start + i * step) for i in range(n)]
        else:
            rates = [round(_finite_rate(p)) for p in text.split(",") if p.strip()]
            if not rates or min(rates) < 1:
                raise ValueError
    except (ValueError, OverflowError):
        raise UsageError(
            f"--rates: {text!r} is not START:STOP:STEP (e.g. 1000:10000:1000) or a list "
            f"of rates of at least 1 and at most {MAX_RATE:,} requests/s"
        ) from None
    return tuple(sorted(set(rates)))
