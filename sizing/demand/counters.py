"""Demand from counters scraped over time: ``stub_status`` pages, the NGINX Plus API
(``/api/N/http/requests``, ``/api/N/connections``, ``/api/N/ssl``) and the Prometheus
text of nginx-prometheus-exporter, given as files of timestamped samples.

- stub_status and Prometheus text: a line holding only a time (epoch seconds, or ISO 8601)
  starts a sample, the page scraped then follows (``while :; do date +%s; curl -s
  http://127.0.0.1/nginx_status; sleep 1; done``). A Prometheus sample may carry its own
  timestamp (milliseconds) instead.
- NGINX Plus: JSON lines, each ``{"time": ..., "http/requests": {...}, "connections":
  {...}, "ssl": {...}}``: the API's answers at that time.

The rates are the counters' differences over each interval: a peak shorter than the scrape
interval is averaged away, and the demand says so.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sizing.demand.clock import in_range
from sizing.demand.reader import ReadState, chunks
from sizing.errors import UsageError

FIELDS = ("requests", "accepted", "handshakes", "reuses")
_PROM = {
    "nginx_http_requests_total": "requests",
    "nginxplus_http_requests_total": "requests",
    "nginx_connections_accepted": "accepted",
    "nginxplus_connections_accepted": "accepted",
    "nginxplus_ssl_handshakes": "handshakes",
    "nginxplus_ssl_session_reuses": "reuses",
}
_PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+(\d+))?\s*$")
_STUB = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s*$")


@dataclass
class CounterSample:
    time: float
    values: dict[str, float]
    line: int = 0  # where the sample's time was read


def _when(text: str) -> float | None:
    text = text.strip()
    try:
        t = float(text)
    except ValueError:
        pass
    else:
        # NaN, infinities and times before 1970 or past 9999 are no time
        return t if math.isfinite(t) and in_range(int(t)) else None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        raise _NoOffset
    return when.timestamp() if in_range(int(when.timestamp())) else None


def _value(text: object) -> float | None:
    """A counter's value, or None when it is not a finite number (Prometheus writes
    ``NaN`` and ``+Inf``; no counter of requests is either)."""
    v = float(text)  # type: ignore[arg-type]
    return v if math.isfinite(v) and v >= 0 else None


def _merged(path: Path, samples: list[CounterSample], state: ReadState) -> list[CounterSample]:
    """The samples in time order, those taken at the same time merged into one (the
    later's values win): two at one time have no interval between them."""
    out: list[CounterSample] = []
    same = 0
    for s in sorted(samples, key=lambda s: s.time):
        if out and out[-1].time == s.time:
            out[-1].values.update(s.values)
            same += 1
        else:
            out.append(s)
    if same:
        state.notes.append(
            f"{path}: {same} sample(s) at the same time as the one before, merged into it"
        )
    return out


class _NoOffset(ValueError):
    """A sample's ISO 8601 time without a UTC offset: which second it was is unknown."""


def _text(path: Path) -> tuple[str, ReadState]:
    state = ReadState(path)
    text = b"".join(chunks(path, state)).decode("utf-8", "replace")
    return text, state


def parse_samples(path: Path) -> tuple[str, list[CounterSample], ReadState]:
    """The kind of counters a file holds and its samples in time order."""
    text, state = _text(path)
    head = text.lstrip()[:1]
    if head == "{":
        return "NGINX Plus API", _merged(path, _plus(path, text, state), state), state
    kind = "stub_status" if "server accepts handled requests" in text else "Prometheus"
    return kind, _merged(path, _blocks(path, text, kind, state), state), state


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line and its number, as an editor counts them: split at ``\n`` alone
    (``str.splitlines`` also splits at a form feed, ``\x1c`` to ``\x1e``, NEL and the
    Unicode separators, and a note would name the wrong line); a ``\r`` before it is
    dropped."""
    for i, line in enumerate(text.split("\n"), 1):
        yield i, line.removesuffix("\r")


def _bad_value(state: ReadState, path: Path, line: int) -> None:
    if not any("not a finite number" in n for n in state.notes):
        state.notes.append(
            f"{path}:{line}: a counter value that is not a finite number (NaN, an"
            " infinity or negative) left out"
        )


def _plus(path: Path, text: str, state: ReadState) -> list[CounterSample]:
    out = []
    for i, line in _lines(text):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            t = _when(str(doc.get("time", doc.get("timestamp"))))
            if t is None:
                raise ValueError("no time")
            got: dict[str, float | None] = {}
            req = doc.get("http/requests") or doc.get("requests") or {}
            if "total" in req:
                got["requests"] = _value(req["total"])
            conn = doc.get("connections") or {}
            if "accepted" in conn:
                got["accepted"] = _value(conn["accepted"])
            ssl = doc.get("ssl") or {}
            if "handshakes" in ssl:
                got["handshakes"] = _value(ssl["handshakes"])
                got["reuses"] = _value(ssl.get("session_reuses", 0))
            values = {k: v for k, v in got.items() if v is not None}
            if len(values) < len(got):
                _bad_value(state, path, i)
        except _NoOffset:
            raise UsageError(f"{path}:{i}: the sample's time has no UTC offset") from None
        except (ValueError, TypeError, AttributeError) as exc:
            # the reason, never the value: a sample's text is the customer's
            why = "not JSON" if isinstance(exc, json.JSONDecodeError) else "no time, or a counter"
            why += "" if why == "not JSON" else " that is not a number"
            raise UsageError(f"{path}:{i}: not an NGINX Plus API sample ({why})") from None
        out.append(CounterSample(t, values, i))
    return out


def _blocks(path: Path, text: str, kind: str, state: ReadState) -> list[CounterSample]:
    out: list[CounterSample] = []
    stamped: dict[float, dict[str, float]] = {}
    for i, line in _lines(text):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            t = _when(line) if not line.strip().isalpha() else None
        except _NoOffset:
            raise UsageError(f"{path}:{i}: the sample's time has no UTC offset") from None
        if t is not None and len(line.split()) == 1:
            out.append(CounterSample(t, {}, i))
            continue
        if len(line.split()) == 1 and line.strip().lstrip("+-").replace(".", "").isdigit():
            raise UsageError(f"{path}:{i}: a sample time before 1970 or past 9999")
        if kind == "stub_status":
            m = _STUB.match(line)
            if m and out:
                out[-1].values.update(accepted=float(m.group(1)), requests=float(m.group(3)))
            continue
        m = _PROM_LINE.match(line)
        if not m or m.group(1) not in _PROM:
            continue
        name = _PROM[m.group(1)]
        try:
            value = _value(m.group(3))
        except ValueError:
            value = None
        if value is None:
            _bad_value(state, path, i)
            continue
        if m.group(4):
            when = int(m.group(4)[:16]) / 1000
            if not in_range(int(when)):
                raise UsageError(f"{path}:{i}: a sample timestamp before 1970 or past 9999")
            d = stamped.setdefault(when, {})
            d[name] = d.get(name, 0.0) + value
        elif out:
            out[-1].values[name] = out[-1].values.get(name, 0.0) + value
        else:
            raise UsageError(f"{path}:{i}: a sample before any time line")
    out.extend(CounterSample(t, v) for t, v in stamped.items())
    kept = [s for s in out if s.values]
    if len(kept) < len(out):  # a time line whose page held no counter that could be read
        state.notes.append(
            f"{path}: {len(out) - len(kept)} sample(s) with no readable counter (a page cut"
            f" short, or a value that is not a whole number) left out"
        )
    return kept


Series = tuple[Counter[int], float, int]


MAX_RATE = 1e12  # per second: above any server's (a counter this steep is damaged or wrapped)


def _bad_intervals(samples: list[CounterSample]) -> set[float]:
    """The start times of the intervals in which any counter went down (a restart) or the
    time did not move: left out of every counter's rates alike, so that requests and
    connections cover the same intervals (one skipped for requests alone made requests per
    connection fall below 1)."""
    bad: set[float] = set()
    for a, b in zip(samples, samples[1:], strict=False):
        dt = b.time - a.time
        if dt <= 0 or any(
            name in b.values and not 0 <= b.values[name] - v <= MAX_RATE * dt
            for name, v in a.values.items()
        ):
            bad.add(a.time)
    return bad


def rates(series: list[list[CounterSample]], name: str, step: float) -> Series | None:
    """Per interval (keyed by its first second, on the step's grid): the counter's rate
    summed over the series (one per server); the total change and the intervals skipped
    (a counter went down, in any of the counters; or a rate above :data:`MAX_RATE`)."""
    out: Counter[int] = Counter()
    total, resets, found = 0.0, 0, False
    for samples in series:
        bad = _bad_intervals(samples)
        pts = [(s.time, s.values[name]) for s in samples if name in s.values]
        found = found or len(pts) >= 2
        for (t0, v0), (t1, v1) in zip(pts, pts[1:], strict=False):
            if t0 in bad or v1 < v0 or t1 <= t0 or (v1 - v0) / (t1 - t0) > MAX_RATE:
                resets += 1
                continue
            key = int(round(t0 / step) * step)
            out[key] += round((v1 - v0) / (t1 - t0), 3)  # type: ignore[assignment]
            total += v1 - v0
    return (out, total, resets) if found else None
