"""The ``import`` command: points a run measured but could not store, back into the
results database (from the recovery file the run wrote beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sizing.app.env import current
from sizing.cli.options import DbOpt


def import_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="A recovery file (<db>.recovery.jsonl) that `sizing run` wrote for points "
            "it could not store.",
            show_default=False,
        ),
    ],
    db: DbOpt = None,
) -> None:
    """Import points a run kept in a recovery file into their run. Importing the same
    file twice adds nothing."""
    # deferred, as in results: the store and its use case
    from sizing.app.results import import_recovery

    path = current().database(db)
    got = import_recovery(file, path)
    if not got.runs:
        typer.echo(f"{file} holds no point: nothing imported")
        return
    runs = ", ".join(str(r) for r in got.runs)
    typer.echo(
        f"imported {got.added} point(s) into run {runs} of {path}"
        + (f"; {got.there} already there" if got.there else "")
    )
