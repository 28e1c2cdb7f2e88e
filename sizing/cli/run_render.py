"""What ``sizing run`` shows after measuring: its points with their evidence, limits,
pairs and latency curves, in the terminal or as one JSON document."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from sizing.cli.app import columns, emit_json
from sizing.model import PointResult
from sizing.paths import Database
from sizing.report.render.points import (
    ceiling_lines,
    left_out_by_default,
    no_valid_figure,
    point_json,
    points_table,
)
from sizing.report.render.run_text import latency_curve_json, latency_curve_text, pairs_table

if TYPE_CHECKING:
    from sizing.app.run import Measured

__all__ = ["render_run"]


def render_run(
    measured: Measured, label: str, db: Database, *, json_out: bool, verbose: bool
) -> None:
    """A run's outcome: its points with their evidence, limits, pairs, latency curves and
    what would give a valid figure (``--json``: one document)."""
    summary, evidence = measured.summary, measured.evidence
    if json_out:
        emit_json(
            {
                "run_id": summary.run_id,
                "label": label,
                "status": summary.status,
                "points": [
                    {
                        **point_json(p, measured.evidence_of(p.key)),
                        **_latency_json(p),
                        "metadata": p.metadata.to_json(),
                    }
                    for p in summary.points
                ],
                "no_valid_figure": no_valid_figure(summary.points, evidence),
                "left_out_by_default": left_out_by_default(summary.points),
            }
        )
        return
    kept = f", {summary.already} point(s) kept from before" if summary.already else ""
    named = f" {label!r}" if label else ""
    typer.echo(f"run {summary.run_id}{named} ({summary.status}){kept}, results in {db}")
    width = columns()
    typer.echo(points_table(summary.points, evidence, verbose=verbose, width=width))
    limits = ceiling_lines(summary.points, evidence, width)
    if limits:
        typer.echo("\n" + "\n".join(limits))
    pairs = pairs_table(measured.pairs, width=width)
    if pairs:
        typer.echo(pairs)
    _latency_tables(summary.points)
    for p in summary.points:  # a replayed workload: the lab's log beside the customer's mix
        replay = p.metadata.replay
        if replay is not None and replay.requests_logged:
            matched = "" if replay.ok else " [mix-mismatch: not used for sizing]"
            line = f"Your traffic, replayed ({p.key.label()}): {replay.words}{matched}"
            typer.echo("\n" + textwrap.fill(line, width, subsequent_indent="  "))
    advice = no_valid_figure(summary.points, evidence, width) or left_out_by_default(
        summary.points, width
    )
    if advice:
        typer.echo("\n" + "\n".join(advice))


def _latency_json(p: PointResult) -> dict[str, Any]:
    """A latency point's curve and knee (``run --json``), as the terminal table shows."""
    if not p.metadata.latency.curve:
        return {}

    return {"latency": latency_curve_json(p.metadata)}


def _latency_tables(points: Sequence[PointResult]) -> None:
    """After a latency run: one table per point, a row per offered rate, the knee marked."""

    for p in points:
        if p.metadata.latency.curve:
            title = f"{p.key.host} {p.key.cores} core(s) HT {p.key.ht} {p.key.profile}"
            typer.echo("")
            typer.echo(latency_curve_text(title, p.metadata, columns()))
