"""The printable sizing guide: data preparation, charts, HTML/Markdown and PDF rendering.

:mod:`sizing.report.guide` prepares everything the guide shows from the results store, the
reference dataset and the engine (pure, no I/O); :mod:`sizing.report.charts` draws the
charts (matplotlib, imported lazily); :mod:`sizing.report.render` fills the Jinja2
templates of ``templates/``; :mod:`sizing.report.pdf` prints the HTML with WeasyPrint
(imported lazily).
"""
