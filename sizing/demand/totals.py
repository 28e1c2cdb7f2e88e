"""The demand's totals: what was counted over the span, to set beside another tool's
(GoAccess's "Total Requests", its status codes and "Tx. Amount")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Totals:
    """Requests counted over the span, per status class, and the bytes sent (the sum of
    ``$bytes_sent`` or ``$body_bytes_sent`` over every request read, the outliers' too;
    None when neither is logged). ``outliers`` are the requests whose times were far from
    the rest and left out of the span (not in ``requests``)."""

    requests: int
    classes: dict[str, int] = field(default_factory=dict)
    bytes_sent: int | None = None
    outliers: int = 0


def totals_from_dict(doc: Any) -> Totals | None:
    """The totals a demand file holds (None when it has none; TypeError/ValueError when
    they are not totals)."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise TypeError("totals: not a mapping")
    classes = doc.get("classes") or {}
    if not isinstance(classes, dict):
        raise TypeError("totals.classes: not a mapping")
    sent = doc.get("bytes_sent")
    return Totals(
        requests=int(doc["requests"]),
        classes={str(k): int(v) for k, v in classes.items()},
        bytes_sent=None if sent is None else int(sent),
        outliers=int(doc.get("outliers", 0)),
    )
