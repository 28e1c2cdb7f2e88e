"""``results --verbose``: a record per point, its fields named, wrapped to the width (it
wraps rather than widens: a table of every field ran to 170 columns)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

# --verbose's records: each header's field in words
_LABELS = {
    "median": "median {}",
    "± (cover)": "interval {}",
    "spread": "spread {}",
    "reps": "{} runs",
    "errors": "{} errors",
    "srv CPU": "server CPU {}",
    "cli CPU": "client CPU {}",
    "p50 ms": "p50 {} ms",
    "p99 ms": "p99 {} ms",
    "generator": "measured by {}",
}


def records(
    headers: Sequence[str], rows: Sequence[Sequence[str]], reasons: Sequence[str], width: int
) -> str:
    """``--verbose``: a record per point, every field named, wrapped to ``width`` (it wraps
    rather than widens: a table of every field ran to 170 columns), then each reason in
    full, wrapped."""
    out: list[str] = []
    for row in rows:
        out.append(row[0])
        fields = "; ".join(
            _LABELS.get(h, h).format(v) for h, v in zip(headers[1:-1], row[1:-1], strict=True)
        )
        out += textwrap.wrap(fields, width, initial_indent="    ", subsequent_indent="    ")
        if row[-1]:
            out += textwrap.wrap(
                row[-1],
                width,
                initial_indent="    ",
                subsequent_indent="      ",
                break_on_hyphens=False,
            )
    if reasons:
        out += ["", "reasons:"]
        for r in reasons:
            out += textwrap.wrap(r, width, subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(out)
