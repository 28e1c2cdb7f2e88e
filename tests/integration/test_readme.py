"""The README works as typed: from a fresh clone of the committed HEAD, `make run`, then
`sizing guide --out guide.pdf` and `sizing recommend --rps 200000`.

Two documented shortcuts keep this test near one minute of CI:

* ``SIZING_RUN_ARGS="--repeat 2 --duration 2 --warmup 1"`` (the Makefile's override, empty
  by default) shortens `make run`'s measurement; the command is otherwise the README's.
* The clone's ``.venv`` is a fresh venv that borrows this checkout's installed dependencies
  (a ``.pth`` path line to its site-packages, whose own ``.pth`` files, including this
  checkout's editable finder, are not processed) and gets the clone itself installed
  editable with ``--no-deps`` (its ``ansible*`` commands linked in); the stamp
  scripts/setup checks is set, and the pinned
  vegeta and oha are copied into the clone's cache. scripts/setup then runs as typed (apt finds its
  packages, pip is skipped) without a second full pip install (minutes) and without
  touching this checkout's ``.venv``. ``sizing`` is linked by scripts/setup into a temp
  ``SIZING_BIN_DIR`` put first on PATH, so the README's bare ``sizing`` is the clone's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.integration.localnginx import check_local_sweep

# robust: make run's points may be invalid for any reason the machine explains (the test
# takes either answer); the machine's own run lock and ports are its alone (the emulated
# lab's localhost names its own)
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.robust]

REPO = Path(__file__).resolve().parents[2]


def _sh(argv: list[str], cwd: Path, env: dict[str, str], timeout: int) -> str:
    res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{argv}: rc {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def _borrowing_venv(clone: Path, env: dict[str, str]) -> None:
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (site / "_sizing_borrowed_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # Build isolation: the build backend (setuptools>=77) comes from pip's cache or index.
    _sh(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-e", "."],
        clone,
        env,
        300,
    )
    (venv / ".sizing-installed-0").touch()
    # The dependencies' commands (ansible-playbook, ...) from the borrowed venv.
    here = Path(sys.executable).parent
    for tool in here.iterdir():
        mine = venv / "bin" / tool.name
        if tool.name.startswith("ansible") and not mine.exists():
            mine.symlink_to(tool)
    cache = clone / ".cache" / "bin"
    cache.mkdir(parents=True)
    for tool in ("vegeta", "oha"):  # pinned builds: minutes to compile again
        built = REPO / ".cache" / "bin" / tool
        if built.is_file():
            shutil.copy2(built, cache / tool)


def test_readme_as_typed(tmp_path: Path) -> None:
    clone = tmp_path / "sizing"
    bin_dir = tmp_path / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env.update(
        SIZING_DB=str(tmp_path / "data" / "sizing.sqlite"),
        SIZING_BIN_DIR=str(bin_dir),
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        SIZING_RUN_ARGS="--repeat 2 --duration 2 --warmup 1",
    )
    _sh(["git", "clone", "-q", str(REPO), str(clone)], tmp_path, env, 120)
    _borrowing_venv(clone, env)

    # The README's two steps, as typed (with the shortening above).
    made = subprocess.run(
        ["make", "run"], cwd=clone, env=env, capture_output=True, text=True, timeout=900
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert (bin_dir / "sizing").resolve() == (clone / ".venv" / "bin" / "sizing").resolve()
    assert "run 1 (complete)" in made.stdout
    for line in made.stdout.splitlines():
        # the run table fits 100 columns; a line naming the results file holds the user's
        # path whole (here pytest's, whose length grows with its run counter)
        if str(tmp_path) not in line:
            assert len(line) <= 100, line

    # A first run on a host too small for the article's workload ends with the next step
    # as a command: it runs as printed (shortened the same way) and measures
    text = " ".join(made.stdout.split())
    if "No figure of this run is valid for sizing" in text:
        step = text[text.index("sizing run --cores 1 --profile") :].split(" Until then")[0]
        assert step == "sizing run --cores 1 --profile static-rps,static-tps", text
        extra = env["SIZING_RUN_ARGS"].split()
        ran = _sh([*step.split(), *extra], clone, env, 600)
        assert "run 2 (complete)" in ran and "static-rps" in ran and "static-tps" in ran, ran

    guide = _sh(["sizing", "guide", "--out", "guide.pdf"], clone, env, 300)
    pdf = clone / "guide.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-", guide
    rec = _sh(["sizing", "recommend", "--rps", "200000"], clone, env, 120)
    assert rec.startswith("Demand: 200,000 RPS") and "basis: " in rec.lower()
    assert Path(env["SIZING_DB"]).is_file()
    # what `make run` measured and stored (this was test_run_local's own sweep: one sweep of
    # the main job in CI, not two)
    check_local_sweep(Path(env["SIZING_DB"]), 1, repeat=2)
