"""Commands of the sizing engine: ``recommend`` and ``table``.

Each command parses its options into a request, makes one call (:mod:`sizing.app.sizing`:
the bases chosen by ``--source`` and ``--basis``, the pure engine) and renders with
:mod:`sizing.report.render.text`. Results go to stdout; which figures were used goes to
stderr. The use cases are imported inside the commands: the engine, the sources, pydantic,
YAML and SQLite cost ``sizing --help`` and every other command's start-up otherwise
(``benchmarks/recommend_speed`` measures it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.app.status import Answered, exit_status
from sizing.cli.app import columns, emit_json, error, fitted, warn
from sizing.cli.option_set import (
    FIGURES,
    REQUEST,
    WORKLOAD,
    SizingArgs,
    figures_of,
    request_from,
    takes,
    workload_from,
)
from sizing.cli.options import JsonOpt
from sizing.cli.sizing_opts import load_traffic

if TYPE_CHECKING:
    from sizing.app.demand import TrafficDemand as Traffic
    from sizing.app.sizing import Recommended

# -- recommend -------------------------------------------------------------------------


@takes(REQUEST, WORKLOAD, FIGURES)
def recommend_cmd(args: SizingArgs, json_out: JsonOpt = False) -> None:
    """The cheapest configuration that carries a demand with headroom.

    A configuration is a platform, cores per server, an HT mode and a number of identical
    servers. A mixed demand adds its CPU shares: rps/rps_capacity + tps/tps_capacity must
    stay within 1 - headroom. Sized from one basis (`sizing results --bases`), on the low
    end of each figure's interval (its coverage is printed: "range of 3 runs, 75%") or,
    with --confidence, on the draws of a bootstrap over the repetitions; measured core
    counts rank before predicted ones. The cheapest fleet is searched exactly, mixing core
    counts of one basis where that is cheaper, and the answer says how likely it is to
    carry the demand.
    """
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app import sizing as app_sizing

    traffic = load_traffic(args.demand, args.peak)
    got = app_sizing.recommend(request_from(args, traffic))
    if traffic is not None:
        from sizing.report.render.demand_text import sized_line

        typer.echo(sized_line(traffic, args.peak, args.demand), err=True)
    _show_recommendation(got, json_out, traffic, args.peak)
    result = got.result
    code = exit_status(Answered(result.recommendation is not None))
    if code:
        raise typer.Exit(int(code))


def _show_recommendation(
    got: Recommended, json_out: bool, traffic: Traffic | None = None, peak: str = "max"
) -> None:
    """What ``recommend`` prints: the warnings and notes, then the answer (``--json``: the
    one document); an answer that found no fleet ends with its last explanation line."""
    from sizing.report.render.terms_text import assumptions_json
    from sizing.report.render.text import (
        basis_json,
        basis_line,
        recommendation_text,
        versus_text,
    )

    _say(got.warnings, got.notes)
    result = got.result
    versus = None if got.versus is None else got.versus.to_dict()
    if json_out:
        emit_json(
            {
                "basis": basis_json(got.inputs.choice, got.inputs.prices),
                **result.to_dict(),
                "explanation": list(got.explanation),
                "notes": list(got.notes),
                "hint": got.hint,
                "platforms": versus,
                "assumptions": assumptions_json(result),
                **_traffic_json(traffic, peak),
            }
        )
    elif got.answers_anything:  # else the error's one line below says all there is
        if result.recommendation is None and not got.p95:  # else the explanation names it
            typer.echo(basis_line(got.inputs.choice, columns()))
        typer.echo(recommendation_text(result, columns()))
        if got.versus is not None:
            typer.echo("\n" + versus_text(got.versus, columns()))
    if result.recommendation is None:
        error(got.explanation[-1] + hint_sentence(got.hint))


def _traffic_json(traffic: Traffic | None, peak: str) -> dict[str, object]:
    """``recommend --json``'s ``traffic`` (the demand file sized for), when --demand."""
    if traffic is None:
        return {}
    from sizing.report.render.demand_text import traffic_json  # deferred: --demand only

    return {"traffic": traffic_json(traffic, peak)}


def hint_sentence(hint: str) -> str:
    """The hint that follows a refusal, as a sentence of its own (empty without one)."""
    if not hint:
        return ""
    first = hint.split(" ", 1)[0]
    if any(c in first for c in "/-`") or not first.isalpha():  # an id, typed as it is
        return f" Instead: {hint}."
    return f" {hint[0].upper()}{hint[1:]}."


def _say(warnings: Sequence[str], notes: Sequence[str] = ()) -> None:
    for w in warnings:
        warn(w)
    for n in notes:
        typer.echo(fitted(n), err=True)  # the width rule: a note ran to 380 columns


# -- table -----------------------------------------------------------------------------


WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="One wide table per block (default: split to fit the terminal, at most 100 "
        "columns, the core count and price repeated in each part).",
    ),
]


@takes(WORKLOAD, FIGURES)
def table_cmd(args: SizingArgs, json_out: JsonOpt = False, wide: WideOpt = False) -> None:
    """The cost-per-throughput table, in the shape of the NGINX sizing guide's table.

    One block per basis group (a host, its hardware, workload and software; the reference
    testbed is its own): per core count, the server price, RPS and SSL TPS per platform,
    cost per 1,000 RPS and the virtualization overhead within the block. Every figure is
    marked r (reference), m (measured), i (interpolated), x (extrapolated) or e (emulated);
    lower bounds read "≥", flags stand beside the figure, and each series' intervals are
    listed under its block. Fits the terminal, at most 100 columns (a wide block is split,
    the core count and price repeated); --wide gives one table per block.
    """
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app import sizing as app_sizing
    from sizing.report.render.table_text import sizing_table_text
    from sizing.report.render.text import basis_json, basis_line

    table, got, warnings = app_sizing.table(figures_of(args), workload_from(args))
    _say(warnings)
    if json_out:
        emit_json({"basis": basis_json(got.choice, got.prices), **table.to_dict()})
    else:
        typer.echo(basis_line(got.choice, columns()))
        typer.echo(sizing_table_text(table, wide=wide, width=columns()))
