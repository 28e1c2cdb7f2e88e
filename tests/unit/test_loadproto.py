"""The host protocol: one module both sides import (sizing.loadproto, copied beside
playbooks/files/loadgen.py), and what the window runner prints is what sizing reads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time

import pytest

from sizing import paths
from sizing.loadproto import (
    Command,
    LoadSpec,
    ProtocolError,
    RunnerOutput,
    WindowOutput,
    WindowSpec,
)

FILES = paths.PLAYBOOKS / "files"


def test_the_hosts_copy_is_sizings_module() -> None:
    here = paths.ROOT / "sizing" / "loadproto.py"
    assert (FILES / "loadproto.py").read_bytes() == here.read_bytes()
    tree = ast.parse((FILES / "loadgen.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "loadproto" in imported  # the runner speaks the same module


@pytest.mark.parametrize("script", sorted(p.name for p in FILES.glob("*.py")))
def test_host_scripts_parse_as_python_38(script: str) -> None:
    """The hosts run these with their own Python (ansible-core 2.19: 3.8 and later)."""
    ast.parse((FILES / script).read_text(), feature_version=(3, 8))


def test_spec_round_trips_and_leaves_the_controllers_rate_out() -> None:
    spec = LoadSpec(
        [
            WindowSpec(0, 0.0, 2.0, [Command(["wrk", "-d2"])], rate=1000),
            WindowSpec(1, 3.0, 2.0, [Command(["vegeta"], stdin="GET /", then=[["r"]])]),
        ],
        sample_cpu=True,
        pidfile="/run/x.pid",
        ports=[8080],
        start_at=5.0,
        run="abc",
    )
    doc = spec.to_json()
    assert "rate" not in json.dumps(doc)
    assert doc["windows"][0]["commands"] == [["wrk", "-d2"]]
    back = LoadSpec.from_json(json.loads(json.dumps(doc)))
    assert back.windows[1].commands == spec.windows[1].commands
    assert back.windows[0].rate is None and back.pidfile == "/run/x.pid" and back.run == "abc"


def test_an_output_of_another_shape_is_refused() -> None:
    with pytest.raises(ProtocolError, match="missing 'windows'"):
        RunnerOutput.from_json({"began": 1.0})
    with pytest.raises(ProtocolError, match="'index': expected int"):
        RunnerOutput.from_json({"windows": [{"index": "0", "start": 1.0, "end": 2.0}]})
    ok = WindowOutput.from_json({"index": 0, "start": 1, "end": 2, "server_alive": False})
    assert ok.span_s == 1.0 and ok.server_alive is False and ok.commands == []


def test_the_window_runner_prints_what_sizing_reads() -> None:
    """A real runner (loadgen.py, a 0.2 s window with one command, no load)."""
    spec = LoadSpec(
        [WindowSpec(0, 0.0, 0.2, [Command(["echo", "hello"])])],
        sample_cpu=True,
        start_at=time.time(),
    )
    out = subprocess.run(
        [sys.executable, str(FILES / "loadgen.py"), json.dumps(spec.to_json())],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    got = RunnerOutput.from_json(json.loads(out.stdout))
    (w,) = got.windows
    assert w.index == 0 and w.commands[0].stdout == "hello\n" and w.commands[0].rc == 0
    assert w.sampled_cpu and w.end > w.start and got.began > 0
