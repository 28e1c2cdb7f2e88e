"""``sizing guide``: the printable sizing guide, as PDF, HTML or Markdown.

The command checks its options and the output path, calls
:func:`sizing.report.build.prepare` (store, catalog, reference data, engine), draws the
charts, fills the template and writes the file. matplotlib and WeasyPrint are imported
only here, inside the command, so ``sizing --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from sizing.cli.options import (
    ANY,
    PLATFORM_METAVAR,
    ArticlePricesOpt,
    BasisOpt,
    CatalogOpt,
    DbOpt,
    EmulatedOpt,
    ExtrapolationOpt,
    FormatChoice,
    PaperChoice,
    SourceOpt,
    VirtualizedOpt,
    basis_ids,
    choice,
    metavar,
    platform_choice,
)
from sizing.errors import SizingError, UsageError
from sizing.model import Source

SUFFIXES = {".pdf": FormatChoice.PDF, ".html": FormatChoice.HTML, ".htm": FormatChoice.HTML,
            ".md": FormatChoice.MD, ".markdown": FormatChoice.MD}  # fmt: skip


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
    parent = out.parent if str(out.parent) else Path(".")
    try:
        if out.is_dir():
            raise SizingError(f"{out}: cannot write the guide: is a directory")
        if not parent.is_dir():
            raise SizingError(f"{out}: cannot write the guide: no directory {parent}")
        if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
            ro = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
            why = "a read-only file system" if ro else "permission denied"
            raise SizingError(f"{out}: cannot write the guide: {why}")
    except OSError as exc:  # a parent directory this user may not even look into
        raise SizingError(f"{out}: cannot write the guide: {exc.strerror or exc}") from exc


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
    typer.Option("--format", metavar=metavar(FormatChoice), help="Output format."),
]
GuideRunOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--run",
        metavar="ID|latest",
        help="Run(s) to cover, repeatable; 'latest' for the newest. Default: every run.",
    ),
]
GuideRpsOpt = Annotated[
    float | None, typer.Option("--rps", help="Target requests per second to size for.")
]
GuideTpsOpt = Annotated[
    float | None, typer.Option("--tps", help="Target TLS handshakes per second.")
]
GuideHeadroomOpt = Annotated[
    float, typer.Option("--headroom", metavar="PCT", help="Share of capacity kept free, 0-90.")
]
GuidePlatformOpt = Annotated[
    str,
    typer.Option(
        "--platform",
        metavar=PLATFORM_METAVAR,
        help="Platform the recommendation may use.",
    ),
]
GuidePaperOpt = Annotated[
    str, typer.Option("--paper", metavar=metavar(PaperChoice), help="Paper size.")
]
GuideTitleOpt = Annotated[str, typer.Option("--title", help="Title on the cover.")]
GuideCustomerOpt = Annotated[
    str, typer.Option("--customer", help="Who the guide is prepared for (cover page).")
]
GuidePreparedByOpt = Annotated[
    str,
    typer.Option("--prepared-by", metavar="NAME",
                 help="Who prepared the guide (cover and summary page)."),
]  # fmt: skip


def guide_cmd(
    out: GuideOutOpt = None,
    fmt: GuideFmtOpt = None,
    run: GuideRunOpt = None,
    source: SourceOpt = "both",
    basis: BasisOpt = None,
    rps: GuideRpsOpt = None,
    tps: GuideTpsOpt = None,
    headroom: GuideHeadroomOpt = 20.0,
    platform: GuidePlatformOpt = "any",
    catalog: CatalogOpt = None,
    article_prices: ArticlePricesOpt = False,
    allow_extrapolation: ExtrapolationOpt = False,
    db: DbOpt = None,
    include_virtualized: VirtualizedOpt = False,
    include_emulated: EmulatedOpt = False,
    paper: GuidePaperOpt = "a4",
    title: GuideTitleOpt = "NGINX Sizing Guide",
    customer: GuideCustomerOpt = "",
    prepared_by: GuidePreparedByOpt = "",
) -> None:
    """The printable sizing guide: summary, sizing table, charts, methodology, validity.

    Built from one basis (and its group), chosen as recommend chooses it (--basis,
    --source, --include-virtualized); the cover and the summary name it and why. With
    --rps/--tps it opens with the recommendation for that target. Every figure is labelled
    measured, reference, interpolated, extrapolated or emulated, with its flags.
    """
    # deferred (measured with -X importtime): the use case, the engine, the sources and the
    # report, 0.1-0.3 s that `sizing --help` and the other commands' start-up do not pay
    from sizing import __version__
    from sizing.app.guide import make
    from sizing.engine import Demand
    from sizing.report.data.model import GuideRequest
    from sizing.sources import Sources

    fmt_c, path = output_format(out, fmt)
    platform_c = platform_choice(platform)
    if rps is not None or tps is not None:
        Demand(rps=rps, tps=tps, headroom=headroom / 100.0).validate()
    if path is not None:
        check_writable(path)
    request = GuideRequest(
        title=title,
        customer=customer,
        prepared_by=prepared_by,
        date=dt.date.today().isoformat(),
        paper=choice(PaperChoice, paper, "--paper").value,
        source=choice(Source, source, "--source").value,
        rps=rps,
        tps=tps,
        headroom=headroom / 100.0,
        platform=ANY if platform_c is None else platform_c.value,
        include_emulated=include_emulated,
        tool_version=__version__,
        bases=basis_ids(basis),
        include_virtualized=include_virtualized,
        article_prices=article_prices,
        allow_extrapolation=allow_extrapolation,
    )
    made = make(request, Sources(db=db, catalog=catalog, runs=tuple(run or ())), fmt_c.value, path)
    typer.echo(f"basis: {made.basis}", err=True)
    if made.path is None:
        sys.stdout.write(made.text)
    elif made.pages is not None:
        typer.echo(f"wrote {made.path} ({made.pages} pages)", err=True)
    else:
        typer.echo(f"wrote {made.path}", err=True)
