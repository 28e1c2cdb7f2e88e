"""The printable sizing guide and the terminal's tables: data apart from rendering.

:mod:`sizing.report.data` prepares everything the guide shows from the runs, the
reference dataset and the engine (pure, no I/O; its :mod:`~sizing.report.data.format` is
the one format layer, shared with the terminal); :mod:`sizing.app.guide` reads the
inputs through the same use case as ``sizing recommend`` and builds it.
:mod:`sizing.report.render` turns it into output: :mod:`~sizing.report.render.charts`
draws the charts (matplotlib, imported lazily), :mod:`~sizing.report.render.html`
fills the Jinja2 templates of ``templates/``,
:mod:`~sizing.report.render.pdf` prints the HTML with WeasyPrint (imported lazily) and
:mod:`~sizing.report.render.text`, `table_text` and `run_text` lay out the terminal's tables.
"""
