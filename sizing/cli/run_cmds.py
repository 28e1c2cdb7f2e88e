"""The ``run`` command: measure NGINX per core count, HT mode and profile; ``--plan``."""

from __future__ import annotations

import math
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing import paths
from sizing.app.env import current
from sizing.app.status import Planned, exit_status
from sizing.cli.app import emit_json, warn
from sizing.cli.options import RUN_HT, DbOpt, JsonOpt, WorkloadOpt, choice, metavar, run_platforms
from sizing.cli.progress import RichProgress
from sizing.errors import UsageError
from sizing.model import HtChoice

if TYPE_CHECKING:
    from sizing.app.run import RunOptions
    from sizing.model import RunSummary


# -- the options of `sizing run` (adding one: here, and its RunOptions field) --------

InventoryOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "-i",
        "--inventory",
        help="Ansible inventory: a file, a directory or a plugin configuration; repeated,"
        " merged in order as Ansible merges them (default: inventories/local.yml).",
    ),
]
CoresOpt = Annotated[
    str, typer.Option(help="Core counts to measure, comma-separated (powers of two).")
]
HtOpt = Annotated[
    str,
    typer.Option(
        metavar=metavar(RUN_HT),
        help="Hyper-threading: off (one thread per core), on, or both.",
    ),
]
ProfileOpt = Annotated[str, typer.Option(help="Workload profiles from profiles/, comma-separated.")]
DurationOpt = Annotated[
    float | None,
    typer.Option(min=1, max=3600, help="Seconds per timed repetition (default: the profile's)."),
]
RepeatOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=100,
        help="Exactly N timed repetitions per point. Default: adaptive, repeat until the "
        "interval of the median (the range of the runs below 6, with its coverage: 75% "
        "for 3) is within ±2% and the runs show no drift (at least the profile's count, "
        "at most --max-repeat).",
    ),
]
MaxRepeatOpt = Annotated[
    int, typer.Option(min=2, max=100, help="Cap of adaptive repetitions per point.")
]
WarmupOpt = Annotated[
    float | None,
    typer.Option(min=0, max=3600, help="Warm-up seconds before the repetitions."),
]
ConnectionsOpt = Annotated[
    int | None,
    typer.Option(min=1, max=1_000_000, help="Connections per client (default: the profile's)."),
]
AllowHostRebootOpt = Annotated[
    bool,
    typer.Option(
        "--allow-host-reboot",
        help="Let sizing switch hyper-threading on a hypervisor host (ESXi), which"
        " reboots it. Without it, points needing the other HT state are skipped.",
    ),
]
InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Do not verify hypervisor API TLS certificates (vCenter/ESXi); warns.",
    ),
]
ResumeOpt = Annotated[
    int | None,
    typer.Option(
        "--resume",
        metavar="RUN_ID",
        help="Measure only what run RUN_ID is missing (failed or never reached points),"
        " with that run's inventory and options, appending to it.",
    ),
]
RatesOpt = Annotated[
    str | None,
    typer.Option(
        "--rates",
        metavar="START:STOP:STEP",
        help="Latency profiles: offered request rates, e.g. 1000:10000:1000 or 500,1000"
        " (default: the profile's).",
    ),
]
SloOpt = Annotated[
    str | None,
    typer.Option(
        "--slo",
        help="Latency profiles: find the highest rate meeting this objective to ±2%,"
        " e.g. p95=10ms (mean, p50, p90, p95, p99, max).",
    ),
]
SoakOpt = Annotated[
    str | None,
    typer.Option(
        "--soak",
        metavar="DURATION",
        help="Latency profiles: repeat every rate back to back for this long (e.g. 10m),"
        " keeping each repetition.",
    ),
]
PlanOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Dry run: print the points, hosts, CPU sets and exact load-generator commands;"
        " provision and load nothing. Offline: plans on the inventory's declared"
        " sizing_cpu and contacts no host (see --probe).",
    ),
]
ProbeOpt = Annotated[
    bool,
    typer.Option(
        "--probe",
        help="With --plan: read the hosts' real facts over Ansible and run the pre-flight checks.",
    ),
]
LimitOpt = Annotated[
    str | None,
    typer.Option(
        "--limit",
        "-l",
        metavar="PATTERN",
        help="Ansible host patterns: use only the hosts they match (as"
        " ansible-playbook --limit), e.g. 'r640-01:clients'.",
    ),
]
ExtraVarsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--extra-vars",
        "-e",
        metavar="VARS",
        help="Ansible extra vars (key=value, YAML/JSON, or @file), repeatable: given to"
        " every playbook and overriding the inventory's variables, sizing_* included.",
    ),
]
KeepArtifactsOpt = Annotated[
    Path | None,
    typer.Option(
        "--keep-artifacts",
        metavar="DIR",
        file_okay=False,
        help="Keep ansible-runner's artifacts (events, output) of every playbook in DIR.",
    ),
]
LabelOpt = Annotated[str, typer.Option(help="A name stored with the run (results, --compare).")]
SampleOpt = Annotated[
    int | None,
    typer.Option(
        "--sample",
        metavar="N",
        help="Measure only N servers of each hardware identity (platform, CPU model and"
        " topology): identical servers share a basis. The plan and the run say which"
        " hosts stand for which.",
    ),
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Table with spread, latency and reasons in full."),
]
PlatformOpt = Annotated[
    str | None,
    typer.Option(
        metavar="PLATFORMS",
        help="Measure only servers of these platforms, comma-separated: baremetal,"
        " hypervisor (libvirt and vsphere), libvirt, vsphere. Default: every server.",
    ),
]
SkipPreflightOpt = Annotated[
    bool,
    typer.Option(
        "--skip-preflight",
        help="Warn about failed pre-flight checks instead of refusing to run; the"
        " validity guards still judge every point.",
    ),
]
KeepRunningOpt = Annotated[
    bool,
    typer.Option(
        "--keep-running",
        help="Leave the sizing nginx and upstream running when the run ends (by default"
        " they are stopped at the end, on error and on Ctrl-C).",
    ),
]
UnpairedOpt = Annotated[
    bool,
    typer.Option(
        "--unpaired",
        help="Measure the legs of a pair (a guest and its own host's bare metal; HT off"
        " and on of one host) one after the other instead of in alternation; their"
        " overheads and HT gains are then unpaired, with the wider interval.",
    ),
]


def run(
    ctx: typer.Context,
    inventory: InventoryOpt = None,
    cores: CoresOpt = "1,2,4,8",
    ht: HtOpt = HtChoice.OFF,
    profile: ProfileOpt = "rps,tps",
    duration: DurationOpt = None,
    repeat: RepeatOpt = None,
    max_repeat: MaxRepeatOpt = 10,
    warmup: WarmupOpt = None,
    connections: ConnectionsOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    allow_host_reboot: AllowHostRebootOpt = False,
    insecure: InsecureOpt = False,
    resume: ResumeOpt = None,
    rates: RatesOpt = None,
    slo: SloOpt = None,
    soak: SoakOpt = None,
    plan_only: PlanOnlyOpt = False,
    probe: ProbeOpt = False,
    limit: LimitOpt = None,
    extra_vars: ExtraVarsOpt = None,
    keep_artifacts: KeepArtifactsOpt = None,
    label: LabelOpt = "",
    sample: SampleOpt = None,
    verbose: VerboseOpt = False,
    platform: PlatformOpt = None,
    skip_preflight: SkipPreflightOpt = False,
    keep_running: KeepRunningOpt = False,
    unpaired: UnpairedOpt = False,
    workload: WorkloadOpt = None,
) -> None:
    """Measure NGINX per core count and HT mode on the inventory's servers, and store it."""
    # The use case is imported where it is called (_resumed, _plan, _measure): measured with
    # -X importtime, sizing.sweep (ansible-runner, the platform backends) 0.25 s and the
    # plan's and profiles' pydantic models 0.1 s, which every other command's start-up
    # (recommend's above all) would pay at module level
    opts = _options(
        inventory=inventory,
        cores=cores,
        ht=ht,
        # --workload alone replays the workload only; with --profile, both
        profile=None
        if workload and getattr(ctx.get_parameter_source("profile"), "name", "") != "COMMANDLINE"
        else profile,
        workload=workload,
        duration=duration,
        repeat=repeat,
        max_repeat=max_repeat,
        warmup=warmup,
        connections=connections,
        db=db,
        allow_host_reboot=allow_host_reboot,
        insecure=insecure,
        rates=rates,
        slo=slo,
        soak=soak,
        probe=probe,
        limit=limit,
        extra_vars=extra_vars,
        keep_artifacts=keep_artifacts,
        label=label,
        sample=sample,
        platform=platform,
        skip_preflight=skip_preflight,
        keep_running=keep_running,
        unpaired=unpaired,
    )
    if resume is not None:
        got = _resumed(ctx, opts, resume, plan_only)
        if got is None:
            return
        opts = got
    if plan_only:
        _plan(opts, json_out=json_out, verbose=verbose)
        return
    if probe:
        raise UsageError("--probe reads the hosts for --plan; give --plan too")
    _measure(opts, json_out=json_out, verbose=verbose)


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


def _options(
    *,
    inventory: InventoryOpt,
    cores: CoresOpt,
    ht: HtOpt,
    profile: str | None,
    workload: WorkloadOpt,
    duration: DurationOpt,
    repeat: RepeatOpt,
    max_repeat: MaxRepeatOpt,
    warmup: WarmupOpt,
    connections: ConnectionsOpt,
    db: DbOpt,
    allow_host_reboot: AllowHostRebootOpt,
    insecure: InsecureOpt,
    rates: RatesOpt,
    slo: SloOpt,
    soak: SoakOpt,
    probe: ProbeOpt,
    limit: LimitOpt,
    extra_vars: ExtraVarsOpt,
    keep_artifacts: KeepArtifactsOpt,
    label: LabelOpt,
    sample: SampleOpt,
    platform: PlatformOpt,
    skip_preflight: SkipPreflightOpt,
    keep_running: KeepRunningOpt,
    unpaired: UnpairedOpt,
) -> RunOptions:
    """The request of ``sizing run`` from its parsed options, typed as Typer gave them."""
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

    for name, v in (("--duration", duration), ("--warmup", warmup)):
        if v is not None and not math.isfinite(v):  # nan passes a range check
            raise UsageError(f"{name} must be a number of seconds, not {v}")
    if sample is not None and sample < 1:
        raise UsageError(f"--sample must be at least 1 server per hardware identity, not {sample}")
    return RunOptions(
        settings=MeasureSettings(
            rates=parse_rates(rates) if rates else None,
            slo=str(parse_slo(slo)) if slo else None,
            soak_s=parse_duration_s(soak, "--soak") if soak else None,
            duration_s=duration,
            repeat=repeat,
            max_repeat=max_repeat,
            warmup_s=warmup,
            connections=connections,
        ),
        inventory=(inventory or [paths.DEFAULT_INVENTORY])[0],
        more_inventories=tuple((inventory or [])[1:]),
        cores=parse_cores(cores),
        hts=choice(HtChoice, ht, "--ht", RUN_HT).modes,
        profiles=tuple(run_profiles(profile, workload)),
        db=current().database(db),
        argv=tuple(sys.argv),
        debug=current().debug,
        allow_host_reboot=allow_host_reboot,
        insecure=insecure,
        skip_preflight=skip_preflight,
        keep_running=keep_running,
        unpaired=unpaired,
        platforms=run_platforms(platform),
        probe=probe,
        limit=limit,
        extra_vars=parse_extra_vars(extra_vars or []),
        keep_artifacts=keep_artifacts,
        label=_printable(label),
        sample=sample,
    )


def _printable(text: str) -> str:
    """A user string shown on terminals later: control characters (escape sequences,
    carriage returns, newlines) become spaces."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text).strip()
