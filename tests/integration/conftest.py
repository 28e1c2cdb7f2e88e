"""Integration tests run real nginx, wrk and Ansible on this machine."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from sizing.provision import ansible


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _noload_measures_nothing(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``noload`` test may run while scripts/bg compiles (``make test``): make sure it
    starts no load window through sizing (load.yml), which a compile would disturb."""
    if request.node.get_closest_marker("noload") is not None:
        real = ansible.run_playbook

        def refuse_load(playbook: str, *args: Any, **kwargs: Any) -> Any:
            if playbook in ansible.LOAD_PLAYBOOKS:
                pytest.fail(f"a noload test ran {playbook}: drop its noload mark")
            return real(playbook, *args, **kwargs)

        monkeypatch.setattr(ansible, "run_playbook", refuse_load)


@pytest.fixture(scope="session")
def tools() -> None:
    for tool in ("nginx", "wrk", "taskset"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/setup --dev (make test does)")
