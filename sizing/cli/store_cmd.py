"""The ``store`` commands: ``sizing store copy FROM TO`` copies a results database, whole,
into a new one on either engine (a SQLite file, a team's PostgreSQL database)."""

from __future__ import annotations

from typing import Annotated

import typer

from sizing.app.env import current

_WHERE = (
    "a file (SQLite) or postgresql://user@host/dbname (the password from PGPASSWORD or "
    "~/.pgpass, never here)"
)


def store_copy(
    source: Annotated[str, typer.Argument(metavar="FROM", help=f"The database to copy: {_WHERE}.")],
    destination: Annotated[
        str,
        typer.Argument(metavar="TO", help=f"A new, empty database to copy it into: {_WHERE}."),
    ],
) -> None:
    """Copy a results database into a new one, losslessly: every run, point and sample
    with its id, so that `sizing results --json` prints the same from both. The source is
    only read; a destination that holds anything is refused."""
    from sizing.app.results import copy_database  # deferred: the store

    src, dst = current().database(source), current().database(destination)
    got = copy_database(src, dst)
    typer.echo(
        f"copied {got.runs} run(s), {got.points} point(s) and {got.samples} sample(s) "
        f"from {src} into {dst} (schema version {got.version})"
    )
