"""The ``run`` command: measure NGINX per core count, HT mode and profile; ``--plan``.

Its options are declared once, on the fields of :class:`sizing.cli.run_args.RunArgs`, and
arrive here as one object."""

from __future__ import annotations

import math
import sys
import unicodedata
from typing import TYPE_CHECKING, Any

import typer

from sizing import paths
from sizing.app.env import current
from sizing.app.status import Planned, exit_status
from sizing.cli.app import emit_json, warn
from sizing.cli.declared import same_named, takes
from sizing.cli.options import RUN_HT, choice, run_platforms
from sizing.cli.progress import RichProgress
from sizing.cli.run_args import RunArgs
from sizing.errors import UsageError
from sizing.model import HtChoice

if TYPE_CHECKING:
    from sizing.app.run import RunOptions
    from sizing.model import RunSummary


@takes(RunArgs)
def run(ctx: typer.Context, args: RunArgs) -> None:
    """Measure NGINX per core count and HT mode on the inventory's servers, and store it."""
    # The use case is imported where it is called (_resumed, _plan, _measure): measured with
    # -X importtime, sizing.sweep (ansible-runner, the platform backends) 0.25 s and the
    # plan's and profiles' pydantic models 0.1 s, which every other command's start-up
    # (recommend's above all) would pay at module level
    typed_profile = getattr(ctx.get_parameter_source("profile"), "name", "") == "COMMANDLINE"
    # --workload alone replays the workload only; with --profile, both
    opts = _options(args, None if args.workload and not typed_profile else args.profile)
    if args.resume is not None:
        got = _resumed(ctx, opts, args.resume, args.plan_only)
        if got is None:
            return
        opts = got
    if args.plan_only:
        _plan(opts, json_out=args.json_out, verbose=args.verbose)
        return
    if args.probe:
        raise UsageError("--probe reads the hosts for --plan; give --plan too")
    _measure(opts, json_out=args.json_out, verbose=args.verbose)


def _measure(opts: RunOptions, *, json_out: bool, verbose: bool) -> None:
    """The run itself, what it measured, the problems it met, and its exit code."""
    from sizing.app import run as app_run
    from sizing.cli.run_render import render_run  # the renderers load the engine

    with RichProgress() as progress:
        measured = app_run.measure(opts, progress)
    render_run(measured, opts.label, opts.db, json_out=json_out, verbose=verbose)
    for line in measured.summary.problems:
        if line not in progress.said:  # said when it happened
            warn(line)
    # A host or nginx failed: what was measured is stored, the exit code says so.
    _exit(measured.summary)


def _resumed(
    ctx: typer.Context, opts: RunOptions, run_id: int, plan_only: bool
) -> RunOptions | None:
    """``--resume RUN``: the run's own options (the ones typed beside it checked), or None
    when it is complete and there is nothing left to measure (said)."""
    from sizing.app import run as app_run

    if ctx.params.get("workload") is not None:  # the stored run's profiles hold it already
        raise UsageError(f"--resume {run_id} replays that run's own workload; drop --workload")
    typed = [
        n
        for n in ctx.params
        if (s := ctx.get_parameter_source(n)) is not None and s.name == "COMMANDLINE"
    ]
    resumed = app_run.resume(opts, run_id, typed)
    if resumed.complete and not plan_only:
        typer.echo(
            f"run {run_id} is complete: nothing left to measure ({resumed.points} point(s)"
            f" stored; `sizing results --run {run_id}` shows them)"
        )
        return None
    return resumed.opts


def _plan(opts: RunOptions, *, json_out: bool, verbose: bool) -> None:
    """``run --plan``: the plan document (``--json``) or its text, and its exit code."""
    from sizing.app import run as app_run

    with RichProgress() as progress:
        planned = app_run.plan(opts, progress, detail=json_out or verbose)
    if json_out:
        emit_json(planned.doc.to_json())
    else:
        typer.echo(app_run.plan_text(planned.doc))
    if planned.doc.nothing_to_measure:
        typer.echo(f"error: nothing to measure: {planned.doc.nothing_to_measure}", err=True)
    _exit(planned)


def _exit(outcome: RunSummary | Planned) -> None:
    code = exit_status(outcome)
    if code:
        raise typer.Exit(int(code))


def _options(a: RunArgs, profile: str | None) -> RunOptions:
    """The request of ``sizing run`` from its parsed options (``profile``: the profiles
    asked for, None for the workload's alone). The options read here are named; every other
    one goes to the field of its name of ``RunOptions`` or its ``MeasureSettings`` as given."""
    # deferred, as in run: the profiles' and the plan's pydantic models, the sweep
    from sizing.app.run import (
        MeasureSettings,
        RunOptions,
        parse_cores,
        parse_duration_s,
        parse_extra_vars,
        parse_rates,
        parse_slo,
        run_profiles,
    )

    for name, v in (("--duration", a.duration), ("--warmup", a.warmup)):
        if v is not None and not math.isfinite(v):  # nan passes a range check
            raise UsageError(f"{name} must be a number of seconds, not {v}")
    if a.sample is not None and a.sample < 1:
        raise UsageError(
            f"--sample must be at least 1 server per hardware identity, not {a.sample}"
        )
    settings: dict[str, Any] = {
        "rates": parse_rates(a.rates) if a.rates else None,
        "slo": str(parse_slo(a.slo)) if a.slo else None,
        "soak_s": parse_duration_s(a.soak, "--soak") if a.soak else None,
        "duration_s": a.duration,
        "warmup_s": a.warmup,
    }
    read: dict[str, Any] = {
        "settings": MeasureSettings(**same_named(a, MeasureSettings, settings), **settings),
        "inventory": (a.inventory or [paths.DEFAULT_INVENTORY])[0],
        "more_inventories": tuple((a.inventory or [])[1:]),
        "cores": parse_cores(a.cores),
        "hts": choice(HtChoice, a.ht, "--ht", RUN_HT).modes,
        "profiles": tuple(run_profiles(profile, a.workload)),
        "db": current().database(a.db),
        "argv": tuple(sys.argv),
        "debug": current().debug,
        "platforms": run_platforms(a.platform),
        "extra_vars": parse_extra_vars(a.extra_vars or []),
        "label": _printable(a.label),
    }
    return RunOptions(**same_named(a, RunOptions, read), **read)


def _printable(text: str) -> str:
    """A user string shown on terminals later: control characters (escape sequences,
    carriage returns, newlines) become spaces."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text).strip()
