"""The lab's figures survive a customer's catalog: ``sizing table`` keeps a row for every
core count with figures (unpriced where the catalog sells no such server) beside the
catalog's own core counts, and says which is which."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sizing.cli import app

runner = CliRunner()

CATALOG = """\
kind: catalog
name: Acme
source: Acme quote 2026-11
servers:
  - {cores: 8, price: 4100, name: PowerEdge R460}
  - {cores: 16, price: 7900, name: PowerEdge R660}
  - {cores: 32, price: 14500, name: PowerEdge R760}
"""


def test_observed_core_counts_keep_their_rows_beside_the_catalogs(tmp_path: Path) -> None:
    cat = tmp_path / "acme.yml"
    cat.write_text(CATALOG, encoding="utf-8")
    args = [
        "table",
        "--source",
        "reference",
        "--catalog",
        str(cat),
        "--db",
        str(tmp_path / "none.sqlite"),
    ]
    got = runner.invoke(app, [*args, "--json"])
    assert got.exit_code == 0, got.stderr
    rows = {r["cores"]: r for r in json.loads(got.stdout)["rows"]}
    assert sorted(rows) == [1, 2, 4, 8, 16, 32]
    for n in (1, 2, 4):  # published, not sold: a figure, no price
        assert rows[n]["observed"] and not rows[n]["in_catalog"]
        assert rows[n]["hardware_cost"] is None
        assert any(c["value"] and c["source"] == "reference" for c in rows[n]["cells"])
    for n in (16, 32):  # sold, not published
        assert rows[n]["in_catalog"] and not rows[n]["observed"]
    text = runner.invoke(app, args)
    assert "not sold in the catalog (no price): 1, 2, 4" in " ".join(text.stdout.split())
