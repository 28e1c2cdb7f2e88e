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
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sizing.demand.clock import in_range, offset_ok
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
class Samples:
    """A file's samples as columns (one row a sample, in time order once merged): the
    time, the line its time was read at (0: a Prometheus sample's own timestamp) and each
    counter's value (NaN where the sample does not hold that counter). Eight bytes a
    value: a million samples take 48 MB, not the 800 MB of an object each."""

    time: npt.NDArray[np.float64]
    line: npt.NDArray[np.int64]
    values: dict[str, npt.NDArray[np.float64]]

    def __len__(self) -> int:
        return len(self.time)

    def take(self, rows: npt.NDArray[np.intp] | npt.NDArray[np.bool_]) -> Samples:
        return Samples(
            self.time[rows], self.line[rows], {k: v[rows] for k, v in self.values.items()}
        )


class _Columns:
    """Samples as they are read, one row at a time, into arrays (no object per sample); a
    counter's column is made when the first sample holding it is read."""

    def __init__(self) -> None:
        self.time, self.line = array("d"), array("q")
        self.values: dict[str, array[float]] = {}

    def add(self, t: float, values: dict[str, float], line: int) -> None:
        n = len(self.time)
        self.time.append(t)
        self.line.append(line)
        for f, v in values.items():
            col = self.values.get(f)
            if col is None:
                col = self.values[f] = array("d", [math.nan]) * n
            col.append(v)
        if len(values) < len(self.values):
            for col in self.values.values():
                if len(col) == n:
                    col.append(math.nan)

    def samples(self) -> Samples:
        return Samples(
            np.frombuffer(self.time, np.float64),
            np.frombuffer(self.line, np.int64),
            {f: np.frombuffer(self.values[f], np.float64) for f in FIELDS if f in self.values},
        )


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
    if not offset_ok(when):  # past UTC+-14:00: a garbled time, not a clock's
        raise _FarOffset
    return when.timestamp() if in_range(int(when.timestamp())) else None


def _value(text: object) -> float | None:
    """A counter's value, or None when it is not a finite number (Prometheus writes
    ``NaN`` and ``+Inf``; no counter of requests is either)."""
    v = float(text)  # type: ignore[arg-type]
    return v if math.isfinite(v) and v >= 0 else None


def _merged(path: Path, samples: Samples, state: ReadState) -> Samples:
    """The samples in time order, those taken at the same time merged into one (the
    later's values win, counter by counter): two at one time have no interval between
    them."""
    n = len(samples)
    if n < 2 or bool((np.diff(samples.time) > 0).all()):
        return samples  # in time order, no two at one time (as scraped): nothing to do
    s = samples.take(np.argsort(samples.time, kind="stable"))
    starts = np.flatnonzero(np.r_[True, np.diff(s.time) != 0])
    if len(starts) == n:
        return s
    rows = np.arange(n)
    values = {}
    for name, col in s.values.items():  # each counter: the group's last value held
        last = np.maximum.reduceat(np.where(np.isnan(col), -1, rows), starts)
        values[name] = np.where(last >= 0, col[np.maximum(last, 0)], math.nan)
    state.notes.append(
        f"{path}: {n - len(starts)} sample(s) at the same time as the one before, merged into it"
    )
    return Samples(s.time[starts], s.line[starts], values)


class _NoOffset(ValueError):
    """A sample's ISO 8601 time without a UTC offset: which second it was is unknown."""

    why = "the sample's time has no UTC offset"


class _FarOffset(_NoOffset):
    """A sample's ISO 8601 time with an offset no clock is set to (past UTC+-14:00)."""

    why = "the sample's time has a UTC offset past +-14:00"


_STUB_PAGE = b"server accepts handled requests"


def _kind(path: Path) -> str:
    """What a file holds, from a first pass over it (chunk by chunk: bounded): NGINX Plus
    API answers when it starts with ``{``; stub_status when a page's header is anywhere in
    it; else Prometheus text."""
    head = ""
    stub = False
    for chunk in chunks(path, ReadState(path)):
        if not head:
            head = chunk.decode("utf-8", "replace").lstrip()[:1]
            if head == "{":
                return "NGINX Plus API"
        if _STUB_PAGE in chunk:  # a chunk ends at a newline: the header is never cut
            stub = True
            if head:
                break
    return "stub_status" if stub else "Prometheus"


def parse_samples(path: Path) -> tuple[str, Samples, ReadState]:
    """The kind of counters a file holds and its samples in time order. The file is read
    twice, a chunk at a time (what it holds, then its samples): the memory is the
    samples' columns, never the file's text or an object per line."""
    kind = _kind(path)
    state = ReadState(path)
    if kind == "NGINX Plus API":
        return kind, _merged(path, _plus(path, state), state), state
    return kind, _merged(path, _blocks(path, kind, state), state), state


def _lines(path: Path, state: ReadState) -> Iterator[tuple[int, str]]:
    """Each line and its number, as an editor counts them: split at ``\n`` alone
    (``str.splitlines`` also splits at a form feed, ``\x1c`` to ``\x1e``, NEL and the
    Unicode separators, and a note would name the wrong line); a ``\r`` before it is
    dropped. Streamed: a chunk of whole lines at a time."""
    i = 0
    for chunk in chunks(path, state):
        lines = chunk.decode("utf-8", "replace").split("\n")
        if chunk.endswith(b"\n"):
            lines.pop()  # after the chunk's last newline: not a line
        for line in lines:
            i += 1
            yield i, line.removesuffix("\r")


def _bad_value(state: ReadState, path: Path, line: int) -> None:
    if not any("not a finite number" in n for n in state.notes):
        state.notes.append(
            f"{path}:{line}: a counter value that is not a finite number (NaN, an"
            " infinity or negative) left out"
        )


def _plus(path: Path, state: ReadState) -> Samples:
    out = _Columns()
    for i, line in _lines(path, state):
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
        except _NoOffset as exc:
            raise UsageError(f"{path}:{i}: {exc.why}") from None
        except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
            # the reason, never the value: a sample's text is the customer's. OverflowError:
            # an integer too large for a float; RecursionError: thousands of nested [
            bad_json = isinstance(exc, (json.JSONDecodeError, RecursionError))
            why = "not JSON" if bad_json else "no time, or a counter"
            why += "" if why == "not JSON" else " that is not a number"
            raise UsageError(f"{path}:{i}: not an NGINX Plus API sample ({why})") from None
        out.add(t, values, i)
    return out.samples()


_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")


def _blocks(path: Path, kind: str, state: ReadState) -> Samples:
    out = _Columns()
    # samples with their own timestamp: (time, counter, value) in file order, summed per
    # time and counter at the end
    stamps, which, amounts = array("d"), array("b"), array("d")
    cur: dict[str, float] | None = None  # the page after the last time line
    cur_line, empty = 0, 0

    def close() -> None:
        nonlocal empty
        if cur is not None:
            if cur:
                out.add(cur_t, cur, cur_line)
            else:  # a time line whose page held no counter that could be read
                empty += 1

    cur_t = 0.0
    for i, line in _lines(path, state):
        bare = line.strip()
        if not bare or line.startswith("#"):
            continue
        try:
            # a line that starts as a metric's name is no time (float and ISO 8601 need a
            # digit or a sign first; "nan" and "inf" alone are letters only, never read)
            t = None if bare[0] in _NAME_START or bare.isalpha() else _when(line)
        except _NoOffset as exc:
            raise UsageError(f"{path}:{i}: {exc.why}") from None
        one = " " not in bare and len(bare.split()) == 1
        if t is not None and one:
            close()
            cur, cur_t, cur_line = {}, t, i
            continue
        if one and bare.lstrip("+-").replace(".", "").isdigit():
            raise UsageError(f"{path}:{i}: a sample time before 1970 or past 9999")
        if kind == "stub_status":
            m = _STUB.match(line)
            if m and cur is not None:
                cur.update(accepted=float(m.group(1)), requests=float(m.group(3)))
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
            stamps.append(when)
            which.append(FIELDS.index(name))
            amounts.append(value)
        elif cur is not None:
            cur[name] = cur.get(name, 0.0) + value
        else:
            raise UsageError(f"{path}:{i}: a sample before any time line")
    close()
    if empty:
        state.notes.append(
            f"{path}: {empty} sample(s) with no readable counter (a page cut"
            f" short, or a value that is not a whole number) left out"
        )
    return _joined(out.samples(), stamps, which, amounts)


def _joined(
    got: Samples, stamps: array[float], which: array[int], amounts: array[float]
) -> Samples:
    """The samples after time lines, then those with their own timestamps."""
    if not stamps:
        return got
    more = _stamped(stamps, which, amounts)

    def col(s: Samples, f: str) -> npt.NDArray[np.float64]:
        return s.values.get(f, np.full(len(s), math.nan))

    return Samples(
        np.concatenate([got.time, more.time]),
        np.concatenate([got.line, more.line]),
        {
            f: np.concatenate([col(got, f), col(more, f)])
            for f in FIELDS
            if f in got.values or f in more.values
        },
    )


def _stamped(stamps: array[float], which: array[int], amounts: array[float]) -> Samples:
    """One sample per timestamp, in the order the timestamps were first met, each counter
    the sum of its values at that time (in file order, as a running sum)."""
    when = np.frombuffer(stamps, np.float64)
    uniq, first, inv = np.unique(when, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    row = rank[inv]
    field = np.frombuffer(which, np.int8)
    value = np.frombuffer(amounts, np.float64)
    values = {}
    for k, f in enumerate(FIELDS):
        mine = field == k
        if mine.any():
            col = np.full(len(uniq), math.nan)
            held = np.zeros(len(uniq), np.bool_)
            held[row[mine]] = True
            sums = np.zeros(len(uniq))
            np.add.at(sums, row[mine], value[mine])
            col[held] = sums[held]
            values[f] = col
    return Samples(uniq[order], np.zeros(len(uniq), np.int64), values)
