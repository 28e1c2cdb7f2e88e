"""``sizing demand`` in the terminal: the per-second chart of the busiest hour (a block
sparkline, one column per ``ceil(seconds / width)`` seconds, each column the busiest second
it covers, so the peak is never averaged away), then the figures with their spans, what
was skipped, noted and missing. Every line fits the width (at most 100 columns)."""

from __future__ import annotations

import math

from sizing.demand.model import Rate, TrafficDemand
from sizing.demand.sized import PEAK_WORDS, sized_figures, sparkline
from sizing.textfit import fold
from sizing.workload import ROLE_WORDS, WorkloadMix


def _n(x: float | None) -> str:
    """A figure as read: whole above 100, one decimal above 1, and two significant
    digits below (an average of 0.004 is not ``0.0``)."""
    if x is None:
        return "-"
    if x >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:,.1f}"
    return f"{x:.{max(1, 1 - math.floor(math.log10(abs(x))))}f}"  # 0.033, 0.00073


def rate_line(name: str, r: Rate) -> str:
    """One row of the figures table; the peak's date too when the span crosses a day."""
    when = r.peak_at[11:19] if r.start[:10] == r.end[:10] else r.peak_at[:19].replace("T", " ")
    return f"{name:<20} {_n(r.peak):>9} {_n(r.p999):>9} {_n(r.p99):>9} {_n(r.average):>9}  {when}"


def demand_text(d: TrafficDemand, width: int = 100) -> str:
    """The report: chart, figures, span, how obtained, skipped, notes, missing fields."""
    r = d.requests
    out = [f"Demand from {d.method}, {r.start} to {r.end} ({r.seconds:,} s)"]
    line, per = sparkline(d.chart, width - 2)
    res = "per second" if per == 1 else f"busiest second of each {per} s"
    head = (
        f"Requests/s, the busiest hour holding the busiest second, from {d.chart_start}"
        f" ({res}; peak {_n(max(d.chart, default=0))}):"
    )
    out += _wrap(head, width)
    out += [
        f"|{line}|"[:width],
        "",
        f"{'per second':<20} {'busiest':>9} {'p99.9':>9} {'p99':>9} {'average':>9}  peak at",
        rate_line("requests", r),
    ]
    out += [rate_line(f"  {c}", cr) for c, cr in d.classes.items()]
    for name, rate in (
        ("new connections", d.new_connections),
        ("full TLS handshakes", d.full_handshakes),
    ):
        if rate is not None:
            out.append(rate_line(name, rate))
    out.append("")
    if r.peak_to_average:
        out.append(f"peak-to-average: {r.peak_to_average:.2f}")
    out += _totals(d, width)
    if d.resumption_share is not None:
        out.append(f"TLS resumption share: {d.resumption_share:.1%} of new TLS connections")
    if d.requests_per_connection is not None:
        out.append(f"requests per connection: {d.requests_per_connection:.2f}")
    if d.request_time_ms is not None:
        p50, p99 = d.request_time_ms
        out.append(f"$request_time: p50 {p50} ms, p99 {p99} ms")
    if d.sizes:
        total = sum(n for _, n in d.sizes) or 1
        mix = ", ".join(f"{b.replace(' ', '')} {n / total:.0%}" for b, n in d.sizes if n)
        out += _wrap(f"response sizes: {mix}", width)
    out.append("")
    out += _wrap(f"arrival second: {d.arrival}", width)
    over = (
        "every second of the span (a second without a request counts 0)"
        if d.resolution_s <= 1
        else f"the {d.resolution_s:g} s intervals"
    )
    what = "lines" if d.resolution_s <= 1 else "samples"
    out += _wrap(
        f"percentiles: nearest rank over {over}; {d.lines:,} {what} read, {d.skipped:,} skipped",
        width,
    )
    for note in d.notes:
        out += _wrap(f"note: {note}", width)
    for m in d.missing:
        out += _wrap(f"missing: {m.figure}: {m.advice}", width)
    if d.workload is not None:
        out += ["", *workload_lines(d.workload, width)]
    return "\n".join(out)


def workload_lines(w: WorkloadMix, width: int = 100) -> list[str]:
    """The workload the demand file carries: the role, the mix, what was assumed."""
    role = "not stated (--role)" if w.role is None else f"{ROLE_WORDS[w.role]} ({w.role_source})"
    out = _wrap(f"workload: {role}", width)
    parts = []
    for name, label in (("tls_share", "TLS"), ("resumption_share", "resumed")):
        value = w.figure(name)
        if value is not None:
            parts.append(
                f"{label} {value:.0%}" + (" (assumed)" if getattr(w, name) is None else "")
            )
    rpc = w.figure("requests_per_connection")
    if rpc is not None:
        parts.append(f"{rpc:.1f} requests per connection")
    if w.per_connection:
        shape = ", ".join(
            f"{lo}{'' if hi == lo else '+' if hi is None else f'-{hi}'}: {sh:.0%}"
            for lo, hi, sh in w.per_connection
            if sh >= 0.005
        )
        parts.append(f"connections by requests ({shape})")
    if parts:
        out += _wrap("  mix: " + "; ".join(parts), width)
    for a in w.assumed:
        out += _wrap(f"  assumed: {a.figure.replace('_', ' ')} {a.value:g} ({a.source})", width)
    return out


def _totals(d: TrafficDemand, width: int) -> list[str]:
    """Requests, per status class and bytes sent: to set beside another tool's totals."""
    t = d.totals
    if t is None:
        return []
    parts = [f"{t.requests:,} requests"]
    if t.classes:
        parts.append(", ".join(f"{c} {n:,}" for c, n in t.classes.items()))
    if t.bytes_sent is not None:
        parts.append(f"{t.bytes_sent:,} bytes sent ({t.bytes_sent / 2**20:,.1f} MiB)")
    if t.outliers:
        parts.append(f"{t.outliers:,} outside the span")
    return _wrap("totals: " + "; ".join(parts), width)


def _wrap(text: str, width: int) -> list[str]:
    # a file's path longer than a line is broken after a "/", not mid-word
    return fold(text, width)


def sized_line(d: TrafficDemand, peak: str, path: object) -> str:
    """What ``--demand`` sized for, in one line (stderr)."""
    rps, tps = sized_figures(d, peak)
    tls = f" + {_n(tps)} full TLS handshakes/s" if tps is not None else " (no TLS figure)"
    r = d.requests
    text = f"demand from {path}: {PEAK_WORDS[peak]} of {r.start} to {r.end}: {_n(rps)} RPS{tls}"
    return "\n".join(_wrap(text, 100))


def traffic_json(d: TrafficDemand, peak: str) -> dict[str, object]:
    """The demand sized for, in ``recommend --json``: the figures at ``peak`` and where
    they come from."""
    rps, tps = sized_figures(d, peak)
    return {
        "peak": peak,
        "rps": rps,
        "full_handshakes_per_s": tps,
        "span": {"start": d.requests.start, "end": d.requests.end},
        "method": d.method,
        "arrival": d.arrival,
        "sources": [{"path": s.path, "sha256": s.sha256} for s in d.sources],
    }
