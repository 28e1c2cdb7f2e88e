"""The ``results`` command: stored runs and points, their bases, CSV, and the comparison
of runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from sizing import paths
from sizing.cli.app import emit_json, warn
from sizing.cli.options import DbOpt, EmulatedOpt, VirtualizedOpt
from sizing.model import PointResult
from sizing.report.render.points import (
    ceiling_lines,
    comparisons_json,
    point_json,
    points_table,
)


def results(
    runs_given: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[RUN]...",
            help="With --compare: the runs to compare, by id or --label (two or more).",
            show_default=False,
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option("--run", help="Show only this run, by id or label (default: all runs)."),
    ] = None,
    db: DbOpt = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
    csv_out: Annotated[
        bool, typer.Option("--csv", help="Print one CSV row per point (see --out).")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", dir_okay=False, help="With --csv: write to this file."),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="List what differs between two or more runs (RUN...): environments and"
            " figures, each run against the first.",
        ),
    ] = False,
    bases: Annotated[
        bool,
        typer.Option(
            "--bases",
            help="List the sizing bases (measured and reference): hardware, workload, "
            "software, core counts, flags, price, and which one recommend/table/guide use.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Wider tables: spread, latency, reasons, software, price."
        ),
    ] = False,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
) -> None:
    """List stored runs and their points, compare runs, export CSV, or list the bases."""
    from sizing.errors import UsageError
    from sizing.report.render.text import pairs_table
    from sizing.store import Store

    path = db or paths.default_db()
    if runs_given and not compare:
        raise UsageError(f"unexpected argument {runs_given[0]!r}: runs are compared with --compare")
    if compare and len(runs_given or []) < 2:
        raise UsageError("--compare needs two or more runs (ids or labels), e.g. --compare 1 2")
    if out is not None and not csv_out:
        raise UsageError("--out writes the --csv export; give --csv too")
    if bases:
        _bases(path, json_out, include_virtualized, include_emulated, verbose)
        return
    if not Store.exists(path):
        if compare:
            raise UsageError(f"--compare: {path} does not exist; nothing measured yet")
        if json_out:
            emit_json({"db": str(path), "runs": []})
        elif csv_out:
            _write_csv([], out)
        else:
            typer.echo(f"nothing measured yet; try: sizing run\n({path} does not exist)")
        return
    with Store.open_readonly(path) as store:
        if compare:
            _compare(store, [_run_ref(store, r, "--compare") for r in runs_given or []], json_out)
            return
        wanted = None if run_id is None else _run_ref(store, run_id, "--run")
        runs = [r for r in store.runs() if wanted is None or r.id == wanted]
        shown = [(r, _points_with_evidence(store, r.id)) for r in runs]
    if csv_out:
        _write_csv(
            [
                (r.id, _label(r), p, ev)
                for r, pts in shown
                for p, ev in pts
            ],
            out,
        )
        return
    if json_out:
        emit_json(
            {
                "db": str(path),
                "runs": [
                    {
                        "run_id": r.id,
                        "label": _label(r),
                        "started_at": r.started_at,
                        "finished_at": r.finished_at,
                        "status": _status(r),
                        "stored_status": r.status,
                        "inventory": r.inventory,
                        "tool_version": r.tool_version,
                        "options": r.options,
                        "points": [
                            {**point_json(p, ev), "metadata": p.metadata.to_json()}
                            for p, ev in pts
                        ],
                        "comparisons": comparisons_json([p for p, _ in pts]),
                    }
                    for r, pts in shown
                ],
            }
        )
        return
    for r, pts in shown:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
        named = f" {_label(r)!r}" if _label(r) else ""
        status = _status(r)
        if status == "abandoned":
            status = (
                f"abandoned (its process is gone; `sizing run --resume {r.id}` measures "
                "the rest)"
            )
        typer.echo(f"run {r.id}{named}  {when}  {status}  inventory {r.inventory}")
        if pts:
            typer.echo(
                points_table([p for p, _ in pts], {p.key: ev for p, ev in pts}, verbose=verbose)
            )
            limits = ceiling_lines([p for p, _ in pts], {p.key: ev for p, ev in pts})
            if limits:
                typer.echo("\n" + "\n".join(limits))
            pairs = pairs_table([p for p, _ in pts])
            if pairs:
                typer.echo(pairs)
        typer.echo("")


def _status(run: Any) -> str:
    """The stored status, except that a run still marked running whose process is gone
    (killed with SIGKILL, a crashed machine) is ``abandoned``."""
    owner = (run.options or {}).get("owner")
    if run.status == "running" and isinstance(owner, dict):
        from sizing.provision.hostsafety import process_gone

        if process_gone(owner):
            return "abandoned"
    return str(run.status)


def _label(run: Any) -> str:
    return str((run.options or {}).get("label") or "")


def _run_ref(store: Any, ref: str, option: str) -> int:
    """A run named by its id or its ``--label`` (the latest run of that label)."""
    from sizing.errors import UsageError

    runs = store.runs()
    if ref.isdigit() and any(r.id == int(ref) for r in runs):
        return int(ref)
    labelled = [r.id for r in runs if _label(r) == ref]
    if labelled:
        return int(max(labelled))
    if ref.isdigit():
        raise UsageError(f"{option}: no run {ref} in {store.path}")
    raise UsageError(f"{option}: no run {ref!r} (neither an id nor a label) in {store.path}")


def _points_with_evidence(store: Any, run_id: int) -> list[tuple[PointResult, dict[str, Any]]]:
    from sizing.report.data.evidence import point_evidence

    env = store.get_run(run_id).environment
    return [
        (
            p.result,
            point_evidence(
                p.result, [s for _, s in store.samples(p.id)], env.get(p.result.key.host)
            ),
        )
        for p in store.points(run_id)
    ]


def _write_csv(rows: list[Any], out: Path | None) -> None:
    from sizing.errors import SizingError
    from sizing.report.render.points import points_csv

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
    path: Path, json_out: bool, include_virtualized: bool, include_emulated: bool, verbose: bool
) -> None:
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
        typer.echo(bases_text(rows, inputs.choice, verbose=verbose))


def _compare(store: Any, run_ids: list[int], json_out: bool) -> None:
    """``results --compare``: every run against the first (environment and figures)."""
    from sizing.engine.compare import environment_diff, figure_diff
    from sizing.report.render.text import comparison_json, comparison_text, comparisons_text

    runs = [store.get_run(r) for r in run_ids]
    base = runs[0]
    base_points = [p.result for p in store.points(base.id)]
    pairs = []
    for other in runs[1:]:
        env = environment_diff(base.environment, other.environment)
        figs = figure_diff(base_points, [p.result for p in store.points(other.id)])
        pairs.append((other.id, env, figs))
    if json_out:
        doc: dict[str, Any] = {
            "runs": [{"run_id": r.id, "label": _label(r)} for r in runs],
            "baseline": base.id,
            "comparisons": [comparison_json(base.id, b, env, figs) for b, env, figs in pairs],
        }
        if len(pairs) == 1:  # two runs: the comparison's keys at the top, as before
            doc.update(doc["comparisons"][0])
        emit_json(doc)
    elif len(pairs) == 1:
        b, env, figs = pairs[0]
        typer.echo(comparison_text(base.id, b, env, figs))
    else:
        typer.echo(comparisons_text(base.id, pairs))
