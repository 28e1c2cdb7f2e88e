"""The ``import`` command: points a run measured but could not store, back into the
results database (from the recovery file the run wrote beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sizing.app.env import current
from sizing.cli.options import DbOpt
from sizing.store import Store, read_recovery


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
    records = read_recovery(file)
    path = current().database(db)
    Store.exists(path)  # refuses a directory, or one this user may not look into
    with Store(path) as store:
        added, there = store.import_points(records)
    runs = ", ".join(str(r) for r in sorted({int(r["run_id"]) for r in records}))
    typer.echo(
        f"imported {added} point(s) into run {runs} of {path}"
        + (f"; {there} already there" if there else "")
    )
