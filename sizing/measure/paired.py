"""Two legs of one machine measured in alternation (:class:`sizing.plan.pairs.Pair`).

Both legs are provisioned before the first repetition. Then the legs take turns, one
closed-loop window each, in the order :func:`sizing.plan.pairs.leg_order` gives (A B, B A,
A B, ...; three legs A B C, C B A, ...): a leg that takes over from another first warms up
(the warm-up window is kept with the leg's samples the first time only). The leg not being
measured stays provisioned and *unloaded*: its nginx keeps running with no client sending
it anything, so its workers sleep in ``epoll_wait`` and the CPUs are the measured leg's (a
stopped nginx would have to be started again, and its first window would measure a cold
start instead of the leg). An HT pair is the exception: both legs are the same nginx on
one host with another worker set, so its switch re-applies that leg's configuration (an
nginx reload) before the warm-up.

After every pair of windows the per-pair ratio ``b / a`` is known; the stop rule
(:class:`sizing.measure.validity.StopRule`) stops on the interval of the *ratios'* median,
not on either leg's. Each leg is then evaluated on its own windows with every guard, as an
unpaired point would be, and both carry the pair's record (:func:`pair_record`) in their
metadata: the legs, their order, the values of each pair and the ratio's interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sizing.errors import SizingError
from sizing.intervals import PairedRatio
from sizing.measure.evaluate import Measurement, Outputs, window_rates
from sizing.measure.measure_context import MeasureContext
from sizing.measure.throughput import NGINX_DIED, UPSTREAM_DIED, Throughput, stop_rule
from sizing.measure.windows import WindowSpec, schedule_windows
from sizing.model import SERVER_DIED, PointResult, Status
from sizing.plan.pairs import Pair, leg_order
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import Schedule
from sizing.provision.platforms.base import Target
from sizing.records import PairLeg, PairRecord

__all__ = ["measure_pair", "pair_record"]

Switch = Callable[[PlannedPoint], Target]  # make a leg the live one; returns its target


@dataclass
class _Leg:
    point: PlannedPoint
    target: Target | None = None
    outputs: Outputs = field(default_factory=dict)
    windows: list[WindowSpec] = field(default_factory=list)
    warmed: bool = False  # its first warm-up is kept with its samples
    failure: str | None = None

    def values(self) -> list[float]:
        return window_rates(self.point, self.outputs)


def _batch(schedule: Schedule, index: int, warm: bool) -> list[WindowSpec]:
    """One timed window numbered ``index``, after a warm-up (index 0) when ``warm``."""
    if warm and schedule.warmup_s > 0:
        warm_up, timed = schedule_windows([schedule.warmup_s, schedule.duration_s])
        return [warm_up, replace(timed, index=index)]
    return schedule_windows([schedule.duration_s], first_index=index)


def _window(
    ctx: MeasureContext, leg: _Leg, schedule: Schedule, index: int, warm: bool, switch: Switch
) -> None:
    """Run the leg's next window (after its warm-up when it takes over); a later warm-up's
    output is dropped (the first one stands for the leg's warm-up)."""
    try:
        leg.target = switch(leg.point)
    except SizingError as exc:
        leg.failure = str(exc)
        return
    batch = _batch(schedule, index, warm)
    got: Outputs = {}
    leg.failure = Throughput.run_batch(ctx, leg.point, leg.target, batch, schedule.connections, got)
    keep_warmup = not leg.warmed
    for host, wins in got.items():
        leg.outputs.setdefault(host, []).extend(w for w in wins if keep_warmup or w.index != 0)
    leg.windows.extend(w for w in batch if keep_warmup or w.index != 0)
    leg.warmed = leg.warmed or any(w.index == 0 for w in batch)


def measure_pair(ctx: MeasureContext, pair: Pair, switch: Switch) -> list[Measurement]:
    """Measure the legs of ``pair`` in alternation (see the module); never raises for a
    leg's own failure. ``switch`` provisions a leg (a no-op when it is live already).
    Returns one measurement per leg, in the order of ``pair.legs``."""
    schedule = Schedule.of(ctx.settings, pair.a.profile)
    rule = stop_rule(schedule)
    legs = {name: _Leg(point) for name, point in zip(pair.roles, pair.legs, strict=True)}
    order: list[str] = []
    ratios: dict[str, list[float]] = {name: [] for name in pair.roles[1:]}  # per leg vs a
    last = ""
    stopped = ""
    while not stopped:
        n = len(ratios["b"])
        for name in leg_order(n, len(legs)):
            leg = legs[name]
            ctx.progress.step(f"measuring {pair.label()}: pair {n + 1}, {leg.point.key.label()}")
            _window(ctx, leg, schedule, n + 1, warm=last != name, switch=switch)
            last = name
            order.append(name)
            if leg.failure is not None:
                stopped = f"{leg.point.key.label()}: {leg.failure}"
                break
        if stopped:
            break
        a = legs["a"].values()
        others = {name: legs[name].values() for name in ratios}
        if len(a) <= n or a[n] <= 0 or any(len(v) <= n for v in others.values()):
            stopped = "a window gave no figure"
            break
        for name, values in others.items():
            ratios[name].append(values[n] / a[n])
        if all(rule.done(r) for r in ratios.values()):
            break
    results = {name: _result(ctx, leg, schedule) for name, leg in legs.items()}
    record = pair_record(
        pair, {name: res for name, (res, _) in results.items()}, order, ratios, stopped
    )
    out: list[Measurement] = []
    for name in pair.roles:
        res, samples = results[name]
        meta = replace(res.metadata, pair=replace(record, role=name))
        out.append((replace(res, metadata=meta), samples))
    return out


def _result(ctx: MeasureContext, leg: _Leg, schedule: Schedule) -> Measurement:
    """A leg evaluated on its own windows with every guard, as an unpaired point."""
    if leg.target is None:  # never provisioned: the switch failed at once
        return PointResult(leg.point.key, Status.FAILED, leg.failure or "not provisioned"), []
    res, samples = Throughput.evaluate(
        ctx, leg.point, leg.target, leg.outputs, leg.windows, schedule
    )
    if leg.failure in (NGINX_DIED, UPSTREAM_DIED) and SERVER_DIED not in res.flags:
        # it died in a later warm-up, whose output is not kept: say so all the same
        which = (
            f"nginx died on {leg.target.host}"
            if leg.failure == NGINX_DIED
            else "the upstream nginx died"
        )
        res = replace(
            res,
            status=Status.FAILED,
            reason=f"{which} during a warm-up",
            flags=(*res.flags, SERVER_DIED),
        )
    return res, samples


def pair_record(
    pair: Pair,
    results: dict[str, PointResult],
    order: list[str],
    ratios: dict[str, list[float]],
    stopped: str,
) -> PairRecord:
    """What every leg of a pair stores (``metadata.pair``): the legs and their verdicts,
    the order the windows ran in, each round's ratio (b / a, and c / a for a third leg)
    and the b / a ratio's interval."""
    pr = PairedRatio.of_ratios(ratios["b"])
    return PairRecord(
        id=pair.id,
        kind=str(pair.kind),
        legs={name: PairLeg(r.key.label(), str(r.status), r.reason) for name, r in results.items()},
        order="".join(order),
        ratios=tuple(ratios["b"]),
        c_ratios=tuple(ratios.get("c", ())),
        ratio=None if pr is None else pr.ratio,
        ratio_low=None if pr is None else pr.low,
        ratio_high=None if pr is None else pr.high,
        coverage=None if pr is None else pr.coverage,
        stopped=stopped,  # why the alternation ended early ("" when the rule stopped it)
    )
