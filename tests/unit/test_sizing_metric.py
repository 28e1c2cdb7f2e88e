"""How a profile sizes is its own ``metric:`` (:attr:`Profile.sizing_metric`), not its
name: the bundled profiles that size are the four that always did and the gateways' (each
for its own role's demand), a new profile file with a sizing metric sizes with no other
change (a stored point by its run's own definition: ``tests/unit/test_stored_profile.py``),
and the metric is an enum whose JSON is the plain string it replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing import paths, profiles
from sizing.model import SizingMetric
from sizing.profiles import SIZING_METRICS
from sizing.sources.bases import sizing_metric


def test_the_article_s_four_size_and_every_profile_that_sizes_says_so() -> None:
    sizes = {name: profiles.load(name).sizing_metric for name in profiles.available()}
    sized = {n: m for n, m in sizes.items() if m is not None}
    assert {
        "rps": SizingMetric.RPS,
        "static-rps": SizingMetric.RPS,
        "tps": SizingMetric.TPS,
        "static-tps": SizingMetric.TPS,
    }.items() <= sized.items()
    # a new bundled profile may size: by its own metric
    for name in sized:
        assert profiles.load(name).metric in SIZING_METRICS
    # a gateway's requests (or API calls) per second size a demand of its own role only:
    # its bases carry the role (tests/unit/test_workload_roles.py)
    assert profiles.load("proxy").metric == "requests_per_second"
    assert sizes["proxy"] is SizingMetric.RPS and sizes["api-jwt"] is SizingMetric.RPS
    assert sizes["api-jwt-cpu"] is None and sizes["proxy-cpu"] is None
    assert sizing_metric("rps") is SizingMetric.RPS
    assert sizing_metric("latency") is None
    assert sizing_metric("no-such-profile") is None


def test_a_new_profile_sizes_by_its_metric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    text = (paths.PROFILES / "static-rps.yml").read_text(encoding="utf-8")
    (folder / "static-rps-10k.yml").write_text(
        text.replace("name: static-rps", "name: static-rps-10k"), encoding="utf-8"
    )
    (folder / "static-tps-ecdsa.yml").write_text(
        (paths.PROFILES / "static-tps.yml")
        .read_text(encoding="utf-8")
        .replace("name: static-tps", "name: static-tps-ecdsa"),
        encoding="utf-8",
    )
    monkeypatch.setattr(paths, "PROFILES", folder)
    assert sizing_metric("static-rps-10k") is SizingMetric.RPS
    assert sizing_metric("static-tps-ecdsa") is SizingMetric.TPS
    assert sizing_metric("rps") is None  # not in this folder


def test_the_metric_is_its_string_in_json_and_keys() -> None:
    assert json.dumps({SizingMetric.RPS: [SizingMetric.TPS]}) == '{"rps": ["tps"]}'
    assert f"{SizingMetric.TPS}" == "tps" and {"rps": 1}[SizingMetric.RPS] == 1
