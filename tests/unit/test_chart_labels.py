"""A chart's printed values never overlap: the cost chart printed each bar's amount level
above it, and six bars side by side at one core count (bare metal, ESXi and KVM, HT off and
on) ran their EUR amounts into each other ("EUR 3,372" over "EUR 3,266"). The lab is
tests/labdb.py's simulated one (not a measurement), priced by one 40-core server."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sizing.app.guide import prepare
from sizing.engine import Demand
from sizing.report.data import GuideRequest
from sizing.report.data.guide import NAMED_HOSTS, _basis_text
from sizing.report.render import charts as charts_mod
from sizing.report.render import sizing_charts
from sizing.sizing_request import Inputs, SizingRequest
from tests.labdb import build_lab

CATALOG = """kind: catalog
name: one server in EUR
source: test prices, not a quote
currency: EUR
servers:
  - {name: R760, cores: 40, sockets: 2, price: %s, cpu_model: Gold 6248}
"""


@pytest.mark.parametrize("price", ["9400", "12345678.9"])
@pytest.mark.parametrize("kvm", [False, True])
def test_no_two_values_of_the_cost_chart_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, price: str, kvm: bool
) -> None:
    db, catalog = tmp_path / "lab.sqlite", tmp_path / "eur.yml"
    build_lab(db, kvm=kvm, reps=3)
    catalog.write_text(CATALOG % price)
    ((_, fig),) = _charts(db, catalog, monkeypatch, ["cost"])
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    labelled = 0
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_text().startswith("EUR")]
        labelled += len(texts)
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
        for (a, box_a), (b, box_b) in combinations(boxes, 2):
            assert not box_a.overlaps(box_b), (a, b)
        inside = ax.get_window_extent(renderer)
        for text, box in boxes:  # within the plot, under its title
            assert box.y1 <= inside.y1 + 0.5, text
    assert labelled >= 4  # the values are printed: two platforms or more, HT off and on


def _charts(
    db: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch, only: list[str]
) -> list[tuple[Any, Any]]:
    """Each chart of ``only`` with its matplotlib figure."""
    inputs = Inputs(db=db, catalog=catalog)
    request = GuideRequest(
        date="2026-01-02", sizing=SizingRequest(demand=Demand(rps=1e6), inputs=inputs)
    )
    guide = prepare(request).guide
    drawn: list[Any] = []
    monkeypatch.setattr(sizing_charts, "to_svg", lambda fig: drawn.append(fig) or "<svg/>")
    charts = charts_mod.render_charts(guide, only=only)
    return list(zip(charts, drawn, strict=True))


@pytest.mark.parametrize("made_up", [False, True])
def test_a_chart_says_its_figures_are_made_up_where_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_up: bool
) -> None:
    """An example store's figures (examples/simulated.py, flagged ``simulated``) were
    "measured (USL fit)" in Figure 1's legend and "(measured or reference)" in its caption,
    and the cost chart did not say what its throughput was."""
    db, catalog = tmp_path / "lab.sqlite", tmp_path / "eur.yml"
    build_lab(db, reps=3, flags=("simulated",) if made_up else ())
    catalog.write_text(CATALOG % "9400")
    kind = "simulated" if made_up else "measured"
    (throughput, fig), (cost, _) = _charts(db, catalog, monkeypatch, ["throughput", "cost"])
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts() if "fit)" in t.get_text()]
    assert labels and all(f", {kind} (" in label for label in labels), labels
    assert f"observed figures ({kind})" in throughput.caption
    # the 40-core server is priced on a floor of the 8-core figures: a floor of made-up ones
    assert "from floor" in cost.caption
    assert ("made up for an example, not measured" in cost.caption) is made_up
    if made_up:
        assert "measured" not in " ".join(labels)


class _Label:
    def __init__(self, text: str) -> None:
        self.text = text

    def label(self) -> str:
        return self.text


def _basis(platform: str, hosts: tuple[str, ...]) -> Any:
    return SimpleNamespace(
        origin="measured",
        kind="measured",
        platform=platform,
        hosts=hosts,
        hardware=_Label("Xeon Gold 6248"),
        workload=_Label("load-balancing to web servers, 128 B, RSA-2048"),
    )


@pytest.mark.parametrize("hosts", [1, 2, 4, 5, 8, 40])
def test_the_basis_sentence_names_four_hosts_at_most(hosts: int) -> None:
    """The basis sentence (the cover's Data row, the summary's lead) named every host: a
    lab of eight long host names filled the cover past its page. It names four at most, or
    three and how many more; the methodology names each."""
    names = [
        f"nginx-edge-{i:02d}.frankfurt-hall-b.payments.example-bank.internal" for i in range(hosts)
    ]
    half = (hosts + 1) // 2
    choice = SimpleNamespace(
        bases=[_basis("baremetal", tuple(names[:half])), _basis("esxi", tuple(names[half:]))],
        workload=None,
    )
    text = _basis_text(choice, "measured", "the article")  # type: ignore[arg-type]
    shown = [n for n in names if n in text]
    assert len(shown) == min(hosts, NAMED_HOSTS if hosts <= NAMED_HOSTS else NAMED_HOSTS - 1)
    if hosts > NAMED_HOSTS:
        assert f" and {hosts - NAMED_HOSTS + 1} more: " in text
    else:
        assert "more:" not in text
