"""``sizing run``: measure (:func:`measure`), plan (:func:`plan`) and resume (:func:`resume`).

The request is :class:`sizing.sweep.RunOptions` (with its :class:`MeasureSettings`, and the
parsers of the option values it is built from, here for the CLI); ``--resume`` restores it
from the stored run (:func:`sizing.sweep.options.resume_options`), refusing the options it
fixes when they were typed beside it. The plan comes back typed
(:class:`~sizing.plan.document.PlanDocument`, rendered by :func:`plan_text`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sizing.app.results import points_with_evidence
from sizing.app.status import Planned
from sizing.errors import UsageError
from sizing.extravars import parse_extra_vars
from sizing.measure.measure_context import Progress
from sizing.model import PointKey, RunSummary
from sizing.option_text import parse_duration_s, parse_rates, parse_slo
from sizing.plan import parse_cores
from sizing.plan.dryrun import duration_words, span_words
from sizing.plan.dryrun_text import plan_text
from sizing.plan.estimate import TimeBudget
from sizing.plan.loadspec import generator_problem
from sizing.plan.replay import workload_profile
from sizing.plan.settings import MeasureSettings
from sizing.profiles import Profile, parse_list
from sizing.report.data.evidence import NO_EVIDENCE, Evidence
from sizing.report.data.pairs import PairView, pair_views
from sizing.sources.fitcache import warm
from sizing.store import Store
from sizing.sweep import RunOptions, plan_sweep, run_sweep
from sizing.sweep.options import done_keys, resume_options, resume_refuses

__all__ = [
    "MeasureSettings",
    "Measured",
    "Resumed",
    "RunOptions",
    "TimeBudget",
    "duration_words",
    "measure",
    "parse_cores",
    "parse_duration_s",
    "parse_extra_vars",
    "parse_profiles",
    "run_profiles",
    "parse_rates",
    "parse_slo",
    "plan",
    "plan_text",
    "resume",
    "span_words",
]


@dataclass(frozen=True)
class Resumed:
    """``--resume``: the stored run's options; ``complete`` when the run is complete with
    no failed point and none skipped for an unreachable host (nothing to measure: the run
    is left as it is, not reopened, no host contacted); ``points``: how many it stored."""

    opts: RunOptions
    complete: bool
    points: int


@dataclass(frozen=True)
class Measured:
    """What a run did, and each stored point's guards' evidence read back from the store
    (as ``results`` shows it)."""

    summary: RunSummary
    evidence: dict[PointKey, Evidence]

    def evidence_of(self, key: PointKey) -> Evidence:
        """A point's evidence (none stored: :data:`NO_EVIDENCE`)."""
        return self.evidence.get(key, NO_EVIDENCE)

    @property
    def pairs(self) -> list[PairView]:
        """The run's overheads and HT gains (:func:`pair_views`)."""
        return pair_views(self.summary.points)


def parse_profiles(text: str) -> list[Profile]:
    """``--profile rps,tps``, each checked against its generator's capabilities (one line
    naming the profile and the field when its generator cannot measure it)."""
    got = parse_list(text)
    for prof in got:
        why = generator_problem(prof)
        if why:
            raise UsageError(why)
    return got


def run_profiles(text: str | None, workload: Path | None) -> list[Profile]:
    """``--profile`` and ``--workload DEMAND.yml``: the named profiles, then the replay of
    the demand's workload (with ``--workload`` alone, only the replay)."""
    got = parse_profiles(text or "rps,tps") if text is not None or workload is None else []
    if workload is not None:
        got.append(workload_profile(workload))
    return got


def resume(opts: RunOptions, run_id: int, typed: Iterable[str] = ()) -> Resumed:
    """``--resume RUN_ID``: the stored run's options (``typed``: the ``run`` options given on
    the command line; those the stored run fixes are refused) and whether it is complete."""
    given = [f"--{o}" for o in resume_refuses() if o.replace("-", "_") in set(typed)]
    if given:
        raise UsageError(
            f"--resume {run_id} measures with that run's own inventory and options;"
            f" drop {', '.join(given)}"
        )
    restored = resume_options(opts, run_id)
    with Store.open_readonly(restored.db) as store:
        run = store.get_run(run_id)
        keys = {p.result.key for p in store.points(run_id)}
        left = keys - done_keys(store, run_id)  # failed, or skipped for an unreachable host
    return Resumed(restored, run.status == "complete" and not left, len(keys))


def plan(opts: RunOptions, progress: Progress, *, detail: bool) -> Planned:
    """``--plan``: the dry-run document (``detail``: every point with every command)."""
    return Planned(plan_sweep(opts, progress, detail=detail))


def measure(opts: RunOptions, progress: Progress) -> Measured:
    """Measure and store every point; read back each point's evidence; compute the
    figures' bootstrap now (the figures changed), not in the next ``recommend``."""
    summary = run_sweep(opts, progress)
    evidence = stored_evidence(opts, summary.run_id)
    warm(opts.db)
    return Measured(summary, evidence)


def stored_evidence(opts: RunOptions, run_id: int) -> dict[PointKey, Evidence]:
    """Each stored point's guards' evidence, read back from the store (as ``results``)."""
    if not Store.exists(opts.db):
        return {}
    with Store.open_readonly(opts.db) as store:
        return {p.key: ev for p, ev in points_with_evidence(store, run_id)}
