"""The one request behind ``recommend``, ``table`` and ``guide``: where the figures come
from (:class:`Inputs`) and what is asked of them (:class:`SizingRequest`).

The three commands are three renderings of one answer: the same request gives the same
basis choice, the same fleets and the same numbers in the terminal, the JSON and the
printed guide. The request is typed here, below the report, so that the guide's request
can carry it whole instead of a copy of its fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sizing.engine.answer import Demand
from sizing.model import BasisPlatform, HtChoice, Source
from sizing.paths import Database
from sizing.workload import Role

__all__ = ["Inputs", "SizingRequest"]


@dataclass(frozen=True)
class Inputs:
    """Where the figures come from (``--source``, ``--basis``, the catalog, the store and,
    for the guide, ``--run``)."""

    source: Source = Source.BOTH
    basis: tuple[str, ...] = ()
    catalog: Path | None = None
    db: Database | None = None
    article_prices: bool = False
    include_virtualized: bool = False
    include_emulated: bool = False
    allow_extrapolation: bool = False
    runs: tuple[str, ...] = ()  # run ids or "latest" (the guide's --run); empty: every run


@dataclass(frozen=True)
class SizingRequest:
    """The demand (None: no recommendation, only the tables), what may serve it and how
    sure the answer is."""

    demand: Demand | None = None
    inputs: Inputs = field(default_factory=Inputs)
    platform: BasisPlatform | None = None  # None: any
    ht: HtChoice = HtChoice.ANY
    p95: str | None = None  # size --rps on the rate at which p95 stays within this
    max_servers: int | None = None
    confidence: float | None = None
    cpu: str | None = None  # translate --tps figures to this CPU (with allow_translation)
    allow_translation: bool = False
    allow_cpu_translation: bool = False  # --cpu carries RPS too, by the stated rule
    # bare metal against the hypervisor for the demand: None: when both were measured (or
    # published) and no --platform narrows the answer; True/False: as asked
    compare_platforms: bool | None = None
    years: int | None = None  # the period in whole years (None: the catalog's)
    growth: float = 0.0  # of the demand, a year (0.3: 30%)
    # --assume guest-share=kvm:0.92 and its --assume-source (sizing.engine.assume)
    assume: tuple[str, ...] = ()
    assume_source: str | None = None
    # the workload's role (--role, else the demand file's): sized on figures of that role
    # only (sizing.engine.roles); None: the default choice, as before roles were asked
    role: Role | None = None
    role_stated_by: str = ""  # "--role" | "the demand file"
    allow_other_workload: bool = False  # else a role nobody measured is refused
    # the demand file's workload (WorkloadMix.key()): its replay in the lab sizes it first
    customer: str = ""
    demand_file: str = ""  # the --demand path, for the run that would replay it
