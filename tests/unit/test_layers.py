"""The one-way flow is enforced by import-linter's ``layers`` contract (pyproject.toml,
run by ``make lint``). A module the contract does not name is not checked at all, so every
top-level module and package of ``sizing`` must appear in exactly one layer."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_A_STAGE = {"__init__", "__main__", "_data"}


def _layers() -> list[set[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in data["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [{m.strip() for m in layer.split("|")} for layer in contract["layers"]]


def test_every_sizing_module_is_in_one_layer() -> None:
    modules = {
        f"sizing.{p.stem}"
        for p in (ROOT / "sizing").iterdir()
        if p.stem not in NOT_A_STAGE
        and (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").is_file()))
    }
    named = [m for layer in _layers() for m in layer]
    assert sorted(modules - set(named)) == []  # a new module must be placed in the flow
    assert sorted(m for m in set(named) if named.count(m) > 1) == []
    assert sorted(set(named) - modules) == []  # no layer names a module that is gone
