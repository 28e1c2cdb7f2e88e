"""A replayed customer workload (issue 57): the closed-loop method, then the closed loop of
the mix: the lab nginx's own log over the timed windows, compared with the customer's.

The point's figure is what :class:`~sizing.measure.throughput.Throughput` measures (every
guard of the other profiles: saturation, errors, client-bound, ceilings), in the
customer's own requests per second. The comparison is stored with the point
(``PointMeta.replay``); a replay outside the tolerances adds the invalid verdict
``mix-mismatch`` with the figures side by side, so the point is kept and never sized.
"""

from __future__ import annotations

from dataclasses import replace

from sizing.load.tools import built_for
from sizing.loadproto import MixCounts
from sizing.measure.evaluate import Measurement, Outputs, window_rates
from sizing.measure.measure_context import MeasureContext
from sizing.measure.replay_mix import replay_record, verdict
from sizing.measure.throughput import Throughput, stop_rule
from sizing.measure.windows import WindowSpec, schedule_windows
from sizing.model import PointResult, Status
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import Schedule
from sizing.plan.workload_spec import profile_mix
from sizing.provision.platforms.base import Target
from sizing.workload import WorkloadMix

__all__ = ["Replay", "logged_mix", "with_replay"]


def logged_mix(outputs: Outputs, host: str) -> MixCounts:
    """The server's mix log over the timed windows (the warm-up, window 0, left out)."""
    total = MixCounts()
    for win in outputs.get(host, ()):
        if win.index > 0 and win.mix is not None:
            total = total.merge(win.mix)
    return total


def with_replay(result: PointResult, key: str, mix: WorkloadMix, counts: MixCounts) -> PointResult:
    """``result`` with its replay's comparison stored, and ``mix-mismatch`` when it failed
    (a point that failed stays failed, with the comparison kept)."""
    record = replay_record(key, mix, counts)
    meta = replace(result.metadata, replay=record)
    found = verdict(record)
    if found is None or result.status not in (Status.MEASURED, Status.INVALID):
        return replace(result, metadata=meta)
    return replace(
        result,
        status=Status.INVALID,
        reason="; ".join(r for r in (result.reason, found.reason) if r),
        flags=(*result.flags, found.flag),
        metadata=meta,
    )


class Replay(Throughput):
    """The closed-loop method over the customer's mix, checked against the lab's log."""

    def measure(self, ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement:
        """The warm-up, then one repetition a batch until the stop rule is met: each
        window's command carries the target list, and a batch's spec travels as one
        argument (:data:`sizing.load.replay.LIST_LENGTH`), so a batch holds one window."""
        assert point.allocation is not None
        # the replay's generator runs a binary sizing builds and copies (its `built`)
        ctx.tools.ensure(built_for(point.profile.generator), point.clients)
        schedule = Schedule.of(ctx.settings, point.profile)
        rule = stop_rule(schedule)
        outputs: Outputs = {}
        done: list[WindowSpec] = []
        if schedule.warmup_s > 0:
            warm = schedule_windows([schedule.warmup_s])
            failure = self.run_batch(ctx, point, target, warm, schedule.connections, outputs)
            done.extend(warm)
            if failure is not None:
                return self.evaluate(ctx, point, target, outputs, done, schedule)
        last = max(schedule.max_reps, schedule.first_reps)
        for index in range(1, last + 1):  # bounded: a lost window ends it too
            ctx.progress.step(f"measuring {point.key.label()}: repetition {index}")
            batch = schedule_windows([schedule.duration_s], first_index=index)
            failure = self.run_batch(ctx, point, target, batch, schedule.connections, outputs)
            done.extend(batch)
            values = window_rates(point, outputs)
            if failure is not None or len(values) < index or rule.done(values):
                break
        return self.evaluate(ctx, point, target, outputs, done, schedule)

    @staticmethod
    def evaluate(
        ctx: MeasureContext,
        point: PlannedPoint,
        target: Target,
        outputs: Outputs,
        windows: list[WindowSpec],
        schedule: Schedule,
    ) -> Measurement:
        result, samples = Throughput.evaluate(ctx, point, target, outputs, windows, schedule)
        counts = logged_mix(outputs, target.host)
        mix = profile_mix(point.profile)
        return with_replay(result, point.profile.name, mix, counts), samples
