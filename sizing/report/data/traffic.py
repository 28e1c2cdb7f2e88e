"""The guide's "Your traffic" chapter (``guide --demand``): the customer's per-second
traffic with the peak sized for marked, the figures derived, how they were obtained, and
where the traffic differs from the workload the figures were measured on.

It is one of the chapters :data:`sizing.report.data.chapters.CHAPTERS` lists, right after
the executive summary, present only when the guide was asked with ``--demand``."""

from __future__ import annotations

from sizing.demand.model import Missing
from sizing.demand.model import TrafficDemand as Traffic
from sizing.demand.sized import PEAK_WORDS, bars, sized_figures
from sizing.report.data.blocks import Block, Para, Pre, code, facts, h3, p
from sizing.report.data.model import Fact
from sizing.workload import ROLE_WORDS, WorkloadMix

CHART_COLUMNS = 90


def chart_lines(t: Traffic, peak_value: float) -> tuple[str, ...]:
    """The busiest hour as a bar chart (a short span stretched to the width), with the
    first second at the peak sized for marked under it."""
    rows, scale = bars(t.chart, CHART_COLUMNS)
    wide, per = (scale, 1) if scale > 0 else (1, -scale)
    at = next((i // per for i, v in enumerate(t.chart) if v >= peak_value), 0)
    at = at * wide + wide // 2
    label = f"{peak_value:,.0f} requests/s sized for"
    fits = at + 2 + len(label) <= CHART_COLUMNS
    mark = " " * at + "▲ " + label if fits else " " * max(0, at - len(label) - 1) + label + " ▲"
    if per > 1:
        res = f"one column per {per} s, its busiest second"
    else:
        res = "one column per second" if wide == 1 else f"{wide} columns per second"
    return (
        f"requests/s from {t.chart_start} ({res}; top: {max(t.chart):,})",
        *rows,
        mark,
    )


def _figures(t: Traffic) -> list[Fact]:
    r = t.requests
    items = [
        Fact("Span", f"{r.start} to {r.end} ({r.seconds:,} s)"),
        Fact(
            "Requests/s",
            f"busiest {r.peak:,.0f} at {r.peak_at}, p99.9 {r.p999:,.0f},"
            f" p99 {r.p99:,.0f}, average {r.average:,.1f}",
        ),
    ]
    if r.peak_to_average:
        items.append(Fact("Peak-to-average", f"{r.peak_to_average:.2f}"))
    for name, rate in (
        ("New connections/s", t.new_connections),
        ("Full TLS handshakes/s", t.full_handshakes),
    ):
        if rate is not None:
            items.append(
                Fact(
                    name,
                    f"busiest {rate.peak:,.0f}, p99.9 {rate.p999:,.0f},"
                    f" p99 {rate.p99:,.0f}, average {rate.average:,.1f}",
                )
            )
    if t.resumption_share is not None:
        items.append(
            Fact("TLS sessions resumed", f"{t.resumption_share:.1%} of new TLS connections")
        )
    if t.requests_per_connection is not None:
        items.append(Fact("Requests per connection", f"{t.requests_per_connection:.2f}"))
    if t.request_time_ms is not None:
        items.append(
            Fact("Request time", f"p50 {t.request_time_ms[0]} ms, p99 {t.request_time_ms[1]} ms")
        )
    if t.sizes:
        total = sum(n for _, n in t.sizes) or 1
        items.append(
            Fact("Response sizes", ", ".join(f"{b}: {n / total:.0%}" for b, n in t.sizes if n))
        )
    if t.workload is not None:
        items += _workload_facts(t.workload)
    return items


ASSUMED_LABELS = {
    "tls_share": "TLS connections",
    "resumption_share": "TLS sessions resumed",
    "requests_per_connection": "Requests per connection",
}


def _workload_facts(w: WorkloadMix) -> list[Fact]:
    """The workload: the role stated, the mix the logs show, what was assumed (with its
    source, on every rendering)."""
    role = "not stated" if w.role is None else f"{ROLE_WORDS[w.role]} ({w.role_source})"
    items = [Fact("What NGINX does", role)]
    if w.tls_share is not None:
        items.append(Fact("TLS connections", f"{w.tls_share:.0%} of new connections"))
    if w.per_connection:
        shape = ", ".join(
            f"{lo}{'' if hi == lo else '+' if hi is None else f'-{hi}'}: {share:.0%}"
            for lo, hi, share in w.per_connection
            if share >= 0.005
        )
        items.append(Fact("Connections by requests carried", shape))
    for a in w.assumed:
        label = ASSUMED_LABELS[a.figure]
        value = f"{a.value:.0%}" if a.figure.endswith("share") else f"{a.value:g}"
        items.append(Fact(label, f"{value}, assumed: not in the logs; source: {a.source}"))
    return items


REPLAYED_WORDS = (
    "This guide is sized on your own mix, replayed in the lab and checked against your logs"
    ' ("Your traffic, replayed"): its figure was measured with your requests per'
    " connection, your TLS and resumption shares and your response sizes, in your own"
    " requests per second, so none of them is carried over from another workload."
)


def _differences(t: Traffic, replayed: bool = False) -> list[Block]:
    """Where this traffic differs from a one-request-per-connection, full-handshake,
    128 B workload, and which way that moves the cost; or, sized on the demand's own
    replay, that no such difference applies."""
    out: list[Block] = [h3("Your traffic and the measured workload")]
    if replayed:
        return [*out, p(REPLAYED_WORDS)]
    cheaper = []
    if t.requests_per_connection is not None and t.requests_per_connection > 1.05:
        cheaper.append(f"your connections carry {t.requests_per_connection:.1f} requests each")
    if t.resumption_share:
        cheaper.append(f"{t.resumption_share:.0%} of your new TLS connections resume a session")
    if cheaper:
        out.append(
            p(
                "The TLS figures were measured with one request per connection and a full"
                " handshake on every connection. "
                + _sentence("; ".join(cheaper))
                + "This sizing counts only your full handshakes as TLS work, each at the cost of"
                " a measured one, and every request at the cost of a measured request: for these"
                " differences, the figures sized on that workload are an upper bound on cost."
            )
        )
    if t.sizes:
        out.append(p(_size_words(t)))
    return out


def _size_words(t: Traffic) -> str:
    """The customer's sizes against the measured workload's, bodies with bodies: with
    ``$body_bytes_sent`` the 128 B body itself; with ``$bytes_sent`` (headers included) the
    measured response with its headers, under 512 B (nginx's status line and headers for a
    static file are about 250 B)."""
    total = sum(n for _, n in t.sizes) or 1
    headers = t.workload is not None and t.workload.size_field == "bytes_sent"
    if t.workload is None:  # a demand file of version 1 does not say which was logged
        headers = False
    upto = 2 if headers else 1  # buckets: <= 128 B, <= 512 B, ...
    small = sum(n for _, n in t.sizes[:upto]) / total
    if headers:
        what = (
            f"{small:.0%} of your responses are 512 B or smaller with their headers"
            " ($bytes_sent), as the measured workload's are (a 128 B body and its headers)"
        )
    else:
        what = (
            f"{small:.0%} of your response bodies are 128 B or smaller"
            + (" ($body_bytes_sent)" if t.workload is not None else "")
            + ", the measured workload's body size"
        )
    if small >= 0.95:
        return what + "."
    return (
        what + ". Larger responses cost more CPU and bandwidth per request than the measured"
        " ones: for them the RPS figures are not an upper bound, and a measurement of your"
        " own mix (sizing run --workload with this demand file) is the way to know."
    )


def _missing(m: Missing) -> Para:
    if m.add.startswith("$"):
        return p(
            f"Not in the input: {m.figure} (add ", code(m.add), " to the log_format).", cls="note"
        )
    return p(f"Not in the input: {m.figure} ({m.advice}).", cls="note")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ". "


def traffic_blocks(t: Traffic, peak: str, replayed: bool = False) -> list[Block]:
    rps, tps = sized_figures(t, peak)
    sized = f"{rps:,.0f} requests/s" + (f" and {tps:,.0f} full TLS handshakes/s" if tps else "")
    blocks: list[Block] = [
        p(
            f"This guide is sized for {sized}: {PEAK_WORDS[peak]} of your own traffic (each"
            " series' own, so the two need not fall in the same second), with the headroom"
            " above on top.",
            cls="lead",
        ),
        Pre(chart_lines(t, rps)),
        facts(_figures(t), title="What your traffic shows"),
        h3("How this demand was obtained"),
        p(
            f"From {t.method}: {t.lines:,} lines or samples read, {t.skipped:,} skipped."
            f" Each request was counted in its second by {t.arrival}. The percentiles are"
            " taken over every second of the span, a quiet second counting as 0. Made with ",
            code("sizing demand"),
            "; the files and their SHA-256 hashes are in the demand file.",
        ),
    ]
    blocks += [p(f"Note: {n}", cls="note") for n in t.notes]
    blocks += [_missing(m) for m in t.missing]
    return blocks + _differences(t, replayed)
