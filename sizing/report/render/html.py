"""Fill the guide's Jinja2 templates (``templates/guide.html.j2``, ``templates/guide.md.j2``).

The HTML is self-contained: the print stylesheet (``templates/guide.css``) is inlined and
the charts are inline SVG, so the same file opens in a browser and prints with WeasyPrint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import __version__, paths
from sizing.report.data.format import MARKS, PROVENANCE_TEXT
from sizing.report.data.model import Guide

if TYPE_CHECKING:
    from jinja2 import Environment

    from sizing.report.render.charts import Chart

PAPER = {"a4": "A4", "letter": "letter"}


def _env(templates: Path | None = None) -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(templates or paths.TEMPLATES)),
        autoescape=lambda name: bool(name and name.endswith(".html.j2")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md_cell"] = _md_cell
    return env


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _context(guide: Guide, charts: Sequence[Chart]) -> dict[str, Any]:
    return {
        "g": guide,
        "charts": list(charts),
        "marks": MARKS,
        "provenance_text": PROVENANCE_TEXT,
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
    return _env(templates).get_template("guide.md.j2").render(**_context(guide, []))
