"""The curl driver: single-request timing breakdowns (argv builder + pure parser).

The API-gateway article measures the latency a gateway adds to one request with
``curl -w``: name lookup, TCP connect, TLS (``appconnect``), first byte
(``starttransfer``) and total. One curl invocation here makes several transfers in a row
(``--next``), each on a fresh connection (``Connection: close``), and prints one line per
transfer::

    sizing_curl label=direct code=200 namelookup=0.000021 connect=0.000112 ...

curl's times are seconds from the start of the transfer, cumulative (``connect`` includes
the lookup, ``total`` everything); the parser turns them into milliseconds.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from sizing.errors import ToolError, UsageError

__all__ = ["TIMINGS", "CurlParseError", "Transfer", "Timing", "build_argv", "parse", "summary"]

TIMINGS = ("namelookup", "connect", "appconnect", "pretransfer", "starttransfer", "total")
_FORMAT = (
    "sizing_curl label=LABEL code=%{http_code} "
    + " ".join(f"{t}=%{{time_{t}}}" for t in TIMINGS)
    + "\\n"
)


class CurlParseError(ToolError):
    """curl printed no timing line for a transfer the run asked for."""


@dataclass(frozen=True)
class Transfer:
    """One request: a label to find it by, the URL, extra headers, and where the body goes
    (``None``: discarded; ``"-"``: to stdout, after the timing line of the previous)."""

    label: str
    url: str
    headers: tuple[str, ...] = ()
    body_to_stdout: bool = False


def build_argv(
    transfers: Sequence[Transfer], *, curl: str = "curl", timeout_s: float = 10
) -> list[str]:
    """One curl argv making ``transfers`` in order, each on a new connection."""
    if not transfers:
        raise UsageError("curl needs at least one transfer")
    argv = [curl]
    for i, t in enumerate(transfers):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", t.label):
            raise UsageError(f"curl transfer label must be a plain word, not {t.label!r}")
        if not t.url.startswith(("http://", "https://")):
            raise UsageError(f"curl URL must start with http:// or https://, not {t.url!r}")
        if i:
            argv.append("--next")
        argv += ["-s", "-k", "--max-time", f"{timeout_s:g}", "-H", "Connection: close"]
        for h in t.headers:
            if "\r" in h or "\n" in h or ":" not in h:
                raise UsageError(f"not a single HTTP header line 'Name: value': {h!r}")
            argv += ["-H", h]
        if not t.body_to_stdout:
            argv += ["-o", "/dev/null"]
        fmt = ("\\n" if t.body_to_stdout else "") + _FORMAT.replace("LABEL", t.label, 1)
        argv += ["-w", fmt, t.url]
    return argv


@dataclass(frozen=True)
class Timing:
    """One transfer's timing breakdown (ms, cumulative from its start) and status."""

    label: str
    code: int
    ms: dict[str, float]


_LINE = re.compile(r"^sizing_curl label=(\S+) code=(\d+) (.*)$")


def parse(text: str) -> list[Timing]:
    """Every timing line of curl's stdout, in order; raises when there is none."""
    out: list[Timing] = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(3).split())
        try:
            ms = {t: float(fields[t].replace(",", ".")) * 1000.0 for t in TIMINGS}
        except (KeyError, ValueError) as exc:
            raise CurlParseError(f"curl timing line is malformed: {line.strip()!r}") from exc
        out.append(Timing(m.group(1), int(m.group(2)), ms))
    if not out:
        raise CurlParseError("curl printed no timing line (did it run?)")
    return out


def summary(timings: Sequence[Timing], label: str) -> dict[str, float]:
    """The median of each timing over the transfers labelled ``label`` (ms)."""
    picked = [t for t in timings if t.label == label and 200 <= t.code < 400]
    if not picked:
        raise CurlParseError(f"no successful curl transfer labelled {label!r}")
    return {k: statistics.median(t.ms[k] for t in picked) for k in TIMINGS}
