"""The guide's charts: matplotlib (imported lazily, Agg backend) to SVG text.

**A registry.** Each chart is a builder ``(guide) -> Chart | None`` registered under an id
with :func:`register`; the guide template shows every chart :func:`render_charts` returns,
in registration order, numbered as figures. A builder returns ``None`` when the guide has
no data for it (no measured CPU samples, no overhead pair...), and the chart is left out.
A new chart (for instance latency against offered load, with the knee marked, for the
latency profile) is one more builder registered in a module this one imports (see
:mod:`sizing.report.render.sizing_charts`, :mod:`sizing.report.render.latency_charts`)::

    @register("latency")
    def latency_chart(guide: Guide) -> Chart | None:
        ...

**Greyscale-safe.** Every series differs by marker shape and line style as well as by
colour, and the colours differ in lightness, so a black-and-white print stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence

from sizing.report.data.model import Guide
from sizing.report.render.chartkit import CHARTS, Chart, ChartBuilder, register

# The chart modules register their builders on import: this order is the guide's order.
# isort: off
from sizing.report.render import sizing_charts  # noqa: F401, E402
from sizing.report.render import host_charts  # noqa: F401, E402
from sizing.report.render import latency_charts  # noqa: F401, E402
from sizing.report.render import gateway_charts  # noqa: F401, E402
# isort: on

__all__ = ["CHARTS", "Chart", "ChartBuilder", "register", "render_charts"]


def render_charts(guide: Guide, only: Sequence[str] | None = None) -> list[Chart]:
    """Every registered chart the guide has data for, in registration order."""
    out: list[Chart] = []
    for chart_id, builder in CHARTS.items():
        if only is not None and chart_id not in only:
            continue
        chart = builder(guide)
        if isinstance(chart, Chart):
            out.append(chart)
        elif chart is not None:
            out.extend(chart)
    return out
