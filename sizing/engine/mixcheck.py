"""The mixed-demand model checked against the measured mix (issue 57, part 4).

Without a replay, a demand of R requests and T full handshakes a second takes
R / cap_rps + T / cap_tps of a server's CPU: the CPU shares of two article profiles added
(ENGINE.md, "A fleet"). A replay of the customer's mix measures that server's capacity in
the customer's own requests per second directly. Where the same host holds both, the model's
prediction for the mix is

    predicted = R / (R / cap_rps + T / cap_tps)

in the customer's requests per second, with its interval from the two figures' low and
high ends. The answer states both and their ratio; where their intervals do not overlap
(the replay's high end is open when it is a lower bound) they disagree, and the answer
says it sized on the replay, and why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from sizing.engine.basis import Basis
from sizing.model import Figure

__all__ = ["MixCheck", "mix_check"]


@dataclass(frozen=True)
class MixCheck:
    """The replay's figure beside the model's prediction for the same mix and host."""

    replay: str  # the replay's basis id
    model: str  # the basis whose RPS and TPS figures the model adds
    cores: int
    ht: str
    measured: float
    measured_low: float
    measured_high: float  # inf for a lower bound
    predicted: float
    predicted_low: float
    predicted_high: float

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted if self.predicted > 0 else math.inf

    @property
    def disagree(self) -> bool:
        return self.measured_high < self.predicted_low or self.predicted_high < self.measured_low

    def sentence(self) -> str:
        """What the answer says: both figures, their ratio, and which one sized."""
        at = f"{self.cores} core{'s' if self.cores != 1 else ''}, HT {self.ht}"
        lower = math.isinf(self.measured_high)
        measured = ("≥" if lower else "") + f"{self.measured:,.0f}"
        head = (
            f"the article profiles' model ({self.model}: its RPS and TPS figures' CPU shares "
            f"added) predicts {self.predicted:,.0f} [{self.predicted_low:,.0f}–"
            f"{self.predicted_high:,.0f}] of your requests a second at {at}; your replay "
            f"measured {measured} (measured / predicted {'≥ ' if lower else ''}"
            f"{self.ratio:.2f})"
        )
        if self.disagree:
            return (
                f"{head}: they disagree beyond their intervals, and this answer is sized on "
                "the replay: it served your own mix and was checked against your logs, where "
                "the model adds two workloads that are not yours"
            )
        if lower and self.measured < self.predicted:
            return (
                f"{head}: the replay is a lower bound below the prediction, so it neither "
                "confirms nor contradicts it; sized on the replay (the smaller: never too "
                "small)"
            )
        return f"{head}: they agree within their intervals; sized on the replay"


def _at(b: Basis, profile: str, cores: int, ht: str) -> Figure | None:
    got = [f for f in b.figures if f.profile == profile and f.cores == cores and f.ht == ht]
    return got[0] if got else None


def _ends(f: Figure) -> tuple[float, float]:
    low = f.ci_low if f.ci_low is not None else f.value
    high = math.inf if f.lower_bound else (f.ci_high if f.ci_high is not None else f.value)
    return max(low, 0.0), high


def _model(rps: float, tps: float, cap_rps: float, cap_tps: float) -> float:
    """The article profiles' capacity for the mix, in its requests a second."""
    return rps / (rps / cap_rps + tps / cap_tps)


def mix_check(
    replays: Sequence[Basis], bases: Sequence[Basis], rps: float, tps: float | None
) -> list[MixCheck]:
    """For each replay basis, and each of its measured figures, the model's prediction from
    a measured basis of the same host, hardware, software and role (not a replay), holding
    exact RPS and TPS figures at the same cores and HT. Empty without a TPS demand (the
    model then is the RPS figure alone) or without such a basis."""
    if not tps or tps <= 0 or rps <= 0:
        return []
    out: list[MixCheck] = []
    for r in replays:
        peers = [
            b
            for b in bases
            if not b.workload.customer
            and b.origin == r.origin
            and b.physical_host == r.physical_host
            and b.hardware == r.hardware
            and b.software == r.software
            and b.workload.role == r.workload.role
        ]
        for f in r.figures:
            for peer in peers:
                a = _at(peer, "rps", f.cores, f.ht)
                t = _at(peer, "tps", f.cores, f.ht)
                if a is None or t is None or a.lower_bound or t.lower_bound:
                    continue
                (a_lo, a_hi), (t_lo, t_hi) = _ends(a), _ends(t)
                if min(a.value, t.value, a_lo, t_lo) <= 0:
                    continue
                predict = partial(_model, rps, tps)
                m_lo, m_hi = _ends(f)
                out.append(
                    MixCheck(
                        replay=r.id,
                        model=peer.id,
                        cores=f.cores,
                        ht=f.ht,
                        measured=f.value,
                        measured_low=m_lo,
                        measured_high=m_hi,
                        predicted=predict(a.value, t.value),
                        predicted_low=predict(a_lo, t_lo),
                        predicted_high=predict(a_hi, t_hi),
                    )
                )
                break
    return out
