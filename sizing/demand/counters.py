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
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

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


def _when(text: str) -> float | None:
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        raise _NoOffset
    return when.timestamp()


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
        return "NGINX Plus API", _plus(path, text), state
    kind = "stub_status" if "server accepts handled requests" in text else "Prometheus"
    return kind, _blocks(path, text, kind), state


def _plus(path: Path, text: str) -> list[CounterSample]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            t = _when(str(doc.get("time", doc.get("timestamp"))))
            if t is None:
                raise ValueError("no time")
            values = {}
            req = doc.get("http/requests") or doc.get("requests") or {}
            if "total" in req:
                values["requests"] = float(req["total"])
            conn = doc.get("connections") or {}
            if "accepted" in conn:
                values["accepted"] = float(conn["accepted"])
            ssl = doc.get("ssl") or {}
            if "handshakes" in ssl:
                values["handshakes"] = float(ssl["handshakes"])
                values["reuses"] = float(ssl.get("session_reuses", 0))
        except _NoOffset:
            raise UsageError(f"{path}:{i}: the sample's time has no UTC offset") from None
        except (ValueError, TypeError, AttributeError) as exc:
            # the reason, never the value: a sample's text is the customer's
            why = "not JSON" if isinstance(exc, json.JSONDecodeError) else "no time, or a counter"
            why += "" if why == "not JSON" else " that is not a number"
            raise UsageError(f"{path}:{i}: not an NGINX Plus API sample ({why})") from None
        out.append(CounterSample(t, values))
    return sorted(out, key=lambda s: s.time)


def _blocks(path: Path, text: str, kind: str) -> list[CounterSample]:
    out: list[CounterSample] = []
    stamped: dict[float, dict[str, float]] = {}
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            t = _when(line) if not line.strip().isalpha() else None
        except _NoOffset:
            raise UsageError(f"{path}:{i}: the sample's time has no UTC offset") from None
        if t is not None and len(line.split()) == 1:
            out.append(CounterSample(t, {}))
            continue
        if kind == "stub_status":
            m = _STUB.match(line)
            if m and out:
                out[-1].values.update(accepted=float(m.group(1)), requests=float(m.group(3)))
            continue
        m = _PROM_LINE.match(line)
        if not m or m.group(1) not in _PROM:
            continue
        name = _PROM[m.group(1)]
        if m.group(4):
            d = stamped.setdefault(int(m.group(4)) / 1000, {})
            d[name] = d.get(name, 0.0) + float(m.group(3))
        elif out:
            out[-1].values[name] = out[-1].values.get(name, 0.0) + float(m.group(3))
        else:
            raise UsageError(f"{path}:{i}: a sample before any time line")
    out.extend(CounterSample(t, v) for t, v in stamped.items())
    return sorted((s for s in out if s.values), key=lambda s: s.time)


Series = tuple[Counter[int], float, int]


def rates(series: list[list[CounterSample]], name: str, step: float) -> Series | None:
    """Per interval (keyed by its first second, on the step's grid): the counter's rate
    summed over the series (one per server); the total change and the resets skipped."""
    out: Counter[int] = Counter()
    total, resets, found = 0.0, 0, False
    for samples in series:
        pts = [(s.time, s.values[name]) for s in samples if name in s.values]
        found = found or len(pts) >= 2
        for (t0, v0), (t1, v1) in zip(pts, pts[1:], strict=False):
            if v1 < v0 or t1 <= t0:
                resets += 1
                continue
            key = int(round(t0 / step) * step)
            out[key] += round((v1 - v0) / (t1 - t0), 3)  # type: ignore[assignment]
            total += v1 - v0
    return (out, total, resets) if found else None
