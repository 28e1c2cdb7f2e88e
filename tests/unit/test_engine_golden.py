"""Golden engine cases: one YAML file per case in tests/data/engine/.

Each file names its inputs (the reference figures or a list of figures, the default
catalog or an inline one, a demand) and the expected outputs; numbers are compared to a
relative tolerance of 1e-3 so a case reads like the hand calculation in its description.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from sizing.catalog import catalog_from_dict, load_catalog, load_reference
from sizing.catalog.models import CatalogModel
from sizing.engine import (
    Basis,
    Demand,
    Hardware,
    Price,
    ServerOffer,
    Workload,
    build_table,
    choose,
    fit,
    latest,
    recommend,
)
from sizing.engine.compare import pair_bases
from sizing.model import Figure
from sizing.report.explain import explain

CASES = Path(__file__).resolve().parents[1] / "data" / "engine"


def _cases(kind: str) -> list[Any]:
    out = []
    for f in sorted(CASES.glob("*.yml")):
        data = yaml.safe_load(f.read_text(encoding="utf-8"))
        if data["kind"] == kind:
            out.append(pytest.param(data, id=f.stem))
    return out


def _close(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return bool(actual == expected)
    if isinstance(expected, int | float):
        return actual is not None and math.isclose(actual, expected, rel_tol=1e-3, abs_tol=1e-4)
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(
            _close(a, e) for a, e in zip(actual, expected, strict=True)
        )
    raise TypeError(expected)


def _match(actual: dict[str, Any], expected: dict[str, Any], where: str) -> None:
    for key, want in expected.items():
        assert key in actual, f"{where}: no {key!r} in {actual}"
        assert _close(actual[key], want), f"{where}.{key}: {actual[key]!r} != {want!r}"


def _basis(raw: dict[str, Any]) -> Basis:
    """A basis from a case: id, platform, hardware, workload, physical_host, figures."""
    bid = raw["id"]
    origin = raw.get("origin", "measured")
    figs = tuple(
        Figure(
            platform=raw["platform"],
            unit="requests/s" if f.get("profile", "rps") == "rps" else "handshakes/s",
            source=origin,
            basis=bid,
            **{"ht": "off", "profile": "rps", **f, "flags": tuple(f.get("flags", ()))},
        )
        for f in raw["figures"]
    )
    price = raw.get("price")
    return Basis(
        id=bid,
        origin=origin,
        platform=raw["platform"],
        hardware=Hardware(**raw.get("hardware", {"cpu_model": "Xeon"})),
        workload=Workload(**raw.get("workload", {"role": "static", "file_size": 128})),
        software=raw.get("software", "nginx 1.22"),
        physical_host=raw.get("physical_host", bid.split("/")[0]),
        runs=tuple(raw.get("runs", (1,))),
        figures=figs,
        flags=tuple(raw.get("flags", ())),
        price=None
        if price is None
        else Price(price["source"], tuple(ServerOffer(**o) for o in price["offers"])),
    )


def _mix(measured: list[Figure], reference: list[Figure], source: str) -> list[Figure]:
    """A case's figures: the measured ones, with the reference series none of them has
    (``both``), or the reference alone. (``sizing recommend`` chooses one basis instead:
    :mod:`sizing.sources`; these cases exercise the fleet search on mixed series.)"""
    ref = [f for f in latest(reference) if f.profile in ("rps", "tps")]
    if source == "reference":
        return ref
    mixed = [f for f in latest(measured) if f.profile in ("rps", "tps")]
    have = {(f.platform, f.ht, f.profile) for f in mixed}
    if source == "both":
        mixed += [f for f in ref if (f.platform, f.ht, f.profile) not in have]
    return mixed


def _inputs(case: dict[str, Any]) -> tuple[list[Figure], Any]:
    reference = load_reference().figures
    if "bases" in case:
        raw = case.get("catalog", "default")
        catalog = (
            load_catalog()
            if raw == "default"
            else catalog_from_dict(CatalogModel.model_validate(raw).model_dump())
        )
        return [], catalog
    if case["figures"] == "reference":
        measured: list[Figure] = []
        source = "reference"
    else:
        measured = [Figure(unit="requests/s", **f) for f in case["figures"]]
        source = case.get("source", "both")
    figures = _mix(measured, reference, source)
    raw = case.get("catalog", "default")
    catalog = (
        load_catalog()
        if raw == "default"
        else catalog_from_dict(CatalogModel.model_validate(raw).model_dump())
    )
    return figures, catalog


@pytest.mark.parametrize("case", _cases("recommend"))
def test_recommend_golden(case: dict[str, Any]) -> None:
    figures, catalog = _inputs(case)
    d = case["demand"]
    demand = Demand(
        rps=d.get("rps"),
        tps=d.get("tps"),
        headroom=d.get("headroom", 20) / 100.0,
        redundancy=d.get("redundancy", "none"),
    )
    bases = [_basis(b) for b in case.get("bases", [])]
    why = ""
    if bases:
        choice = choose(bases, case.get("basis"), include_virtualized=False, include_emulated=False)
        figures, why = list(choice.figures), choice.why
    result = recommend(
        figures,
        catalog,
        demand,
        platforms=case.get("platforms"),
        ht_modes=case.get("ht"),
        max_servers=case.get("max_servers", 64),
        bases=bases,
        article_prices=case.get("article_prices", False),
        allow_extrapolation=case.get("allow_extrapolation", False),
    )
    doc = replace(result, why=why).to_dict()  # the basis' sentence is the caller's to add
    expect = case["expect"]
    if "why_contains" in expect:
        assert expect["why_contains"] in doc["why"], doc["why"]
    for want in expect.get("rejected_contains", []):
        reasons = " | ".join(r["reason"] for r in doc["rejected"])
        assert want in reasons, reasons
    if expect.get("none"):
        assert doc["recommendation"] is None
    else:
        _match(doc["recommendation"], expect["recommendation"], "recommendation")
    for i, alt in enumerate(expect.get("alternatives", [])):
        _match(doc["alternatives"][i], alt, f"alternatives[{i}]")
    if "explanation_contains" in expect:
        assert expect["explanation_contains"] in " ".join(explain(result))
    if "source" in expect:
        assert doc["source"] == expect["source"]
    if "cost_basis" in expect:
        assert doc["cost_basis"] == expect["cost_basis"]
    if "fit" in expect:
        want = dict(expect["fit"])
        key = (want.pop("platform"), want.pop("ht"), want.pop("profile"))
        series = {(s["platform"], s["ht"], s["profile"]): s for s in doc["fits"]}
        _match(series[key]["fit"], want, f"fit{key}")


@pytest.mark.parametrize("case", _cases("table"))
def test_table_golden(case: dict[str, Any]) -> None:
    figures, catalog = _inputs(case)
    bases = [_basis(b) for b in case.get("bases", [])]
    if bases:
        figures = [f for b in bases for f in b.figures]
    table = build_table(figures, catalog, bases=bases, article_prices=True)
    doc = table.to_dict()
    expect = case["expect"]
    if "blocks" in expect:
        assert [b["bases"] for b in doc["blocks"]] == expect["blocks"]
    assert doc["source"] == expect["source"]
    assert doc["sources_used"] == expect["sources_used"]
    cells = {
        (c["platform"], c["ht"], c["profile"], c["cores"]): c
        for row in doc["rows"]
        for c in row["cells"]
    }
    for want in expect["cells"]:
        want = dict(want)
        key = (want.pop("platform"), want.pop("ht"), want.pop("profile"), want.pop("cores"))
        _match(cells[key], want, f"cell{key}")


@pytest.mark.parametrize("case", _cases("fit"))
def test_fit_golden(case: dict[str, Any]) -> None:
    for sub in case["cases"]:
        result = fit([(int(n), float(x)) for n, x in sub["points"]])
        got: dict[str, Any] = {
            "model": result.model,
            "lam": result.lam,
            "sigma": result.sigma,
            "kappa": result.kappa,
            "r2": result.r2,
        }
        want = sub["expect"]
        for key, value in want.items():
            if key in ("sigma", "kappa"):
                assert got[key] is not None and math.isclose(got[key], value, abs_tol=1e-4), (
                    sub,
                    got,
                )
            else:
                assert _close(got[key], value), (sub, got)


@pytest.mark.parametrize("case", _cases("pairs"))
def test_pairs_golden(case: dict[str, Any]) -> None:
    pairs, refused = pair_bases([_basis(b) for b in case["bases"]])
    assert [[b.id, g.id] for b, g in pairs] == case["expect"]["pairs"]
    got = {(r.guest, r.baremetal): r.reason for r in refused}
    for want in case["expect"]["refused"]:
        assert want["reason"] in got[(want["guest"], want["baremetal"])]
