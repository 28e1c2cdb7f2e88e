"""``--json`` is strict JSON: never a bare NaN or Infinity, anywhere in the document."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.cli.app import emit_json, strict_json
from sizing.records import PointMeta, SampleMeta


def strict_loads(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_null(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json(
        {
            "price": math.inf,
            "low": -math.inf,
            "spread": math.nan,
            "rows": [{"usd": math.inf}, (1.5, math.nan)],
            math.inf: "key",
            "fine": 2.5,
        }
    )
    doc = strict_loads(capsys.readouterr().out)
    assert doc == {
        "price": None,
        "low": None,
        "spread": None,
        "rows": [{"usd": None}, [1.5, None]],
        "inf": "key",
        "fine": 2.5,
    }


def test_objects_still_print_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    emit_json({"db": Path("/x/y.sqlite")})
    assert strict_loads(capsys.readouterr().out) == {"db": "/x/y.sqlite"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.floats(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_document_is_strict_json(value: Any) -> None:
    text = json.dumps(strict_json(value), allow_nan=False)
    strict_loads(text)


def test_results_json_with_infinite_figures(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from sizing.cli import app
    from sizing.model import PointKey, PointResult, Sample, Status
    from sizing.store import Store

    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run = store.start_run(inventory="i", argv=[], tool_version="t", options={})
        store.add_point(
            run,
            PointResult(
                PointKey("h", "baremetal", 1, "off", "rps"),
                Status.MEASURED,
                value=math.inf,
                spread=-math.inf,
                metadata=PointMeta.parse({"x": math.inf}),
            ),
            [(1, Sample("rps", math.inf, "req/s", SampleMeta.parse({"y": -math.inf})))],
        )
    result = CliRunner().invoke(app, ["results", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    assert "Infinity" not in result.stdout and "NaN" not in result.stdout
    strict_loads(result.stdout)


def test_a_reader_that_stops_reading_is_not_an_internal_error() -> None:
    """`sizing results --csv | head`: the broken pipe ends the command quietly, exit 0."""
    import subprocess
    import sys

    script = (
        "import typer\n"
        "from sizing.cli.app import guarded\n"
        "@guarded\n"
        "def big() -> None:\n"
        "    for i in range(200_000):\n"
        "        typer.echo(f'row {i},' + 'x' * 60)\n"
        "typer.run(big)\n"
    )
    proc = subprocess.run(
        ["bash", "-c", f'set -o pipefail; "{sys.executable}" -c "$0" | head -c 10', script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout == "row 0,xxxx"
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0
