"""One figure of the cost-per-throughput table (:mod:`sizing.engine.table`) with what is
derived from it: per core, scaling efficiency, the server's cost per unit, and, for a guest
or container, its overhead against its block's bare metal and, for HT on, the HT gain
(both :class:`sizing.engine.overhead.Comparison`, computed there)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sizing.engine.costs import CostBreakdown
from sizing.engine.overhead import Comparison

COST_UNITS = {"rps": 1000.0, "tps": 100.0}
COST_UNIT_LABELS = {"rps": "1k RPS", "tps": "100 TPS"}


@dataclass(frozen=True)
class Cell:
    """One figure of the table with what is derived from it."""

    platform: str
    ht: str
    profile: str
    cores: int
    value: float
    unit: str
    source: str  # measured | reference | extrapolated
    basis: str  # measured | reference: what the figure (or its model) came from
    origin: str
    emulated: bool
    per_core: float
    efficiency: float | None
    server_cost: float | None  # None: the basis has no price at this core count
    cost_per_unit: float | None
    cost_unit: str
    # a guest's or container's overhead against its block's bare metal (engine.overhead)
    overhead: Comparison | None = None
    # HT on cells: the gain over HT off of the same series at these cores (HT on / off - 1)
    ht_gain: Comparison | None = None
    basis_id: str = ""
    flags: tuple[str, ...] = ()
    bound: str = ""  # "lower": shown as "≥ value"
    ci_low: float | None = None
    ci_high: float | None = None
    interval: str = ""  # what the interval is and covers, in words
    cost: CostBreakdown | None = None  # server_cost part by part, and what it leaves out
    server_name: str = ""  # the priced server's model, when its catalog names it
    coverage: float | None = None  # the share of the truth the interval states it covers

    @property
    def overhead_pct(self) -> float | None:
        return None if self.overhead is None else self.overhead.pct

    @property
    def overhead_ci(self) -> tuple[float, float] | None:
        return None if self.overhead is None else self.overhead.interval

    @property
    def overhead_pairs(self) -> int:
        return 0 if self.overhead is None else self.overhead.pairs

    @property
    def overhead_interval(self) -> str:
        return "" if self.overhead is None else self.overhead.words()

    @property
    def ht_gain_pct(self) -> float | None:
        return None if self.ht_gain is None else self.ht_gain.pct

    @property
    def ht_gain_ci(self) -> tuple[float, float] | None:
        return None if self.ht_gain is None else self.ht_gain.interval

    @property
    def ht_gain_pairs(self) -> int:
        return 0 if self.ht_gain is None else self.ht_gain.pairs

    @property
    def ht_gain_interval(self) -> str:
        return "" if self.ht_gain is None else self.ht_gain.words()

    @property
    def display(self) -> str:
        """The value as shown: ``≥300,000`` for a lower bound."""
        return ("≥" if self.bound == "lower" else "") + f"{self.value:,.0f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis_id": self.basis_id,
            "flags": list(self.flags),
            "bound": self.bound,
            "display": self.display,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "interval": self.interval,
            "coverage": self.coverage,
            "overhead_ci_pct": None if self.overhead_ci is None else list(self.overhead_ci),
            "platform": self.platform,
            "ht": self.ht,
            "profile": self.profile,
            "cores": self.cores,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "basis": self.basis,
            "origin": self.origin,
            "emulated": self.emulated,
            "per_core": self.per_core,
            "efficiency": self.efficiency,
            "server_cost": self.server_cost,
            "server_name": self.server_name,
            "cost": None if self.cost is None else self.cost.to_dict(),
            "cost_per_unit": self.cost_per_unit,
            "cost_unit": self.cost_unit,
            "overhead_pct": self.overhead_pct,
            "overhead_paired": self.overhead_pairs > 0,
            "overhead_pairs": self.overhead_pairs,
            "overhead_interval": self.overhead_interval,
            "ht_gain_pct": self.ht_gain_pct,
            "ht_gain_ci_pct": None if self.ht_gain_ci is None else list(self.ht_gain_ci),
            "ht_gain_paired": self.ht_gain_pairs > 0,
            "ht_gain_pairs": self.ht_gain_pairs,
            "ht_gain_interval": self.ht_gain_interval,
        }
