"""The proposal's "what each option carries" table: servers counted on × one server's
capacity on the low end of its interval = the total (:mod:`sizing.report.data.proposal`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sizing.model import SizingMetric
from sizing.report.data.format import PLATFORM_LABELS, counted_total, number
from sizing.report.data.model import TableBlock, TCell


class Carries(Protocol):
    """What the table reads of an option (:class:`sizing.report.data.proposal.Option`)."""

    @property
    def platform(self) -> str: ...

    @property
    def counted(self) -> int: ...

    def per_server(self, profile: str) -> float | None: ...


__all__ = ["capacity_table"]

_LABELS: dict[str, str] = {SizingMetric.RPS: "RPS", SizingMetric.TPS: "TLS handshakes/s"}


def capacity_table(opts: Sequence[Carries], profiles: Sequence[str]) -> TableBlock | None:
    """What each option carries as sized: servers counted on × one server's capacity on
    the low end of its interval = the total."""
    rows = []
    for o in opts:
        for p in profiles:
            one = o.per_server(p)
            if one is None:
                continue
            rows.append(
                (
                    TCell(PLATFORM_LABELS.get(o.platform, o.platform), "", False),
                    TCell(_LABELS.get(p, p), "", False),
                    TCell(str(o.counted)),
                    TCell(number(one)),
                    TCell(number(counted_total(one, o.counted))),
                )
            )
    if not rows:
        return None
    return TableBlock(
        title="What each option carries, as sized",
        headers=(
            "Option",
            "Figure",
            "Servers counted on",
            "One server (low end)",
            "Total capacity",
        ),
        rows=tuple(rows),
        notes=(
            "One server's figure is the low end of its interval, the figure the sizing uses: "
            "servers counted on × one server = total capacity. Under N+1 one server is the "
            "spare and is not counted; under 2N one half of the servers is counted, the "
            "other half being down.",
        ),
    )
