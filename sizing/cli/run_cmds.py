"""Commands that measure and inspect: ``run``, ``results``, ``inventory check``."""

from __future__ import annotations

import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from sizing import paths
from sizing.cli.app import emit_json, state, warn
from sizing.cli.options import DbOpt, EmulatedOpt, VirtualizedOpt
from sizing.model import PointResult
from sizing.report.render.text import point_json, points_table


class HtChoice(StrEnum):
    off = "off"
    on = "on"
    both = "both"


class _RichProgress:
    """A transient rich progress bar on stderr; silent when stderr is not a terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(stderr=True)
        self.enabled = self.console.is_terminal
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=self.console,
            transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> _RichProgress:
        if self.enabled:
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def start(self, total: int) -> None:
        if self.enabled:
            self.bar.update(self.task, total=total)

    def step(self, label: str) -> None:
        if self.enabled:
            self.bar.update(self.task, description=label)

    def advance(self, result: PointResult) -> None:
        if self.enabled:
            self.bar.advance(self.task)
            line = f"{result.key.label()}: {result.status}"
            if result.value is not None:
                line += f" {result.value:,.0f} {result.unit}"
            self.console.log(line)

    def note(self, message: str) -> None:
        if self.enabled:
            self.console.log(f"[yellow]{message}[/yellow]")
        else:
            warn(message)


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
        HtChoice, typer.Option(help="Hyper-threading: off (one thread per core), on, or both.")
    ] = HtChoice.off,
    profile: Annotated[
        str, typer.Option(help="Workload profiles from profiles/, comma-separated.")
    ] = "rps,tps",
    duration: Annotated[
        float | None,
        typer.Option(min=1, help="Seconds per timed repetition (default: the profile's)."),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=100,
            help="Exactly N timed repetitions per point. Default: adaptive, repeat until the "
            "95% confidence interval is within ±2% (at least the profile's count, at most "
            "--max-repeat).",
        ),
    ] = None,
    max_repeat: Annotated[
        int, typer.Option(min=2, max=100, help="Cap of adaptive repetitions per point.")
    ] = 10,
    warmup: Annotated[
        float | None, typer.Option(min=0, help="Warm-up seconds before the repetitions.")
    ] = None,
    connections: Annotated[
        int | None, typer.Option(min=1, help="Connections per client (default: the profile's).")
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
            help="Dry run: read host facts, run the pre-flight checks and print the points,"
            " hosts, CPU sets and exact wrk commands; provision and load nothing.",
        ),
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
) -> None:
    """Measure NGINX per core count and HT mode on the inventory's servers, and store it."""
    from sizing import profiles as profiles_mod
    from sizing.knee import parse_duration_s, parse_rates, parse_slo
    from sizing.plan import parse_cores, parse_ht
    from sizing.plan.settings import MeasureSettings
    from sizing.sweep import RunOptions, exit_status, run_sweep

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
        hts=parse_ht(ht.value),
        profiles=tuple(profiles_mod.parse_list(profile)),
        db=db or paths.default_db(),
        argv=tuple(sys.argv),
        debug=state.debug,
        allow_host_reboot=allow_host_reboot,
        insecure=insecure,
        skip_preflight=skip_preflight,
        platforms=_parse_platforms(platform),
    )
    if resume is not None:
        opts = _resume_opts(ctx, opts, resume)
    if plan_only:
        _dry_run(opts, json_out)
        return
    with _RichProgress() as progress:
        summary = run_sweep(opts, progress)
    if json_out:
        emit_json(
            {
                "run_id": summary.run_id,
                "status": summary.status,
                "points": [point_json(p) for p in summary.points],
            }
        )
    else:
        kept = f", {summary.already} point(s) kept from before" if summary.already else ""
        typer.echo(f"run {summary.run_id} ({summary.status}){kept}, results in {opts.db}")
        typer.echo(points_table(summary.points))
    for line in summary.problems:
        warn(line)
    code = exit_status(summary)
    if code:
        # A host or nginx failed: what was measured is stored, the exit code says so.
        raise typer.Exit(int(code))


_RESUME_FIXED = (
    "inventory",
    "cores",
    "ht",
    "profile",
    "duration",
    "repeat",
    "warmup",
    "connections",
    "rates",
    "slo",
    "soak",
)


def _resume_opts(ctx: typer.Context, opts: Any, run_id: int) -> Any:
    """``--resume``: the stored run's options; refuse options that would contradict them."""
    from sizing.errors import UsageError
    from sizing.sweep import resume_options

    given = []
    for name in _RESUME_FIXED:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":  # typed by the user
            given.append(f"--{name}")
    if given:
        raise UsageError(
            f"--resume {run_id} measures with that run's own inventory and options;"
            f" drop {', '.join(given)}"
        )
    return resume_options(opts, run_id)


def _dry_run(opts: Any, json_out: bool) -> None:
    """``--plan``: print the plan; exit non-zero when a pre-flight check fails."""
    from sizing.plan.dryrun import exit_status, plan_text
    from sizing.sweep import plan_sweep

    with _RichProgress() as progress:
        doc = plan_sweep(opts, progress)
    if json_out:
        emit_json(doc)
    else:
        typer.echo(plan_text(doc))
    code = exit_status(doc)
    if code:
        raise typer.Exit(int(code))


def results(
    run_id: Annotated[
        int | None, typer.Option("--run", help="Show only this run (default: all runs).")
    ] = None,
    db: DbOpt = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
    compare: Annotated[
        tuple[int, int] | None,
        typer.Option(
            metavar="RUN_A RUN_B",
            help="List what differs between two runs: environments and figures.",
        ),
    ] = None,
    bases: Annotated[
        bool,
        typer.Option(
            "--bases",
            help="List the sizing bases (measured and reference): hardware, workload, "
            "software, core counts, flags, price, and which one recommend/table/guide use.",
        ),
    ] = False,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
) -> None:
    """List stored runs and their points, compare two runs, or list the sizing bases."""
    from sizing.report.render.text import pairs_table
    from sizing.store import Store

    path = db or paths.default_db()
    if bases:
        _bases(path, json_out, include_virtualized, include_emulated)
        return
    if not Store.exists(path):
        if compare is not None:
            from sizing.errors import UsageError

            raise UsageError(f"--compare: {path} does not exist; nothing measured yet")
        if json_out:
            emit_json({"db": str(path), "runs": []})
        else:
            typer.echo(f"nothing measured yet ({path} does not exist); try: sizing run")
        return
    if compare is not None:
        with Store.open_readonly(path) as store:
            _compare(store, compare[0], compare[1], json_out)
        return
    with Store.open_readonly(path) as store:
        runs = [r for r in store.runs() if run_id is None or r.id == run_id]
        if run_id is not None and not runs:
            from sizing.errors import UsageError

            raise UsageError(f"--run: no run {run_id} in {path}")
        if json_out:
            doc = {"db": str(path), "runs": []}
            for r in runs:
                pts = store.points(r.id)
                doc["runs"].append(  # type: ignore[attr-defined]
                    {
                        "run_id": r.id,
                        "started_at": r.started_at,
                        "finished_at": r.finished_at,
                        "status": r.status,
                        "inventory": r.inventory,
                        "tool_version": r.tool_version,
                        "options": r.options,
                        "points": [
                            {**point_json(p.result), "metadata": p.result.metadata} for p in pts
                        ],
                    }
                )
            emit_json(doc)
            return
        for r in runs:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
            typer.echo(f"run {r.id}  {when}  {r.status}  inventory {r.inventory}")
            results_of_run = [p.result for p in store.points(r.id)]
            if results_of_run:
                typer.echo(points_table(results_of_run))
                pairs = pairs_table(results_of_run)
                if pairs:
                    typer.echo(pairs)
            typer.echo("")


def _bases(path: Path, json_out: bool, include_virtualized: bool, include_emulated: bool) -> None:
    """``results --bases``: every basis, and the one the engine commands would choose."""
    from sizing.report.render.text import bases_rows, bases_text, basis_json
    from sizing.sources import Sources, load_bases

    inputs = load_bases(
        Sources(db=path),
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
    )
    rows = bases_rows(
        inputs.bases,
        inputs.choice,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
    )
    if json_out:
        emit_json({"db": str(path), "bases": rows, "basis": basis_json(inputs.choice)})
    else:
        typer.echo(bases_text(rows, inputs.choice))


def _hypervisor_detail(h: Any, file: Path, inv: Any = None) -> dict[str, Any]:
    """What a guest's backend says about it (endpoint, VM, host HT); {} for bare metal."""
    from sizing.provision.platforms import BackendOptions, describe_host

    return describe_host(h, inv, BackendOptions(notify=warn, inventory=inv))


def inventory_check(
    file: Annotated[Path, typer.Argument(help="Inventory YAML file.")] = paths.DEFAULT_INVENTORY,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
) -> None:
    """Validate an inventory and print what sizing understood of it."""
    from tabulate import tabulate

    from sizing.inventory import load_inventory

    inv = load_inventory(file)
    rows = []
    doc: dict[str, Any] = {"inventory": str(file), "hosts": []}
    for h in inv.hosts.values():
        cpu = h.sizing.cpu
        cpu_text = "-"
        if cpu is not None:
            cpu_text = (
                f"{cpu.sockets}x{cpu.cores_per_socket} cores, {cpu.threads_per_core} thr/core"
                + (f" ({cpu.model})" if cpu.model else "")
            )
        cost = "-"
        if h.sizing.price_usd is not None:
            cost = f"${h.sizing.price_usd:,.0f}"
        elif h.sizing.cost_ref:
            cost = h.sizing.cost_ref
        conn = str(h.variables.get("ansible_connection", "ssh"))
        rows.append(
            [
                h.name,
                ",".join(sorted(h.roles)) or "-",
                str(h.platform),
                h.address,
                conn,
                cpu_text,
                cost,
            ]
        )
        doc["hosts"].append(
            {
                "name": h.name,
                "roles": sorted(h.roles),
                "platform": str(h.platform),
                "address": h.address,
                "connection": conn,
                "cpu": None if cpu is None else cpu.model_dump(),
                "price_usd": h.sizing.price_usd,
                "cost_ref": h.sizing.cost_ref,
                "groups": list(h.groups),
                **_hypervisor_detail(h, file, inv),
            }
        )
    if json_out:
        emit_json(doc)
        return
    typer.echo(f"{file}: {len(inv.servers)} server(s), {len(inv.clients)} client(s)")
    typer.echo(
        tabulate(
            rows,
            headers=["host", "roles", "platform", "address", "connection", "cpu", "cost"],
            tablefmt="simple",
            disable_numparse=True,
        )
    )
    for host in doc["hosts"]:
        if "hypervisor" in host:
            typer.echo(f"{host['name']}: {host['hypervisor'].get('summary', host['hypervisor'])}")


def _compare(store: Any, run_a: int, run_b: int, json_out: bool) -> None:
    from sizing.engine.compare import environment_diff, figure_diff
    from sizing.errors import SizingError, UsageError
    from sizing.report.render.text import comparison_json, comparison_text

    try:
        ra, rb = store.get_run(run_a), store.get_run(run_b)
    except SizingError as exc:
        raise UsageError(f"--compare: {exc}") from None
    env = environment_diff(ra.environment, rb.environment)
    figs = figure_diff(
        [p.result for p in store.points(run_a)], [p.result for p in store.points(run_b)]
    )
    if json_out:
        emit_json(comparison_json(run_a, run_b, env, figs))
    else:
        typer.echo(comparison_text(run_a, run_b, env, figs))


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
