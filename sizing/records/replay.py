"""What a replayed point stores of its closed loop (issue 57): the customer's mix against
the mix the lab nginx's own log showed, figure by figure, with the tolerances."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MixRowRecord", "ReplayRecord"]


@dataclass(frozen=True)
class MixRowRecord:
    """One figure of the comparison (:class:`sizing.workload.MixRow`)."""

    figure: str = ""
    yours: str = ""
    replayed: str = ""
    distance: float = 0.0
    tolerance: float = 0.0
    ok: bool = True


@dataclass(frozen=True)
class ReplayRecord:
    """The replay of a customer workload: its basis key, the comparison, in words too."""

    key: str = ""
    rows: tuple[MixRowRecord, ...] = ()
    not_compared: tuple[str, ...] = ()
    ok: bool = True
    words: str = ""  # "requests per connection 8.1 (yours 8.0), TLS 60% (yours 60%), ..."
    requests_logged: int = 0
