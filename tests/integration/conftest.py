"""Integration tests run real nginx, wrk and Ansible on this machine."""

from __future__ import annotations

import shutil

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def tools() -> None:
    for tool in ("nginx", "wrk", "taskset"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/setup --dev (make test does)")
