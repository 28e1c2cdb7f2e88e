"""JSON access logs (``log_format NAME escape=json '{...}'``) read by their keys, when no
format is given: a key named as the NGINX variable it holds (``msec``, ``request_time``,
``status``, ``bytes_sent``, ``connection_requests``, ``ssl_session_reused``, ``time_local``,
``time_iso8601``; a ``time`` or ``timestamp`` key is read by its value's shape). One
``json.loads`` per line: slower than a format's pattern, which ``--log-format`` gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sizing.demand.clock import in_range, iso_seconds, local_seconds, seconds_ms
from sizing.demand.reader import LONG_LINE, TOO_LONG, ReadState, chunks, looks_binary
from sizing.demand.scan import BAD_TIME, BINARY, FileScan
from sizing.demand.tally import size_bucket

_KNOWN = (
    "msec",
    "request_time",
    "status",
    "bytes_sent",
    "body_bytes_sent",
    "connection_requests",
    "ssl_session_reused",
    "time_local",
    "time_iso8601",
)
_TIME_ALIASES = ("time", "timestamp", "@timestamp", "ts")


def _keymap(doc: dict[str, Any]) -> dict[str, str]:
    """Variable name -> the key that holds it in this log."""
    found = {k.lower().lstrip("$"): k for k in doc}
    out = {v: found[v] for v in _KNOWN if v in found}
    if not {"msec", "time_local", "time_iso8601"} & out.keys():
        for alias in _TIME_ALIASES:
            if alias in found:
                value = str(doc[found[alias]])
                var = "time_local" if "/" in value else "time_iso8601" if "T" in value else "msec"
                out[var] = found[alias]
                break
    return out


def _ms(value: Any) -> int:
    """A JSON value holding seconds (``"0.123"`` or ``0.123``) in ms; ValueError if not."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("not a number")
    ms = seconds_ms(str(value).encode())
    if ms is None:
        raise ValueError("not a number")
    return ms


def _second(doc: dict[str, Any], keys: dict[str, str]) -> int:
    """The second the request arrived: the logged time (when the response ended) less
    ``$request_time`` when it is logged; a whole-second time's middle, as scan.py does."""
    if "msec" in keys:
        ms = _ms(doc[keys["msec"]])
    elif "time_iso8601" in keys:
        ms = iso_seconds(str(doc[keys["time_iso8601"]]).encode())[0] * 1000 + 500
    else:
        ms = local_seconds(str(doc[keys["time_local"]]).encode())[0] * 1000 + 500
    if "request_time" in keys:
        ms -= _ms(doc[keys["request_time"]])
    sec = ms // 1000
    if not in_range(sec):
        raise ValueError("not a time")
    return sec


def scan_json(path: Path) -> FileScan:
    """Read a JSON-lines access log into a tally."""
    scan = FileScan(path, ReadState(path))
    keys: dict[str, str] | None = None
    tally = scan.tally
    for chunk in chunks(path, scan.read):
        lines = chunk.split(b"\n")
        if chunk.endswith(b"\n"):
            lines.pop()  # after the chunk's last newline: not a line
        for line in lines:
            scan.lines += 1
            where = f"{path}:{scan.lines}"
            if line == LONG_LINE:
                scan.skipped.add(TOO_LONG, where)
                continue
            try:
                doc = json.loads(line)
                if not isinstance(doc, dict):
                    raise TypeError("not an object")
                if keys is None:
                    keys = _keymap(doc)
                    scan.variables = frozenset(keys)
                sec = _second(doc, keys)
            # RecursionError: a line of thousands of nested [ (json recurses per level)
            except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError):
                reason = BINARY if looks_binary(line) else "not JSON with a time"
                if not line.strip():
                    reason = "empty line"
                elif keys and line.lstrip().startswith(b"{"):
                    reason = BAD_TIME
                scan.skipped.add(reason, where)
                continue
            get = doc.get
            status = str(get(keys.get("status", ""), ""))[:1].encode() or None
            conn = str(get(keys.get("connection_requests", ""), ""))
            reused = str(get(keys.get("ssl_session_reused", ""), "")).encode() or None
            if "ssl_session_reused" in keys and reused is None:
                reused = b""
            tally.add(sec, 1, status, conn == "1", reused)
            if conn.isdigit() and conn.isascii():
                tally.add_conn(int(conn[:10]), 1)
            if tally.is_edge(sec):
                tally.add_edge(sec, where)
            size = get(keys.get("bytes_sent", keys.get("body_bytes_sent", "")))
            text = str(size)
            if size is not None and text.isdigit() and text.isascii() and len(text) < 19:
                tally.sizes[size_bucket(int(text))] += 1
                tally.bytes_sent += int(text)
            if "request_time" in keys:
                try:
                    tally.request_ms[_ms(doc[keys["request_time"]])] += 1
                except ValueError:
                    pass
    return scan
