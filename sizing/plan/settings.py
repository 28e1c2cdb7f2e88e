"""The measurement settings of a run and the ONE rule that turns them into a schedule.

``sizing run`` options (``--duration``, ``--warmup``, ``--repeat``, ``--max-repeat``,
``--connections``, ``--rates``, ``--slo``, ``--soak``) override a profile's own values.
:meth:`Schedule.of` is the only place that combines the two: the sweep, the pre-flight
checks, the dry run and every measurement method read their windows from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.knee import Slo
from sizing.option_text import parse_rates, parse_slo
from sizing.profiles import Profile

__all__ = [
    "DEFAULT_RATES",
    "START_LEAD_S",
    "WINDOW_GAP_S",
    "MeasureSettings",
    "Schedule",
]

START_LEAD_S = 4.0  # time for Ansible to reach every host before the common start
WINDOW_GAP_S = 1.0  # idle gap between windows: lets TIME_WAIT and the CPUs settle
DEFAULT_RATES = "1000:10000:1000"  # latency profiles without rates of their own


@dataclass(frozen=True)
class MeasureSettings:
    """What the user asked of every point (``None``: the profile's own value)."""

    duration_s: float | None = None
    warmup_s: float | None = None
    repeat: int | None = None  # --repeat N: exactly N repetitions, no adaptation
    max_repeat: int = 10  # the cap of adaptive repetitions
    connections: int | None = None
    # latency profiles (sizing.measure.fixedrate): offered rates, SLO search, soak period
    rates: tuple[int, ...] | None = None  # --rates 1000:10000:1000
    slo: str | None = None  # --slo p95=10ms
    soak_s: float | None = None  # --soak DURATION: repeat every rate for this long


@dataclass(frozen=True)
class Schedule:
    """The windows of one profile's points under the run's settings.

    Closed-loop windows take whole seconds; open-loop windows (the fixed rates) take the
    seconds as given.
    """

    settings: MeasureSettings
    profile: Profile
    connections: int  # per client
    duration_s: int  # closed loop: whole seconds per timed repetition
    warmup_s: int  # closed loop: whole seconds of warm-up, 0 for none
    min_reps: int  # adaptive repetitions: at least this many ...
    max_reps: int  # ... at most this many
    fixed_reps: int | None  # --repeat N: exactly N
    rate_duration_s: float  # open loop: seconds per window at one rate
    rate_warmup_s: float  # open loop: seconds of warm-up at the first rate, 0 for none
    reps_per_rate: int  # open loop: repetitions of every rate (the soak)

    @classmethod
    def of(cls, settings: MeasureSettings, profile: Profile) -> Schedule:
        """The one rule for warm-up, duration, repetitions and the soak."""
        seconds = settings.duration_s or profile.duration_s
        warmup = profile.warmup_s if settings.warmup_s is None else settings.warmup_s
        rate_duration = float(max(1.0, seconds))
        reps_per_rate = 1
        if settings.soak_s:
            reps_per_rate = max(1, int(settings.soak_s // (rate_duration + WINDOW_GAP_S)))
        elif settings.repeat:
            reps_per_rate = settings.repeat
        return cls(
            settings=settings,
            profile=profile,
            connections=settings.connections or profile.connections,
            duration_s=max(1, round(seconds)),
            warmup_s=max(1, round(warmup)) if warmup > 0 else 0,
            min_reps=min(profile.repetitions, settings.max_repeat),
            max_reps=settings.max_repeat,
            fixed_reps=settings.repeat,
            rate_duration_s=rate_duration,
            rate_warmup_s=float(max(1.0, warmup)) if warmup > 0 else 0.0,
            reps_per_rate=reps_per_rate,
        )

    @property
    def first_reps(self) -> int:
        """Timed repetitions of the first batch: all of them with ``--repeat``."""
        return self.fixed_reps if self.fixed_reps is not None else self.min_reps

    def rates(self) -> tuple[int, ...]:
        """The offered rates of a latency point (raises UsageError for a bad profile)."""
        if self.settings.rates:
            return tuple(self.settings.rates)
        return parse_rates(self.profile.rates or DEFAULT_RATES)

    def slo(self) -> Slo | None:
        """The latency objective of a latency point, if any (``--slo`` wins)."""
        text = self.settings.slo or self.profile.slo
        return parse_slo(text) if text else None
