"""``sizing guide``: the guide of one sizing request, rendered (PDF, HTML, Markdown) and
written, or its text for stdout.

The guide's recommendation is ``sizing recommend``'s: the same use case
(:func:`sizing.app.sizing.recommend`) with the same request gives the same basis choice,
the same fleets and the same numbers; the guide adds the runs it covers and renders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sizing.app.sizing import load, recommend, workload_ask
from sizing.errors import SizingError
from sizing.report.data import build_guide
from sizing.report.data.model import Guide, GuideRequest
from sizing.report.render.charts import render_charts
from sizing.report.render.html import render_html, render_markdown
from sizing.report.render.pdf import html_to_pdf
from sizing.sources import figures_of_runs, nginx_template
from sizing.sources.fitcache import cached_bootstrapper

__all__ = ["GuideRequest", "Made", "PreparedGuide", "make", "prepare"]


@dataclass(frozen=True)
class PreparedGuide:
    """The guide's data and what to say beside it on stderr."""

    guide: Guide
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    hint: str = ""  # no recommendation: what exists instead (as ``recommend`` says it)


@dataclass(frozen=True)
class Made:
    """The guide made: the basis it was built from (and why), then the file written (with
    its pages for a PDF) or the text for stdout, and what to say on stderr."""

    basis: str
    path: Path | None
    text: str = ""
    pages: int | None = None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    hint: str = ""


def prepare(request: GuideRequest) -> PreparedGuide:
    """Read everything, choose the bases as ``recommend`` does, size the demand (if any)
    through ``recommend``'s use case, and build the guide's data."""
    if request.demand is not None:
        got = recommend(request.sizing, with_runs=True)
        inputs, result, versus = got.inputs, got.result, got.versus
        warnings, notes, hint = got.warnings, got.notes, got.hint
    else:
        inputs, said = load(request.inputs, with_runs=True, workload=workload_ask(request.sizing))
        result, versus, warnings, notes, hint = None, None, tuple(said), (), ""
    emulated = [f for f in figures_of_runs(inputs.runs, include_emulated=True) if f.emulated]
    guide = build_guide(
        request,
        inputs.catalog,
        inputs.reference,
        inputs,
        inputs.runs,
        emulated=emulated,
        nginx_template=nginx_template(),
        result=result,
        versus=versus,
        bootstrapper=cached_bootstrapper(request.inputs.db),
    )
    return PreparedGuide(guide, tuple(warnings), tuple(notes), hint)


def _quiet(_: str) -> None:
    """No word of the steps."""


def make(
    request: GuideRequest, fmt: str, path: Path | None, say: Callable[[str], None] = _quiet
) -> Made:
    """Build, render as ``fmt`` (``pdf``, ``html`` or ``md``) and write to ``path`` (None:
    the text comes back for stdout); ``say`` hears how far it is (the whole takes 10-15 s
    for a PDF): once the results are read, since a bad option or file is found then and
    is the one line said; then as the charts and the PDF begin."""
    got = prepare(request)
    guide = got.guide
    say("results read and sized")
    basis = f"{', '.join(guide.choice.ids)} — {guide.choice.why}"

    def made(path: Path | None, text: str = "", pages: int | None = None) -> Made:
        return Made(basis, path, text, pages, got.warnings, got.notes, got.hint)

    if fmt == "md":
        text = render_markdown(guide)
    else:
        say("drawing the charts")
        charts = render_charts(guide)
        text = render_html(guide, charts)
    if path is None:
        return made(None, text)
    if fmt == "pdf":
        say(f"laying out the PDF ({request.paper})")
        return made(path, pages=html_to_pdf(text, path))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SizingError(f"{path}: cannot write the guide: {exc.strerror or exc}") from exc
    return made(path)
