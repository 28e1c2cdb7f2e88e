"""The reading of the sizing request's options (``recommend`` and ``guide`` take them
all, ``table`` those of where the figures come from): :func:`sizing_request` turns their
values into a :class:`sizing.sizing_request.SizingRequest`, :func:`inputs_of` into its
:class:`Inputs`. An option that needs no reading reaches the request's field of the same
name as given. The options themselves, which command takes which and the one parsed
object they arrive in: :mod:`sizing.cli.option_set`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import paths
from sizing.cli.options import (
    SIZING_HT,
    RedundancyChoice,
    basis_ids,
    choice,
    demand_figures,
    percent,
    platform_choice,
)
from sizing.errors import UsageError
from sizing.model import HtChoice, Source

if TYPE_CHECKING:
    from sizing.app.demand import TrafficDemand as Traffic
    from sizing.app.sizing import Inputs, Role, SizingRequest, WorkloadAsk

__all__ = [
    "PEAK_CHOICES",
    "inputs_of",
    "load_traffic",
    "role_of",
    "sizing_request",
    "workload_of",
]


PEAK_CHOICES = ("max", "p99.9", "p99")  # sizing.demand's PEAKS, named without importing it


def load_traffic(path: Path | None, peak: str) -> Traffic | None:
    """The demand file ``--demand`` names (None without one); ``--peak`` checked."""
    if peak not in PEAK_CHOICES:
        raise UsageError(f"--peak: {peak!r} is not one of {', '.join(PEAK_CHOICES)}")
    if path is None:
        return None
    from sizing.app.demand import load_demand  # deferred: yaml and the log readers

    return load_demand(path)


def role_of(text: str | None, traffic: Traffic | None = None) -> tuple[Role | None, str]:
    """The workload's role and who stated it: ``--role``, else the demand file's workload
    role (read with ``getattr``: a demand file without a workload has none); both, and
    different, is one usage line."""
    from sizing.app.sizing import parse_role  # deferred: the engine's imports

    asked = None
    if text is not None:
        try:
            asked = parse_role(text)
        except ValueError as exc:
            raise UsageError(f"--role: {exc}") from None
    mix = getattr(traffic, "workload", None)
    stated = getattr(mix, "role", None)
    in_file = None
    if stated is not None:
        try:
            in_file = parse_role(str(stated))
        except ValueError:
            in_file = None  # the demand file's reader says what is wrong with it
    if asked is not None and in_file is not None and asked is not in_file:
        raise UsageError(
            f"--role {text} is not the demand file's workload ({in_file.value}): drop --role"
            " to size the file's workload, or size another workload without --demand"
        )
    if asked is not None:
        return asked, "--role"
    if in_file is not None:
        return in_file, "the demand file"
    return None, ""


def workload_of(role: str | None, allow_other: bool) -> WorkloadAsk:
    """The workload ``table`` is asked for (``--role``, ``--allow-other-workload``)."""
    from sizing.app.sizing import WorkloadAsk  # deferred: the engine's imports

    asked, stated = role_of(role)
    return WorkloadAsk(asked, stated, allow_other)


def inputs_of(
    source: str,
    basis: str | None,
    catalog: Path | None,
    db: str | None,
    article_prices: bool = False,
    include_virtualized: bool = False,
    include_emulated: bool = False,
    allow_extrapolation: bool = False,
    runs: tuple[str, ...] = (),
    **same: Any,
) -> Inputs:
    """Where the figures come from, as the options say; ``same``: options that need no
    reading, each to the :class:`Inputs` field of its name."""
    from sizing.app.sizing import Inputs  # deferred: the engine's import chain

    return Inputs(
        source=choice(Source, source, "--source"),
        basis=basis_ids(basis),
        catalog=catalog,
        db=None if db is None else paths.database(db),
        article_prices=article_prices,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
        allow_extrapolation=allow_extrapolation,
        runs=runs,
        **same,
    )


def sizing_request(
    *,
    rps: str | None,
    tps: str | None,
    headroom: str,
    platform: str,
    ht: str,
    redundancy: str,
    inputs: Inputs,
    growth: str = "0",
    assume: Sequence[str] | None = None,
    traffic: Traffic | None = None,
    peak: str = "max",
    role: str | None = None,
    demand_file: str = "",
    **same: Any,
) -> SizingRequest:
    """The request the options ask (no demand without --rps or --tps: the guide's tables
    only); a bad value is one clear usage line. The options read here are parameters;
    ``same`` holds the others (``p95``, ``max_servers``, ``cpu``, ...), each given to the
    request's field of its name as it is."""
    from sizing.app.sizing import Demand, SizingRequest  # deferred: the engine's imports

    demand = None
    rps_n, tps_n, headroom_pct = demand_figures(rps, tps, headroom)
    asked_role, stated_by = role_of(role, traffic)
    if traffic is not None:
        if rps_n is not None or tps_n is not None:
            raise UsageError("--demand gives the demand: no --rps or --tps beside it")
        from sizing.app.demand import sized_figures  # deferred

        rps_n, tps_n = sized_figures(traffic, peak)
        if not rps_n:
            raise UsageError(
                f"--demand: the demand file's {peak} second holds 0 requests/s: nothing to"
                " size (a log of a quiet span, or counters that never moved)"
            )
    if rps_n is not None or tps_n is not None:
        rule = choice(RedundancyChoice, redundancy, "--redundancy").value
        demand = Demand(rps=rps_n, tps=tps_n, headroom=headroom_pct / 100.0, redundancy=rule)
        demand.validate()
    return SizingRequest(
        demand=demand,
        inputs=inputs,
        platform=platform_choice(platform),
        ht=choice(HtChoice, ht, "--ht", SIZING_HT),
        growth=percent(growth, "--growth") / 100.0,
        assume=tuple(assume or ()),
        role=asked_role,
        role_stated_by=stated_by,
        customer=_customer(traffic),
        demand_file=demand_file if traffic is not None else "",
        **same,
    )


def _customer(traffic: Traffic | None) -> str:
    """The key of the demand file's workload (its replay in the lab sizes it), or ""."""
    mix = getattr(traffic, "workload", None)
    return "" if mix is None else str(mix.key())
