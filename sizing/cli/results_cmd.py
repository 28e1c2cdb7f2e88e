"""The ``results`` command: stored runs and points, their bases, CSV, and the comparison
of runs."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sizing.app.env import current
from sizing.cli.app import columns, emit_json, warn
from sizing.cli.options import DbOpt, EmulatedOpt, JsonOpt, VirtualizedOpt
from sizing.errors import SizingError, UsageError
from sizing.paths import Database
from sizing.textfit import fold

if TYPE_CHECKING:
    from sizing.app.results import StoredRun


RunsGivenOpt = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[RUN]...",
        help="With --compare: the runs to compare, by id or --label (two or more).",
        show_default=False,
    ),
]
RunIdOpt = Annotated[
    str | None,
    typer.Option("--run", help="Show only this run, by id or label (default: all runs)."),
]
CsvOutOpt = Annotated[bool, typer.Option("--csv", help="Print one CSV row per point (see --out).")]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", dir_okay=False, help="With --csv: write to this file."),
]
CompareOpt = Annotated[
    bool,
    typer.Option(
        "--compare",
        help="List what differs between two or more runs (RUN...): environments and"
        " figures, each run against the first.",
    ),
]
BasesOpt = Annotated[
    bool,
    typer.Option(
        "--bases",
        help="List the sizing bases (measured and reference): hardware, workload, "
        "software, core counts, flags, price, and which one recommend/table/guide use.",
    ),
]
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Wider tables: spread, latency, reasons, software, price."
    ),
]


def results(
    runs_given: RunsGivenOpt = None,
    run_id: RunIdOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOutOpt = False,
    out: OutOpt = None,
    compare: CompareOpt = False,
    bases: BasesOpt = False,
    verbose: VerboseOpt = False,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
) -> None:
    """List stored runs and their points, compare runs, export CSV, or list the bases."""
    from sizing.app import results as app_results  # the store and the evidence (start-up)

    path = current().database(db)
    if runs_given and not compare:
        raise UsageError(f"unexpected argument {runs_given[0]!r}: runs are compared with --compare")
    if compare and len(runs_given or []) < 2:
        raise UsageError("--compare needs two or more runs (ids or labels), e.g. --compare 1 2")
    if out is not None and not csv_out:
        raise UsageError("--out writes the --csv export; give --csv too")
    if bases:
        _bases(path, json_out, include_virtualized, include_emulated, verbose)
        return
    if compare:
        _compare(path, runs_given or [], json_out)
        return
    if not app_results.exists(path) and not (json_out or csv_out):
        typer.echo(f"nothing measured yet; try: sizing run\n({path} does not exist)")
        return
    shown = app_results.read(path, run_id)
    if csv_out:
        _write_csv([(r.record.id, r.record.label, p, ev) for r in shown for p, ev in r.points], out)
    elif json_out:
        emit_json({"db": str(path), "runs": [_run_json(r) for r in shown]})
    else:
        for r in shown:
            typer.echo(_run_text(r, verbose))


def _run_json(r: StoredRun) -> dict[str, Any]:
    # deferred, as the store and the evidence are (sizing.app.results): the renderers load
    # the engine, which no other command's start needs
    from sizing.report.render.points import comparisons_json, point_json

    rec = r.record
    return {
        "run_id": rec.id,
        "label": rec.label,
        "started_at": rec.started_at,
        "finished_at": rec.finished_at,
        "status": r.status,
        "stored_status": rec.status,
        "inventory": rec.inventory,
        "note": rec.note or None,  # why it failed or stopped, or what went wrong meanwhile
        "tool_version": rec.tool_version,
        "options": r.options_json,
        "points": [{**point_json(p, ev), "metadata": p.metadata.to_json()} for p, ev in r.points],
        "comparisons": comparisons_json(r.pairs),
    }


def _run_text(r: StoredRun, verbose: bool) -> str:
    from sizing.report.render.points import ceiling_lines, points_table
    from sizing.report.render.run_text import pairs_table

    rec = r.record
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(rec.started_at))
    named = f" {rec.label!r}" if rec.label else ""
    status = r.status
    if status == "abandoned":
        status = (
            f"abandoned (its process is gone; `sizing run --resume {rec.id}` measures the rest)"
        )
    # an abandoned run's status and a long inventory path go on, indented deeper than the
    # note under it (issue 62's width)
    header = f"run {rec.id}{named}  {when}  {status}  inventory {rec.inventory}"
    out = fold(header, columns(), subsequent="    ")
    if rec.note:  # why it failed or stopped (a run refused by a host's lock has no point)
        out += textwrap.wrap(rec.note, columns(), initial_indent="  ", subsequent_indent="    ")
    if r.points:
        points = [p for p, _ in r.points]
        evidence = {p.key: ev for p, ev in r.points}
        width = columns()
        out.append(points_table(points, evidence, verbose=verbose, width=width))
        limits = ceiling_lines(points, evidence, width)
        if limits:
            out.append("\n" + "\n".join(limits))
        pairs = pairs_table(r.pairs, width)
        if pairs:
            out.append(pairs)
    return "\n".join(out) + "\n"


def _write_csv(rows: list[Any], out: Path | None) -> None:
    from sizing.report.render.points import points_csv  # deferred, as in results

    text = points_csv(rows)
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SizingError(f"{out}: cannot write the CSV: {exc.strerror or exc}") from None
    warn(f"{len(rows)} point(s) written to {out}")


def _bases(
    path: Database, json_out: bool, include_virtualized: bool, include_emulated: bool, verbose: bool
) -> None:
    """``results --bases``: every basis, and the one the engine commands would choose."""
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app.results import bases
    from sizing.report.render.text import bases_rows, bases_text, basis_json

    inputs = bases(path, include_virtualized=include_virtualized, include_emulated=include_emulated)
    rows = bases_rows(
        inputs.bases,
        inputs.choice,
        include_virtualized=include_virtualized,
        include_emulated=include_emulated,
    )
    if json_out:
        emit_json({"db": str(path), "bases": rows, "basis": basis_json(inputs.choice)})
    else:
        typer.echo(bases_text(rows, inputs.choice, verbose=verbose, width=columns()))


def _compare(path: Database, refs: list[str], json_out: bool) -> None:
    """``results --compare``: every run against the first (environment and figures)."""
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app.results import compare
    from sizing.report.render.points import comparisons_json
    from sizing.report.render.run_text import (
        comparison_json,
        comparison_text,
        comparisons_text,
        pairs_table,
    )

    got = compare(path, refs)
    runs, base, pairs, across = got.runs, got.base, got.against, got.across_pairs
    # a guest of one run beside its host's bare metal of another (unpaired, runs named)
    overhead = pairs_table(across)
    overhead = "\n" + overhead if overhead else ""
    if json_out:
        doc: dict[str, Any] = {
            "runs": [{"run_id": r.id, "label": r.label} for r in runs],
            "baseline": base.id,
            "comparisons": [comparison_json(base.id, b, env, figs) for b, env, figs in pairs],
            "overhead_across_runs": comparisons_json(across),
        }
        if len(pairs) == 1:  # two runs: the comparison's keys at the top, as before
            doc.update(doc["comparisons"][0])
        emit_json(doc)
    elif len(pairs) == 1:
        b, env, figs = pairs[0]
        typer.echo(comparison_text(base.id, b, env, figs) + overhead)
    else:
        typer.echo(comparisons_text(base.id, pairs, columns()) + overhead)
