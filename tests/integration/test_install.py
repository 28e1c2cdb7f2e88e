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
    guide = tmp_path / "out" / "guide.pdf"
    guide.parent.mkdir()
    run("guide", "--out", str(guide))  # the bundled templates and reference data, from the package
    assert guide.read_bytes().startswith(b"%PDF")
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


BUNDLED = ("profiles", "templates", "playbooks", "inventories")


def _build_python() -> str:
    """The Python that builds the wheel: ``SIZING_BUILD_PYTHON``, else this one. The build
    is offline (``--no-build-isolation``), so that Python's setuptools must take PEP 639
    metadata (77 or later); the test skips, saying so, when it cannot."""
    python = os.environ.get("SIZING_BUILD_PYTHON", sys.executable)
    got = subprocess.run(
        [python, "-c", "import setuptools; print(setuptools.__version__)"],
        capture_output=True,
        text=True,
    )
    if got.returncode != 0 or int(got.stdout.split(".")[0]) < 77:
        pytest.skip(
            f"{python} has no setuptools 77 or later to build the wheel offline "
            "(set SIZING_BUILD_PYTHON to a Python that has one)"
        )
    return python


def _tracked(folder: str) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", folder], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    return {rel for rel in filter(None, listed.split("\0")) if "__pycache__" not in rel}


def test_the_wheel_sizes_and_prints_guides_without_a_checkout(tmp_path: Path) -> None:
    """A sales engineer's install: the wheel alone (no checkout, no nginx, no network)
    carries the reference data, the catalog, the templates, the playbooks and the
    inventories, and answers ``recommend`` and writes the guide from another directory."""
    import zipfile

    python = _build_python()
    src, dist, site, work = (tmp_path / d for d in ("src", "dist", "site", "work"))
    _copy_checkout(src)
    offline = ["unshare", "-n"] if shutil.which("unshare") and os.geteuid() == 0 else []
    subprocess.run(
        [
            *offline,
            python,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--no-cache-dir",
            "-w",
            str(dist),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = dist.glob("sizing-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in BUNDLED:
        tracked = _tracked(folder)
        assert tracked, folder
        missing = {rel for rel in tracked if f"sizing/_data/{rel}" not in names}
        assert not missing, f"not in the wheel: {sorted(missing)}"
    assert {"sizing/_data/profiles/reference.yml", "sizing/_data/profiles/catalog.yml"} <= names
    subprocess.run(
        [
            *offline,
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "SIZING_DB": str(tmp_path / "db.sqlite")}
    env.pop("SIZING_HOME", None)

    def sizing(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*offline, sys.executable, "-m", "sizing", *args],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    where = sizing("--version")  # the installed package, not the checkout
    assert where.stdout.startswith("sizing ")
    code = "import sizing, sizing.paths as p; print(sizing.__file__, p.PROFILES)"
    found = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(f.startswith(str(site)) for f in found), found
    answer = json.loads(sizing("recommend", "--rps", "200000", "--json").stdout)
    assert answer["demand"]["rps"] == 200000
    assert "Cheapest" in sizing("recommend", "--rps", "200000").stdout
    sizing("guide", "--out", str(tmp_path / "guide.pdf"))
    assert (tmp_path / "guide.pdf").read_bytes().startswith(b"%PDF")
    assert list(work.iterdir()) == []  # nothing written where the user stands
