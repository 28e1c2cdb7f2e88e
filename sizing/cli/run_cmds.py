"""The ``run`` command: measure NGINX per core count, HT mode and profile; ``--plan``."""

from __future__ import annotations

import math
import sys
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from sizing import paths
from sizing.cli.app import emit_json, state, warn
from sizing.cli.options import RUN_HT, DbOpt, choice, metavar
from sizing.model import HtChoice, PointResult
from sizing.report.render.points import (
    ceiling_lines,
    left_out_by_default,
    no_valid_figure,
    point_json,
    points_table,
)


class _RichProgress:
    """A transient rich progress bar on stderr, with the time left; silent when stderr is
    not a terminal (notes and warnings are then plain lines)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(stderr=True)
        self.enabled = self.console.is_terminal
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[left]}"),
            console=self.console,
            transient=True,
        )
        self.task: Any = None
        self.total = 0
        self.done = 0
        self.estimate: float | None = None
        self.began = 0.0
        self.said: set[str] = set()  # notes already on stderr: the end does not repeat them

    def __enter__(self) -> _RichProgress:
        if self.enabled:
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None, left="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def start(self, total: int, seconds: float | None = None) -> None:
        self.total, self.estimate, self.began = total, seconds, time.monotonic()
        if self.enabled:
            self.bar.update(self.task, total=total, left=self._left())

    def _left(self) -> str:
        """The time left: the plan's estimate until a point is done, then the pace so far."""
        if self.done and self.total > self.done:
            left: float | None = (
                (time.monotonic() - self.began) / self.done * (self.total - self.done)
            )
        elif not self.done:
            left = self.estimate
        else:
            left = None
        from sizing.plan.dryrun import duration_words

        return f"about {duration_words(left)} left" if left else ""

    def step(self, label: str) -> None:
        if self.enabled:
            self.bar.update(self.task, description=label, left=self._left())

    def advance(self, result: PointResult) -> None:
        self.done += 1
        if self.enabled:
            self.bar.update(self.task, advance=1, left=self._left())
            line = f"{result.key.label()}: {result.status}"
            if result.value is not None:
                line += f" {result.value:,.0f} {result.unit}"
            self.console.log(line)

    def note(self, message: str) -> None:
        self.said.add(message)
        if self.enabled:
            from rich.markup import escape

            self.console.log(f"[yellow]{escape(message)}[/yellow]")
        else:
            warn(message)

    def info(self, message: str) -> None:
        if self.enabled:
            from rich.markup import escape

            self.console.log(escape(message))
        else:
            typer.echo(message, err=True)


def run(
    ctx: typer.Context,
    inventory: Annotated[
        Path,
        typer.Option(
            "-i", "--inventory", help="Ansible inventory (default: inventories/local.yml)."
        ),
    ] = paths.DEFAULT_INVENTORY,
    cores: Annotated[
        str, typer.Option(help="Core counts to measure, comma-separated (powers of two).")
    ] = "1,2,4,8",
    ht: Annotated[
        str,
        typer.Option(
            metavar=metavar(RUN_HT),
            help="Hyper-threading: off (one thread per core), on, or both.",
        ),
    ] = HtChoice.OFF,
    profile: Annotated[
        str, typer.Option(help="Workload profiles from profiles/, comma-separated.")
    ] = "rps,tps",
    duration: Annotated[
        float | None,
        typer.Option(
            min=1, max=3600, help="Seconds per timed repetition (default: the profile's)."
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=100,
            help="Exactly N timed repetitions per point. Default: adaptive, repeat until the "
            "interval of the median (the range of the runs below 6, with its coverage: 75% "
            "for 3) is within ±2% and the runs show no drift (at least the profile's count, "
            "at most --max-repeat).",
        ),
    ] = None,
    max_repeat: Annotated[
        int, typer.Option(min=2, max=100, help="Cap of adaptive repetitions per point.")
    ] = 10,
    warmup: Annotated[
        float | None,
        typer.Option(min=0, max=3600, help="Warm-up seconds before the repetitions."),
    ] = None,
    connections: Annotated[
        int | None,
        typer.Option(min=1, max=1_000_000, help="Connections per client (default: the profile's)."),
    ] = None,
    db: DbOpt = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
    allow_host_reboot: Annotated[
        bool,
        typer.Option(
            "--allow-host-reboot",
            help="Let sizing switch hyper-threading on a hypervisor host (ESXi), which"
            " reboots it. Without it, points needing the other HT state are skipped.",
        ),
    ] = False,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Do not verify hypervisor API TLS certificates (vCenter/ESXi); warns.",
        ),
    ] = False,
    resume: Annotated[
        int | None,
        typer.Option(
            "--resume",
            metavar="RUN_ID",
            help="Measure only what run RUN_ID is missing (failed or never reached points),"
            " with that run's inventory and options, appending to it.",
        ),
    ] = None,
    rates: Annotated[
        str | None,
        typer.Option(
            "--rates",
            metavar="START:STOP:STEP",
            help="Latency profiles: offered request rates, e.g. 1000:10000:1000 or 500,1000"
            " (default: the profile's).",
        ),
    ] = None,
    slo: Annotated[
        str | None,
        typer.Option(
            "--slo",
            help="Latency profiles: find the highest rate meeting this objective to ±2%,"
            " e.g. p95=10ms (mean, p50, p90, p95, p99, max).",
        ),
    ] = None,
    soak: Annotated[
        str | None,
        typer.Option(
            "--soak",
            metavar="DURATION",
            help="Latency profiles: repeat every rate back to back for this long (e.g. 10m),"
            " keeping each repetition.",
        ),
    ] = None,
    plan_only: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Dry run: print the points, hosts, CPU sets and exact wrk commands;"
            " provision and load nothing. Offline: plans on the inventory's declared"
            " sizing_cpu and contacts no host (see --probe).",
        ),
    ] = False,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe",
            help="With --plan: read the hosts' real facts over Ansible and run the"
            " pre-flight checks.",
        ),
    ] = False,
    limit: Annotated[
        str | None,
        typer.Option(
            "--limit",
            "-l",
            metavar="PATTERN",
            help="Ansible host patterns: use only the hosts they match (as"
            " ansible-playbook --limit), e.g. 'r640-01:clients'.",
        ),
    ] = None,
    extra_vars: Annotated[
        list[str] | None,
        typer.Option(
            "--extra-vars",
            "-e",
            metavar="VARS",
            help="Ansible extra vars (key=value, YAML/JSON, or @file), repeatable: given to"
            " every playbook and overriding the inventory's variables, sizing_* included.",
        ),
    ] = None,
    keep_artifacts: Annotated[
        Path | None,
        typer.Option(
            "--keep-artifacts",
            metavar="DIR",
            file_okay=False,
            help="Keep ansible-runner's artifacts (events, output) of every playbook in DIR.",
        ),
    ] = None,
    label: Annotated[
        str, typer.Option(help="A name stored with the run (results, --compare).")
    ] = "",
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            metavar="N",
            help="Measure only N servers of each hardware identity (platform, CPU model and"
            " topology): identical servers share a basis. The plan and the run say which"
            " hosts stand for which.",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Table with spread, latency and reasons in full."),
    ] = False,
    platform: Annotated[
        str | None,
        typer.Option(
            metavar="PLATFORMS",
            help="Measure only servers of these platforms, comma-separated: baremetal,"
            " hypervisor (libvirt and vsphere), libvirt, vsphere. Default: every server.",
        ),
    ] = None,
    skip_preflight: Annotated[
        bool,
        typer.Option(
            "--skip-preflight",
            help="Warn about failed pre-flight checks instead of refusing to run; the"
            " validity guards still judge every point.",
        ),
    ] = False,
    keep_running: Annotated[
        bool,
        typer.Option(
            "--keep-running",
            help="Leave the sizing nginx and upstream running when the run ends (by default"
            " they are stopped at the end, on error and on Ctrl-C).",
        ),
    ] = False,
    unpaired: Annotated[
        bool,
        typer.Option(
            "--unpaired",
            help="Measure the legs of a pair (a guest and its own host's bare metal; HT off"
            " and on of one host) one after the other instead of in alternation; their"
            " overheads and HT gains are then unpaired, with the wider interval.",
        ),
    ] = False,
) -> None:
    """Measure NGINX per core count and HT mode on the inventory's servers, and store it."""
    from sizing import profiles as profiles_mod
    from sizing.extravars import parse_extra_vars
    from sizing.knee import parse_duration_s, parse_rates, parse_slo
    from sizing.plan import parse_cores
    from sizing.plan.settings import MeasureSettings
    from sizing.sweep import RunOptions, exit_status, run_sweep

    for name, v in (("--duration", duration), ("--warmup", warmup)):
        if v is not None and not math.isfinite(v):  # nan passes a range check
            from sizing.errors import UsageError

            raise UsageError(f"{name} must be a number of seconds, not {v}")
    opts = RunOptions(
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
        inventory=inventory,
        cores=parse_cores(cores),
        hts=choice(HtChoice, ht, "--ht", RUN_HT).modes,
        profiles=tuple(profiles_mod.parse_list(profile)),
        db=db or paths.default_db(),
        argv=tuple(sys.argv),
        debug=state.debug,
        allow_host_reboot=allow_host_reboot,
        insecure=insecure,
        skip_preflight=skip_preflight,
        keep_running=keep_running,
        unpaired=unpaired,
        platforms=_parse_platforms(platform),
        probe=probe,
        limit=limit,
        extra_vars=parse_extra_vars(extra_vars or []),
        keep_artifacts=keep_artifacts,
        label=_printable(label),
        sample=sample,
    )
    if sample is not None and sample < 1:
        from sizing.errors import UsageError

        raise UsageError(f"--sample must be at least 1 server per hardware identity, not {sample}")
    if resume is not None:
        opts = _resume_opts(ctx, opts, resume)
        if not plan_only and _complete(opts.db, resume):
            return
    if plan_only:
        _dry_run(opts, json_out, verbose)
        return
    if probe:
        from sizing.errors import UsageError

        raise UsageError("--probe reads the hosts for --plan; give --plan too")
    with _RichProgress() as progress:
        summary = run_sweep(opts, progress)
    evidence = _stored_evidence(opts.db, summary.run_id)
    if json_out:
        emit_json(
            {
                "run_id": summary.run_id,
                "label": opts.label,
                "status": summary.status,
                "points": [
                    {
                        **point_json(p, evidence.get(p.key, {})),
                        **_latency_json(p),
                        "metadata": p.metadata.to_json(),
                    }
                    for p in summary.points
                ],
                "no_valid_figure": no_valid_figure(summary.points, evidence),
                "left_out_by_default": left_out_by_default(summary.points),
            }
        )
    else:
        kept = f", {summary.already} point(s) kept from before" if summary.already else ""
        named = f" {opts.label!r}" if opts.label else ""
        typer.echo(f"run {summary.run_id}{named} ({summary.status}){kept}, results in {opts.db}")
        typer.echo(points_table(summary.points, evidence, verbose=verbose))
        limits = ceiling_lines(summary.points, evidence)
        if limits:
            typer.echo("\n" + "\n".join(limits))
        from sizing.report.render.text import pairs_table

        pairs = pairs_table(summary.points)
        if pairs:
            typer.echo(pairs)
        _latency_tables(summary.points)
        advice = no_valid_figure(summary.points, evidence) or left_out_by_default(summary.points)
        if advice:
            typer.echo("\n" + "\n".join(advice))
    for line in summary.problems:
        if line not in progress.said:  # said when it happened
            warn(line)
    from sizing.sources.fitcache import warm

    warm(opts.db)  # the figures changed: their bootstrap is computed now, not by recommend
    code = exit_status(summary)
    if code:
        # A host or nginx failed: what was measured is stored, the exit code says so.
        raise typer.Exit(int(code))


def _latency_json(p: PointResult) -> dict[str, Any]:
    """A latency point's curve and knee (``run --json``), as the terminal table shows."""
    if not p.metadata.latency.curve:
        return {}
    from sizing.report.render.text import latency_curve_json

    return {"latency": latency_curve_json(p.metadata)}


def _latency_tables(points: Sequence[PointResult]) -> None:
    """After a latency run: one table per point, a row per offered rate, the knee marked."""
    from sizing.report.render.text import latency_curve_text

    for p in points:
        if p.metadata.latency.curve:
            title = f"{p.key.host} {p.key.cores} core(s) HT {p.key.ht} {p.key.profile}"
            typer.echo("")
            typer.echo(latency_curve_text(title, p.metadata))


def _printable(text: str) -> str:
    """A user string shown on terminals later: control characters (escape sequences,
    carriage returns, newlines) become spaces."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text).strip()


def _stored_evidence(db: Path, run_id: int) -> dict[Any, dict[str, Any]]:
    """Each stored point's guards' evidence, read back from the store (as ``results``)."""
    from sizing.report.data.evidence import point_evidence
    from sizing.store import Store

    if not Store.exists(db):
        return {}
    with Store.open_readonly(db) as store:
        env = store.get_run(run_id).environment
        return {
            p.result.key: point_evidence(
                p.result, [s for _, s in store.samples(p.id)], env.get(p.result.key.host)
            )
            for p in store.points(run_id)
        }


def _complete(db: Path, run_id: int) -> bool:
    """``--resume`` of a complete run with nothing to retry (no failed point, none skipped
    for an unreachable host): nothing to measure, said on stdout, exit 0, and the run left
    as it is (not reopened, no host contacted)."""
    from sizing.store import Store
    from sizing.sweep.options import done_keys

    with Store.open_readonly(db) as store:
        run = store.get_run(run_id)
        keys = {p.result.key for p in store.points(run_id)}
        left = keys - done_keys(store, run_id)  # failed, or skipped for an unreachable host
        n = len(keys)
    if run.status != "complete" or left:
        return False
    typer.echo(
        f"run {run_id} is complete: nothing left to measure ({n} point(s) stored; "
        f"`sizing results --run {run_id}` shows them)"
    )
    return True


def _resume_opts(ctx: typer.Context, opts: Any, run_id: int) -> Any:
    """``--resume``: the stored run's options; refuse options that would contradict them."""
    from sizing.errors import UsageError
    from sizing.sweep.options import resume_options, resume_refuses

    given = []
    for option in resume_refuses():
        source = ctx.get_parameter_source(option.replace("-", "_"))
        if source is not None and source.name == "COMMANDLINE":  # typed by the user
            given.append(f"--{option}")
    if given:
        raise UsageError(
            f"--resume {run_id} measures with that run's own inventory and options;"
            f" drop {', '.join(given)}"
        )
    return resume_options(opts, run_id)


def _dry_run(opts: Any, json_out: bool, verbose: bool) -> None:
    """``--plan``: print the plan (per server, with the estimated time; ``--verbose`` or
    ``--json``: every point with every client's command); exit non-zero when a pre-flight
    check fails."""
    from sizing.plan.dryrun import exit_status, plan_text
    from sizing.sweep import plan_sweep

    with _RichProgress() as progress:
        doc = plan_sweep(opts, progress, detail=json_out or verbose)
    if json_out:
        emit_json(doc)
    else:
        typer.echo(plan_text(doc))
    code = exit_status(doc)
    if code:
        raise typer.Exit(int(code))


def _parse_platforms(text: str | None) -> tuple[str, ...]:
    from sizing.errors import UsageError

    if not text:
        return ()
    known = {"baremetal", "hypervisor", "libvirt", "vsphere"}
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    for item in items:
        if item not in known:
            raise UsageError(f"--platform: {item!r} is not one of {', '.join(sorted(known))}")
    return items
