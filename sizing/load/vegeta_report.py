"""vegeta's binary and reports, shared by the two generators that run it: ``vegeta`` (open
loop, :mod:`sizing.load.vegeta`) and ``vegeta-replay`` (closed loop over a target list,
:mod:`sizing.load.replay`). Neither imports the other; both import this.

``vegeta report -type=json`` gives counts, rates, the mean and percentiles (all in
nanoseconds), ``report -type=hdrplot`` the latency distribution at a fine percentile grid;
:func:`parse` reads them into a :class:`~sizing.load.result.LoadResult`. Pure, no I/O.
"""

from __future__ import annotations

import json
import re

from sizing.errors import ToolError
from sizing.load.base import ToolBuild
from sizing.load.result import LoadResult

__all__ = ["BUILT", "VERSION", "VegetaParseError", "parse", "parse_hdrplot"]

VERSION = "v12.12.0"  # scripts/install-vegeta
# scripts/install-vegeta builds it (a static binary), vegeta.yml copies it to the clients
BUILT = ToolBuild(
    binary="vegeta",
    playbook="vegeta.yml",
    extravar="sizing_vegeta_binary",
    needs="Go >= 1.22",
    time_words="about a minute",
    # the fewest is none: Go's build cache, when it holds it, makes the build 0.5 s (37 s
    # with only the module cache, about a minute cold; measured on 2 cores)
    seconds=(0.0, 90.0),
    bg_job="go-tools",
    cost_words="about a minute cold, a second when Go's caches or the machine's copy hold it",
)


class VegetaParseError(ToolError):
    """vegeta's report lacks a figure the run needs (vegeta failed, or the text is cut)."""


_NS_PER_MS = 1e6
_PERCENTILES = {"50th": 50.0, "90th": 90.0, "95th": 95.0, "99th": 99.0}
_HDR_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+)\s+(\S+)\s*$")


def parse_hdrplot(text: str) -> tuple[tuple[float, float], ...]:
    """(percentile 0-100, ms) pairs of ``report -type=hdrplot``; raises when none."""
    out: list[tuple[float, float]] = []
    for line in text.splitlines():
        m = _HDR_LINE.match(line)
        if m:
            out.append((float(m.group(2)) * 100.0, float(m.group(1))))
    if not out:
        raise VegetaParseError("vegeta hdrplot report has no 'Value Percentile' lines")
    return tuple(out)


def parse(json_text: str, hdrplot_text: str | None = None) -> LoadResult:
    """Parse ``vegeta report -type=json`` (and optionally ``-type=hdrplot``).

    ``rate`` is the rate requests were really sent at; ``throughput`` vegeta's rate of
    successful responses over the attack and the wait for the last ones. Status code 0 (a
    transport error or a timeout: no answer) is counted in ``errors`` as ``transport``,
    other codes outside 2xx/3xx in ``non_2xx_3xx``; vegeta's latencies cover every request.
    ``cdf`` holds the hdrplot report's pairs (empty when it was not given).

    Raises :class:`VegetaParseError` naming what is missing when the text is not vegeta's
    JSON report or lacks the latencies, the request count or the rate.
    """
    text = json_text.strip()
    if not text:
        raise VegetaParseError("vegeta report is empty (the attack wrote no results)")
    lines = [line for line in text.splitlines() if line.lstrip().startswith("{")]
    if not lines:
        raise VegetaParseError(f"vegeta report is not JSON: {text.splitlines()[0][:200]!r}")
    try:
        doc = json.loads(lines[-1])  # the report is one line; stray stderr lines are skipped
    except ValueError as exc:
        raise VegetaParseError(f"vegeta report is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise VegetaParseError("vegeta report is not a JSON object")
    missing = [k for k in ("latencies", "requests", "rate", "throughput") if k not in doc]
    lat = doc.get("latencies") or {}
    missing += [f"latencies.{k}" for k in ("mean", "max", "min", *_PERCENTILES) if k not in lat]
    if missing:
        raise VegetaParseError("vegeta report lacks " + ", ".join(missing))
    try:
        codes = {str(k): int(v) for k, v in (doc.get("status_codes") or {}).items()}
        requests = int(doc["requests"])
        return LoadResult(
            requests=requests,
            rate=float(doc["rate"]),
            throughput=float(doc["throughput"]),
            success_ratio=float(doc.get("success", 0.0)),
            duration_s=float(doc.get("duration", 0)) / 1e9,
            wait_s=float(doc.get("wait", 0)) / 1e9,
            latency_min_ms=float(lat["min"]) / _NS_PER_MS,
            latency_mean_ms=float(lat["mean"]) / _NS_PER_MS,
            latency_max_ms=float(lat["max"]) / _NS_PER_MS,
            latency_percentiles_ms={p: float(lat[k]) / _NS_PER_MS for k, p in _PERCENTILES.items()},
            latency_count=requests,
            bytes_read=int((doc.get("bytes_in") or {}).get("total", 0)),
            status_codes=codes,
            non_2xx_3xx=sum(
                n for code, n in codes.items() if code != "0" and not code.startswith(("2", "3"))
            ),
            errors={"transport": codes["0"]} if "0" in codes else {},
            error_messages=tuple(str(e) for e in (doc.get("errors") or [])),
            cdf=parse_hdrplot(hdrplot_text) if hdrplot_text is not None else (),
        )
    except (TypeError, ValueError, AttributeError) as exc:
        raise VegetaParseError(f"vegeta report has a malformed figure: {exc}") from exc
