"""How long a run takes: one estimate, from what each point will really do.

A point's time is its parts, fewest to most: its nginx provisioning, its platform's
configuration (a guest boots, a container starts) when it is the first point of that
configuration, the first batch (the warm-up and the repetitions the interval needs at
least) and, at most, each later repetition the adaptive rule may add, each its own batch
(a start lead and an Ansible round trip beyond its window). A skipped point costs
nothing. What the run does once before its first point (a generator built, the crypto
ceiling, the clients prepared) is named apart, and only what will really happen is
counted (a generator already built costs nothing: the caller says).

:class:`TimeBudget` holds it, per point, so that the plan (``run --plan``), the run's first
line and its progress say the same figures, and the time left is the sum of what is left:
it only falls as points finish (the old pace-based figure jumped by minutes).

The overheads are what ``sizing run`` took on a 2-core VM (benchmarks/estimate prints the
estimate against a real run): assumed per batch, per point and per configuration, not
measured per run; the plan says how much of its figure they are.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sizing.model import Platform, PointKey
from sizing.plan.pairs import Pair
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import WINDOW_GAP_S, MeasureSettings, Schedule

__all__ = [
    "BATCH_S",
    "CONFIG_S",
    "PROVISION_S",
    "Span",
    "TimeBudget",
    "budget",
    "point_span",
]

Span = tuple[float, float]  # seconds, fewest to most

# One batch of windows beyond its windows: the start lead (Ansible reaching every host,
# sizing.measure.windows.point_lead) and the round trip that returns the outputs. Seen on
# the 2-core VM: a 36 s first batch took 37 to 40 s, each later 10 s repetition 12 to 14 s.
BATCH_S: Span = (1.0, 6.0)
# nginx.yml (and the upstream pool's) for a point: 3 s on the 2-core VM.
PROVISION_S: Span = (2.0, 12.0)
# A configuration's platform, once per configuration: nothing on bare metal; a container
# started (podman), a guest booted (TCG boots in 20-30 s) and its facts read.
CONFIG_S: Mapping[str, Span] = {
    Platform.BAREMETAL: (0.0, 3.0),
    Platform.CONTAINER: (3.0, 60.0),
    Platform.LIBVIRT: (20.0, 150.0),
    Platform.VSPHERE: (20.0, 180.0),
}


@dataclass(frozen=True)
class TimeBudget:
    """A run's time: named parts done once before the first point, and each point's span
    (the points left to measure; a pair's legs share their pair's)."""

    once: tuple[tuple[str, Span], ...] = ()
    points: Mapping[PointKey, Span] = field(default_factory=dict)
    configs: int = 0
    assumed_s: float = 0.0  # of the low end: the overheads above (assumed, not measured)

    @property
    def total(self) -> Span:
        """The whole run, fewest to most seconds."""
        return _sum([s for _, s in self.once] + list(self.points.values()))

    def left(self, done: Collection[PointKey]) -> Span:
        """What is left once the points ``done`` are finished: the one-time parts until
        the first point is, then the points not done. Never more than before a point
        finished (every span is at least zero), so the time left only falls."""
        rest = [s for k, s in self.points.items() if k not in done]
        if not any(k in self.points for k in done):
            rest += [s for _, s in self.once]
        return _sum(rest)


def _sum(spans: Iterable[Span]) -> Span:
    spans = list(spans)
    return (sum(s[0] for s in spans), sum(s[1] for s in spans))


def point_span(schedule: Schedule, point: PlannedPoint) -> Span:
    """One unpaired point's measuring, fewest to most seconds, without its provisioning:
    a closed-loop point's first batch (warm-up and the repetitions it needs at least),
    then each repetition the adaptive rule may add, a batch each; a latency point's
    offered rates (a climb may stop at its first), a batch each."""
    if point.profile.mode == "fixed-rate":
        per_rate = schedule.reps_per_rate * (schedule.rate_duration_s + WINDOW_GAP_S)
        rates = len(schedule.rates())
        fixed = bool(schedule.settings.rates) or schedule.slo() is not None
        fewest = rates if fixed else 1
        warm = schedule.rate_warmup_s
        return (
            warm + fewest * (per_rate + BATCH_S[0]),
            warm + rates * (per_rate + BATCH_S[1]),
        )
    # a batch's windows are WINDOW_GAP_S apart (sizing.measure.windows.schedule_windows)
    warm = schedule.warmup_s + WINDOW_GAP_S if schedule.warmup_s else 0.0
    first = schedule.first_reps
    most = schedule.fixed_reps or schedule.max_reps
    batch = warm + first * (schedule.duration_s + WINDOW_GAP_S) - WINDOW_GAP_S
    later = (most - first) * (schedule.duration_s + BATCH_S[1])  # one window a batch
    return (BATCH_S[0] + batch, BATCH_S[1] + batch + later)


def pair_span(schedule: Schedule, legs: int) -> Span:
    """A pair's windows in alternation: one batch per window, a warm-up at each switch of
    leg (about ``legs - 1`` per round, and the first)."""
    window = schedule.duration_s
    warm = schedule.warmup_s + WINDOW_GAP_S if schedule.warmup_s else 0.0
    lo_reps = schedule.fixed_reps or schedule.min_reps
    hi_reps = schedule.fixed_reps or schedule.max_reps

    def at(reps: int, batch: float) -> float:
        return legs * reps * (window + batch) + ((legs - 1) * reps + 1) * warm

    return (at(lo_reps, BATCH_S[0]), at(hi_reps, BATCH_S[1]))


def budget(
    settings: MeasureSettings,
    measured: Sequence[PlannedPoint],
    pairs: Sequence[Pair] = (),
    once: Sequence[tuple[str, Span]] = (),
) -> TimeBudget:
    """The time of the points left to measure (``measured``: none skipped or stored),
    their pairs, and the one-time parts the caller found will happen (``once``)."""
    spans: dict[PointKey, Span] = {}
    assumed = 0.0
    seen: set[object] = set()

    def setup(p: PlannedPoint) -> Span:
        nonlocal assumed
        lo, hi = PROVISION_S
        if p.config not in seen:
            seen.add(p.config)
            c = CONFIG_S.get(str(p.key.platform), CONFIG_S[Platform.BAREMETAL])
            lo, hi = lo + c[0], hi + c[1]
        assumed += lo
        return (lo, hi)

    keys = {p.key for p in measured}
    for pair in pairs:
        legs = [leg for leg in pair.legs if leg.key in keys]
        if not legs:
            continue
        sch = Schedule.of(settings, pair.a.profile)
        lo, hi = pair_span(sch, len(legs))
        assumed += len(legs) * (sch.fixed_reps or sch.min_reps) * BATCH_S[0]
        for leg in legs:
            s = setup(leg)
            spans[leg.key] = (s[0] + lo / len(legs), s[1] + hi / len(legs))
    for p in measured:
        if p.key in spans:
            continue
        s = setup(p)
        lo, hi = point_span(Schedule.of(settings, p.profile), p)
        spans[p.key] = (s[0] + lo, s[1] + hi)
        assumed += BATCH_S[0]
    assumed += sum(s[0] for _, s in once)
    return TimeBudget(tuple(once), spans, len(seen), assumed)
