"""Fill the guide's Jinja2 templates (``templates/guide.html.j2``, ``templates/guide.md.j2``)
with the same chapters (:mod:`sizing.report.data.chapters`): each template renders every
kind of block once, and no chapter is written twice.

The HTML is self-contained: the print stylesheet (``templates/guide.css``) is inlined and
the charts are inline SVG, so the same file opens in a browser and prints with WeasyPrint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import __version__, paths
from sizing.report.data import cover
from sizing.report.data.chapters import chapters
from sizing.report.data.format import MARKS, provenance_text
from sizing.report.data.model import Guide
from sizing.report.render.printable import printable

if TYPE_CHECKING:
    from jinja2 import Environment

    from sizing.report.render.charts import Chart

PAPER = {"a4": "A4", "letter": "letter"}


def _env(templates: Path | None = None, *, markdown: bool = False) -> Environment:
    """The HTML templates autoescape HTML; the Markdown one escapes every value for
    Markdown and HTML alike (``_md_escape``): a ``--customer '<script>'`` stays text."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(templates or paths.TEMPLATES)),
        autoescape=markdown or (lambda name: bool(name and name.endswith(".html.j2"))),
        finalize=_md_escape if markdown else _shown,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md_cell"] = _md_cell
    return env


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


# What the guide keeps of the characters printable() escapes: line breaks and tabs, and the
# zero-width space the guide itself puts after a basis id's "/" and "+" (a place a long id
# may wrap: sizing.report.data.measured_tables.breakable); it neither hides nor reorders.
GUIDE_KEEPS = "\n\t\u200b"


def _shown(value: Any) -> Any:
    """A value for the HTML guide (and so the PDF): control and invisible formatting
    characters escaped (:func:`printable`), before HTML's own escaping, and an amount kept
    with its currency code (:data:`_AMOUNT`). Template output (a macro's Markup) is left
    as it is."""
    from markupsafe import Markup

    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return _AMOUNT.sub("\u00a0", printable(value, keep=GUIDE_KEEPS))


# The space between a currency code and its amount (``EUR 108,962.36``): a cell may wrap
# at any other space, never there (an amount is read whole, its currency with it).
_AMOUNT = re.compile(r"(?<=\b[A-Z]{3}) (?=-?\d)")


def _md_escape(value: Any) -> Any:
    """A value for the Markdown guide: newlines gone (nothing starts a line of its own),
    control characters escaped (:func:`printable`), ``&``, ``<``, ``>`` as HTML entities
    (no raw HTML), and Markdown's inline specials backslash-escaped. Template output (a
    macro's Markup) is left as it is."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    text = printable(str(value).replace("\n", " ").replace("\t", " "), keep=GUIDE_KEEPS)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup(_MD_SPECIAL.sub(r"\\\1", text))


def _md_cell(text: Any) -> str:
    """A table cell: one line (its pipes are escaped with everything else)."""
    return str(text).replace("\n", " ")


def _context(guide: Guide, charts: Sequence[Chart]) -> dict[str, Any]:
    return {
        "g": guide,
        "chapters": chapters(guide, [c.id for c in charts]),
        "charts": list(charts),
        "marks": MARKS,
        "provenance_text": provenance_text(
            simulated=getattr(guide.cover, "kind", "") == cover.SIMULATED
        ),
        "page_size": PAPER.get(guide.paper, "A4"),
        "version": __version__,
    }


def render_html(guide: Guide, charts: Sequence[Chart], templates: Path | None = None) -> str:
    """The guide as one HTML document with its print stylesheet and charts inline."""
    env = _env(templates)
    css = env.loader.get_source(env, "guide.css")[0] if env.loader else ""
    return env.get_template("guide.html.j2").render(**_context(guide, charts), css=css)


def render_markdown(guide: Guide, templates: Path | None = None) -> str:
    """The guide as Markdown (tables and text; the charts are in the HTML and PDF)."""
    env = _env(templates, markdown=True)
    return env.get_template("guide.md.j2").render(**_context(guide, []))
