"""``sizing run --workload DEMAND.yml``: the demand's workload section read, strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.errors import InputError
from sizing.plan.workload_spec import load_workload, workload_from_mapping
from sizing.workload import Role

EXAMPLE = """\
period: {start: 1}
workload:
  role: web
  role_source: stated with --role
  size_field: bytes_sent
  sizes: [{upto: 128, share: 0.5}, {upto: 4096, share: 0.3}, {upto: null, share: 0.2}]
  per_connection: [{from: 1, to: 1, share: 0.2}, {from: 2, to: 5, share: 0.3},
                   {from: 6, to: null, share: 0.5}]
  requests_per_connection: 8.0
  tls_share: 0.6
  resumption_share: 0.4
  status: {2xx: 0.95, 3xx: 0.03, 4xx: 0.02}
  assumed: [{figure: tls_share, value: 0.6, source: "customer's statement"}]
  missing: []
"""


def test_the_shape_sizing_demand_writes(tmp_path: Path) -> None:
    path = tmp_path / "demand.yml"
    path.write_text(EXAMPLE)
    mix, key = load_workload(path)
    assert mix.role is Role.STATIC and mix.size_field == "bytes_sent"
    assert mix.sizes == ((0, 128, 0.5), (129, 4096, 0.3), (4097, None, 0.2))
    assert mix.per_connection == ((1, 1, 0.2), (2, 5, 0.3), (6, None, 0.5))
    assert (mix.requests_per_connection, mix.tls_share, mix.resumption_share) == (8.0, 0.6, 0.4)
    assert dict(mix.status) == {"2xx": 0.95, "3xx": 0.03, "4xx": 0.02}
    assert mix.assumed[0].figure == "tls_share"
    assert key == mix.key()  # the canonical mix: the demand file's reader gives the same


def test_the_key_follows_the_workload_not_the_rest_of_the_file(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.yml", tmp_path / "b.yml", tmp_path / "c.yml"
    a.write_text(EXAMPLE)
    b.write_text(EXAMPLE.replace("start: 1", "start: 2"))
    c.write_text(EXAMPLE.replace("tls_share: 0.6\n", "tls_share: 0.5\n"))
    assert load_workload(a)[1] == load_workload(b)[1] != load_workload(c)[1]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("role: web", "role: ftp", "workload.role"),
        ("tls_share: 0.6\n", "tls_share: 1.6\n", "workload.tls_share"),
        ("share: 0.5}, {upto: 4096", "share: 0.9}, {upto: 4096", "workload.sizes"),
        ("upto: 4096", "upto: 64", "workload.sizes[1].upto"),
        ("{upto: 128, share: 0.5}", "{upto: null, share: 0.5}", "workload.sizes[0].upto"),
        ("from: 2, to: 5", "from: 1, to: 5", "workload.per_connection[1].from"),
        ("requests_per_connection: 8.0", "requests_per_connection: 0.5", "requests_per_conn"),
        ("2xx: 0.95", "2zz: 0.95", "workload.status"),
        ("size_field: bytes_sent", "size_field: bytes", "workload.size_field"),
        ("figure: tls_share", "figure: cost", "workload.assumed[0].figure"),
    ],
)
def test_a_bad_field_is_one_line_naming_file_and_field(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    path = tmp_path / "demand.yml"
    assert old in EXAMPLE
    path.write_text(EXAMPLE.replace(old, new))
    with pytest.raises(InputError) as exc:
        load_workload(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: ") and field in message and "\n" not in message


def test_a_demand_without_a_workload_says_how_to_write_one(tmp_path: Path) -> None:
    path = tmp_path / "demand.yml"
    path.write_text("period: {start: 1}\n")
    with pytest.raises(InputError, match="--role"):
        load_workload(path)


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.dictionaries(st.sampled_from(["upto", "from", "to", "share"]), st.integers(-1, 9))),
    st.dictionaries(st.text(max_size=4), st.floats(0, 1), max_size=3),
)
KEYS = [
    "role",
    "size_field",
    "sizes",
    "per_connection",
    "requests_per_connection",
    "tls_share",
    "resumption_share",
    "status",
    "assumed",
    "missing",
]


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=300)
@given(st.sampled_from(KEYS), values)
def test_any_value_in_any_field_is_read_or_refused_by_name(key: str, value: Any) -> None:
    section = yaml.safe_load(EXAMPLE)["workload"]
    section[key] = value
    try:
        mix = workload_from_mapping(section)
    except ValueError as exc:
        assert str(exc).startswith("workload."), exc
        return
    for bins in (mix.sizes, mix.per_connection):
        assert all(0 <= s <= 1 for _, _, s in bins)
    for share in (mix.tls_share, mix.resumption_share):
        assert share is None or 0 <= share <= 1


def test_run_workload_plans_the_replay_alone_and_a_bad_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from sizing.cli import app

    monkeypatch.setenv("SIZING_DB", str(tmp_path / "r.sqlite"))
    path = tmp_path / "demand.yml"
    path.write_text(EXAMPLE)
    runner = CliRunner()
    doc = runner.invoke(app, ["run", "--cores", "1", "--workload", str(path), "--plan", "--json"])
    assert doc.exit_code == 0, doc.output
    key = load_workload(path)[1]
    assert key in doc.stdout and '"rps"' not in doc.stdout
    both = ["run", "--cores", "1", "--workload", str(path), "--profile", "rps", "--plan", "--json"]
    got = runner.invoke(app, both).stdout
    assert key in got and '"rps"' in got
    path.write_text(EXAMPLE.replace("tls_share: 0.6\n", "tls_share: high\n"))
    bad = runner.invoke(app, ["run", "--workload", str(path), "--plan"])
    assert bad.exit_code == 3 and bad.stdout == ""
    assert f"{path}: workload.tls_share" in bad.stderr and "Traceback" not in bad.stderr
    assert bad.stderr.count("\n") == 1
    # what the replay cannot serve is refused at the edge: nothing is replayed as 0
    unstated = EXAMPLE.replace("tls_share: 0.6\n", "tls_share: null\n")
    assumed = '  assumed: [{figure: tls_share, value: 0.6, source: "customer\'s statement"}]\n'
    assert assumed in unstated
    path.write_text(unstated.replace(assumed, "  assumed: []\n"))
    unknown = runner.invoke(app, ["run", "--workload", str(path), "--plan"])
    assert unknown.exit_code == 3 and "--assume tls-share" in unknown.stderr
    path.write_text(EXAMPLE)
    resumed = runner.invoke(app, ["run", "--resume", "1", "--workload", str(path)])
    assert resumed.exit_code == 2 and "drop --workload" in resumed.stderr
