"""``sizing guide``: build the guide from one basis, render it (PDF, HTML, Markdown) and
write it, or give the text for stdout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sizing.errors import SizingError
from sizing.report.build import prepare
from sizing.report.data.model import GuideRequest
from sizing.report.render.charts import render_charts
from sizing.report.render.html import render_html, render_markdown
from sizing.report.render.pdf import html_to_pdf
from sizing.sources import Sources

__all__ = ["Made", "make"]


@dataclass(frozen=True)
class Made:
    """The guide made: the basis it was built from (and why), then the file written (with
    its pages for a PDF) or the text for stdout."""

    basis: str
    path: Path | None
    text: str = ""
    pages: int | None = None


def _quiet(_: str) -> None:
    """No word of the steps."""


def make(
    request: GuideRequest,
    sources: Sources,
    fmt: str,
    path: Path | None,
    say: Callable[[str], None] = _quiet,
) -> Made:
    """Build, render as ``fmt`` (``pdf``, ``html`` or ``md``) and write to ``path`` (None:
    the text comes back for stdout); ``say`` hears how far it is (the whole takes 10-15 s
    for a PDF): once the results are read, since a bad option or file is found then and
    is the one line said; then as the charts and the PDF begin."""
    guide = prepare(request, sources)
    say("results read and sized")
    basis = f"{', '.join(guide.choice.ids)} — {guide.choice.why}"
    if fmt == "md":
        text = render_markdown(guide)
    else:
        say("drawing the charts")
        charts = render_charts(guide)
        text = render_html(guide, charts)
    if path is None:
        return Made(basis, None, text)
    if fmt == "pdf":
        say(f"laying out the PDF ({request.paper})")
        return Made(basis, path, pages=html_to_pdf(text, path))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SizingError(f"{path}: cannot write the guide: {exc.strerror or exc}") from exc
    return Made(basis, path)
