"""``sizing guide``: the printable sizing guide, as PDF, HTML or Markdown.

The command checks its options and the output path, calls
:func:`sizing.app.guide.make` (the same sizing use case as ``recommend``), draws the
charts, fills the template and writes the file. matplotlib and WeasyPrint are imported
only here, inside the command, so ``sizing --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sizing.app.outputs import check_target
from sizing.cli.app import fitted, warn
from sizing.cli.engine_cmds import hint_sentence
from sizing.cli.option_set import (
    FIGURES,
    REQUEST,
    RUNS,
    WORKLOAD,
    SizingArgs,
    request_from,
    takes,
)
from sizing.cli.options import FormatChoice, PaperChoice, choice, completer, metavar
from sizing.cli.progress import Steps
from sizing.cli.sizing_opts import load_traffic
from sizing.errors import UsageError

if TYPE_CHECKING:
    from sizing.app.guide import GuideRequest, Made
    from sizing.app.sizing import SizingRequest


SUFFIXES = {
    ".pdf": FormatChoice.PDF,
    ".html": FormatChoice.HTML,
    ".htm": FormatChoice.HTML,
    ".md": FormatChoice.MD,
    ".markdown": FormatChoice.MD,
}


def output_format(out: Path | None, fmt: str | None) -> tuple[FormatChoice, Path | None]:
    """The format (from ``--format``, else the suffix of ``--out``) and the output path.

    ``--out -`` (or no ``--out`` with ``--format html|md``) writes to stdout; a PDF with
    no ``--out`` goes to ``guide.pdf``.
    """
    chosen = choice(FormatChoice, fmt, "--format") if fmt is not None else None
    if out is not None and str(out) != "-":
        by_suffix = SUFFIXES.get(out.suffix.lower())
        if chosen is None:
            if by_suffix is None:
                raise UsageError(
                    f"--out {out}: cannot tell the format from {out.suffix or 'no suffix'!r} "
                    "(use .pdf, .html or .md, or give --format)"
                )
            chosen = by_suffix
        elif by_suffix is not None and by_suffix is not chosen:
            raise UsageError(f"--out {out} does not match --format {chosen.value}")
        return chosen, out
    chosen = chosen or FormatChoice.PDF
    if chosen is FormatChoice.PDF:
        if out is not None:
            raise UsageError("--out -: a PDF is not written to stdout; give a file name")
        return chosen, Path("guide.pdf")
    return chosen, None


def check_writable(out: Path) -> None:
    """One clear line, before any work, when ``out`` cannot be written."""
    check_target(out, "guide")


GuideOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Output file; the format follows its suffix (.pdf, .html, .md). "
        "'-' writes HTML or Markdown to stdout. Default: guide.pdf.",
    ),
]
GuideFmtOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar=metavar(FormatChoice),
        autocompletion=completer(FormatChoice),
        help="Output format.",
    ),
]
GuidePaperOpt = Annotated[
    str,
    typer.Option(
        "--paper",
        metavar=metavar(PaperChoice),
        autocompletion=completer(PaperChoice),
        help="Paper size.",
    ),
]
GuideTitleOpt = Annotated[str, typer.Option("--title", help="Title on the cover.")]
GuideCustomerOpt = Annotated[
    str, typer.Option("--customer", help="Who the guide is prepared for (cover page).")
]
GuidePreparedByOpt = Annotated[
    str,
    typer.Option(
        "--prepared-by", metavar="NAME", help="Who prepared the guide (cover and summary page)."
    ),
]


@takes(RUNS, REQUEST, WORKLOAD, FIGURES)
def guide_cmd(
    *,
    out: GuideOutOpt = None,
    fmt: GuideFmtOpt = None,
    args: SizingArgs,
    paper: GuidePaperOpt = "a4",
    title: GuideTitleOpt = "NGINX Sizing Guide",
    customer: GuideCustomerOpt = "",
    prepared_by: GuidePreparedByOpt = "",
) -> None:
    """The printable sizing guide: summary, sizing table, charts, methodology, validity.

    Built from one basis (and its group), chosen as recommend chooses it (--basis,
    --source, --include-virtualized); the cover and the summary name it and why. It takes
    every option `recommend` takes: with --rps/--tps it opens with recommend's answer to
    the same request (the same basis, fleets and numbers). Every figure is labelled
    measured, reference, interpolated, extrapolated or emulated, with its flags.
    """
    say = Steps("guide")  # its seconds count from here: the imports below take a second
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing.app.guide import make

    fmt_c, path = output_format(out, fmt)
    traffic = load_traffic(args.demand, args.peak)
    sizing = request_from(args, traffic)
    if path is not None:
        check_writable(path)
    request = replace(
        _looks(sizing, title=title, customer=customer, by=prepared_by, paper=paper),
        traffic=traffic,
        peak=args.peak,
    )
    _said(make(request, fmt_c.value, path, say), say)


def _looks(
    sizing: SizingRequest, *, title: str, customer: str, by: str, paper: str
) -> GuideRequest:
    """The guide's request: the sizing question, and how the guide looks (its title, the
    customer, who prepared it, the paper), dated today."""
    from sizing import __version__
    from sizing.app.guide import GuideRequest  # deferred: the guide's import chain

    return GuideRequest(
        title=title,
        customer=customer,
        prepared_by=by,
        date=dt.date.today().isoformat(),
        paper=choice(PaperChoice, paper, "--paper").value,
        tool_version=__version__,
        sizing=sizing,
    )


def _said(made: Made, say: Steps) -> None:
    """What ``guide`` says once the guide is made: the warnings and notes, the basis, and
    where it was written (the text itself on stdout when no file was given)."""
    for w in made.warnings:
        warn(w)
    for n in made.notes:
        typer.echo(fitted(n), err=True)
    if made.hint:
        warn("no recommendation in the guide:" + hint_sentence(made.hint), fit=True)
    typer.echo(fitted(f"basis: {made.basis}"), err=True)  # 100 columns: it ran to 290
    if made.path is None:
        sys.stdout.write(made.text)
    elif made.pages is not None:
        typer.echo(f"wrote {made.path} ({made.pages} pages) {say.elapsed()}", err=True)
    else:
        typer.echo(f"wrote {made.path} {say.elapsed()}", err=True)
