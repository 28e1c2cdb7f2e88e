"""Print the guide's HTML to PDF with WeasyPrint (imported lazily: it is slow to import)."""

from __future__ import annotations

import logging
from pathlib import Path

from sizing.errors import SizingError, ToolError


def html_to_pdf(html: str, out: Path, base_url: Path | None = None) -> int:
    """Write ``html`` as a PDF to ``out``; return the number of pages.

    WeasyPrint's own warnings about unsupported CSS are kept off the terminal.
    """
    try:
        from weasyprint import HTML
    except ImportError as exc:
        raise ToolError(
            f"PDF output needs WeasyPrint ({exc}): run scripts/setup, or use --format html"
        ) from None
    except OSError:  # WeasyPrint is there, the Pango library it loads is not
        raise ToolError(
            "WeasyPrint cannot load Pango: apt-get install libpango-1.0-0 libpangoft2-1.0-0"
            " fonts-dejavu-core (scripts/setup does), or use --format html"
        ) from None
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    document = HTML(string=html, base_url=str(base_url or Path.cwd())).render()
    try:
        document.write_pdf(str(out))
    except OSError as exc:
        raise SizingError(f"{out}: cannot write the guide: {exc.strerror or exc}") from exc
    return len(document.pages)
