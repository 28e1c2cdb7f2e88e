"""JSON access logs (``log_format NAME escape=json '{...}'``) read by their keys, when no
format is given: a key named as the NGINX variable it holds (``msec``, ``request_time``,
``status``, ``bytes_sent``, ``connection_requests``, ``ssl_session_reused``, ``time_local``,
``time_iso8601``; a ``time`` or ``timestamp`` key is read by its value's shape). One
``json.loads`` per line: slower than a format's pattern, which ``--log-format`` gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sizing.demand.clock import iso_seconds, local_seconds, seconds_ms
from sizing.demand.reader import ReadState, chunks, looks_binary
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


def _second(doc: dict[str, Any], keys: dict[str, str]) -> int:
    if "msec" in keys:
        ms = seconds_ms(str(doc[keys["msec"]]).encode())
        if "request_time" in keys:
            ms -= seconds_ms(str(doc[keys["request_time"]]).encode())
        return ms // 1000
    if "time_iso8601" in keys:
        return iso_seconds(str(doc[keys["time_iso8601"]]).encode())[0]
    return local_seconds(str(doc[keys["time_local"]]).encode())[0]


def scan_json(path: Path) -> FileScan:
    """Read a JSON-lines access log into a tally."""
    scan = FileScan(path, ReadState(path))
    keys: dict[str, str] | None = None
    tally = scan.tally
    for chunk in chunks(path, scan.read):
        for line in chunk.splitlines():
            scan.lines += 1
            where = f"{path}:{scan.lines}"
            try:
                doc = json.loads(line)
                if keys is None:
                    keys = _keymap(doc)
                    scan.variables = frozenset(keys)
                sec = _second(doc, keys)
            except (ValueError, KeyError, TypeError, AttributeError):
                reason = BINARY if looks_binary(line) else "not JSON with a time"
                if not line.strip():
                    reason = "empty line"
                elif keys and line.lstrip().startswith(b"{"):
                    reason = BAD_TIME
                scan.skipped.add(reason, where)
                continue
            get = doc.get
            status = str(get(keys.get("status", ""), ""))[:1].encode() or None
            first = str(get(keys.get("connection_requests", ""), "")) == "1"
            reused = str(get(keys.get("ssl_session_reused", ""), "")).encode() or None
            tally.add(sec, 1, status, first, reused)
            size = get(keys.get("bytes_sent", keys.get("body_bytes_sent", "")))
            if size is not None and str(size).isdigit():
                tally.sizes[size_bucket(int(size))] += 1
            if "request_time" in keys:
                tally.request_ms[seconds_ms(str(doc[keys["request_time"]]).encode())] += 1
    return scan
