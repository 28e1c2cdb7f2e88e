"""Install smoke test: ``pipx install`` of the checkout works from any directory.

The package must carry its profiles, templates, playbooks and inventories, and keep its
results in the user's data directory (here ``SIZING_DB`` in a temp dir), not in the
working directory. The checkout's files (tracked and new, not ignored) are copied first,
so the test builds what is in the working tree without writing into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.noload, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
INI = REPO / "tests" / "data" / "inventories" / "ini" / "hosts.ini"


def _copy_checkout(dest: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, target)


def test_pipx_install_runs_from_another_directory(tmp_path: Path) -> None:
    pipx = Path(sys.executable).parent / "pipx"
    if not pipx.exists():
        pytest.skip("pipx is not installed (scripts/setup --dev installs it)")
    src, home, work = tmp_path / "src", tmp_path / "pipx", tmp_path / "work"
    _copy_checkout(src)
    work.mkdir()
    env = {
        **os.environ,
        "PIPX_HOME": str(home),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
        "SIZING_DB": str(tmp_path / "data" / "sizing.sqlite"),
    }
    env.pop("SIZING_HOME", None)
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(
        [str(pipx), "install", "--python", sys._base_executable, str(src)],
        env=env,
        cwd=work,
        check=True,
        capture_output=True,
        timeout=600,
    )
    sizing = home / "bin" / "sizing"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(sizing), *args], env=env, cwd=work, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    assert run("--version").stdout.startswith("sizing ")
    recommendation = json.loads(run("recommend", "--rps", "100000", "--json").stdout)
    assert recommendation["demand"]["rps"] == 100000
    inventory = work / "lab" / "hosts.ini"
    inventory.parent.mkdir()
    shutil.copy(INI, inventory)
    checked = run("inventory", "check", str(inventory))
    assert "web01" in checked.stdout and "load2" in checked.stdout
    # Nothing was written into the working directory, and the package is the installed one.
    assert sorted(p.name for p in work.iterdir()) == ["lab"]
    where = subprocess.run(
        [
            str(home / "venvs" / "sizing" / "bin" / "python"),
            "-c",
            "from sizing import paths; print(paths.PROFILES)",
        ],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(home) in where.stdout and (Path(where.stdout.strip()) / "catalog.yml").is_file()
