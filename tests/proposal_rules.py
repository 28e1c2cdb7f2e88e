"""Two invariants of issue 59 beside tests/proposal_checks.py: every licence line is
charged where its rule says (per core with its per-CPU minimum, socket, socket pair,
server or instance; its order minimum; its currency at the stated rate; its discount),
under its own name; and every platform the catalog licenses is in the answer, priced
beside the others or named not priced with the reason, on every rendering.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from sizing.report.data.format import amount
from tests.proposal_cases import Case

FAMILY = {"esxi": "hypervisor", "kvm": "hypervisor", "hypervisor": "hypervisor"}
# a container leg pays the Kubernetes licence (the platform it runs under in production)
RUNS_UNDER = {"container": "kubernetes"}
KUBE = ("kubernetes", "container")


def _applying(case: Case, platform: str) -> list[tuple[str, dict[str, Any]]]:
    """The lines ``platform`` pays, by the catalog's rule: its own key, else its family's,
    else the platform it runs under; then every platform's (``all``)."""
    lines = case.licence_lines()
    keys = {k for k, _ in lines}
    own = next(
        (
            k
            for k in (platform, FAMILY.get(platform, platform), RUNS_UNDER.get(platform, ""))
            if k and k != "all" and k in keys
        ),
        None,
    )
    return [(k, x) for k, x in lines if k == own] + [(k, x) for k, x in lines if k == "all"]


def _unit_price(case: Case, line: dict[str, Any]) -> float:
    """One unit in the catalog's currency: list × rate × (1 − its discount, else the
    catalog's)."""
    cur = line.get("currency") or case.currency
    rate = 1.0 if cur == case.currency else case.catalog["exchange_rates"][cur]["rate"]
    own = line.get("discount")
    discount = case.catalog.get("discount") or 0.0 if own is None else own
    return float(line["price"]) * rate * (1.0 - discount)


def _units(line: dict[str, Any], cores: int, sockets: int) -> int:
    per = line["per"]
    if per in ("server", "instance"):
        return 1
    if per == "socket":
        return sockets
    if per == "socket-pair":
        return (sockets + 1) // 2
    return max(cores, sockets * int(line.get("min_cores_per_socket") or 0))


def _configs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = [doc.get("recommendation"), *doc.get("alternatives", [])]
    platforms = doc.get("platforms") or {}
    sides = [platforms.get("baremetal"), platforms.get("guest"), *(platforms.get("others") or [])]
    out += [s.get("identical") for s in sides if s]
    return [c for c in out if c and c.get("server_name")]


def licence_rules(case: Case, doc: dict[str, Any]) -> None:
    """Each identical fleet's licence lines over the answer's period (``--years`` when
    asked, else the catalog's), computed by hand from the catalog's terms (a growing
    demand's plan, year by year, is the plan invariant's)."""
    months = 12 * case.years if case.years else case.catalog.get("amortisation_months") or 12
    servers = {s["name"]: s for s in case.servers}
    for c in _configs(doc):
        s = servers.get(c["server_name"])
        if s is None:
            continue
        cores, sockets, n = int(s["cores"]), int(s.get("sockets", 1)), int(c["servers"])
        got = {x["name"]: x["cost"] for x in c["cost"]["licences"]}
        want = {}
        for _, line in _applying(case, c["platform"]):
            units = max(_units(line, cores, sockets) * n, int(line.get("min_per_order") or 0))
            terms = months / 12.0 if line.get("term") == "yearly" else 1.0
            want[line["name"]] = _unit_price(case, line) * units * terms
        assert set(got) == set(want), (c["platform"], got, want)
        for name, cost in want.items():
            assert got[name] == pytest.approx(cost, abs=0.02), (c["platform"], name, got, want)


def every_platform(case: Case, doc: dict[str, Any], term: str, guide: str) -> str:
    """A Kubernetes licence in the catalog: Kubernetes is priced beside the others (its
    basis named, a reference figure labelled) or named not priced with the reason, in
    the terminal, the JSON and the guide; never dropped."""
    if "kubernetes" not in {k for k, _ in case.licence_lines()}:
        return "no Kubernetes licence"
    best = doc.get("recommendation")
    if best is None:
        return "Kubernetes licence: no answer (no server carries the demand)"
    if best["platform"] in KUBE:
        return "Kubernetes: the answer itself"
    platforms = doc.get("platforms")
    assert platforms, "a Kubernetes licence priced, and no comparison of platforms"
    sides = [platforms["baremetal"], platforms["guest"], *platforms["others"]]
    priced = [s for s in sides if s["platform"] in KUBE and not s.get("not_priced")]
    reasons = [u["what_would_price_it"] for u in platforms["unpriced"] if u["platform"] in KUBE]
    reasons += [s["not_priced"] for s in sides if s["platform"] in KUBE and s.get("not_priced")]
    assert len(priced) + len(reasons) == 1, (priced, reasons)
    if reasons:
        said = " ".join(reasons[0].split())[:60]
        assert f"Kubernetes: not priced: {said}" in term, said
        assert f"Not priced on Kubernetes: {said}" in guide, said
        return "Kubernetes not priced, the reason said"
    side = priced[0]
    assert side["own_basis"] and side["own_basis"] in term, side["own_basis"]
    label = "Container" if side["platform"] == "container" else "Kubernetes"
    assert f"{label}: {side['servers']} server" in term
    assert f"{label} (on " in guide and amount(side["total"], case.currency) in guide
    # on the answer's workload: the published Kubernetes table is a reverse proxy's, a
    # container leg's id names its workload (``host/container/load-balance-128b``)
    basis = (side["identical"] or {}).get("basis") or ""
    role = "proxy" if basis == "reference/kubernetes" else basis.split("/")[-1].rsplit("-", 1)[0]
    assert role in {b["workload"]["role"] for b in doc["bases"]}, (basis, doc["bases"])
    for f in (side["identical"] or {}).get("figures", []):
        if f["basis"] == "reference/kubernetes":
            # the published figure, or a floor on it beyond its 8 cores, said so
            assert f["coverage"] is None and not f["interval"], f
            assert f["source"] == "reference" or "reference/kubernetes" in f["origin"], f
    return f"Kubernetes priced on {side['platform']}"


def one_period(case: Case, doc: dict[str, Any], term: str, guide: str) -> None:
    """Every rendering states one period: ``--years`` when asked, else the catalog's
    ``amortisation_months`` (the guide's proposal said the catalog's 60 months, and a cost
    per year of the total / 5, over a 10-year plan)."""
    months = 12 * case.years if case.years else case.catalog.get("amortisation_months")
    if not months or doc.get("recommendation") is None:
        return
    for text in (term, guide):
        said = set(re.findall(r"over (\d+) months", text))
        assert said <= {str(months)}, (months, said)
        years = set(re.findall(r"[Tt]otal over (\d+) years", text))
        assert years <= {f"{months / 12:g}"}, (months, years)


def differences_subtract(case: Case, doc: dict[str, Any], guide: str) -> None:
    """Each "costs X more than on ..." is the difference of the two totals as printed, to
    the cent (the guide said EUR 145,528.70 between EUR 381,136.58 and EUR 235,607.87)."""
    platforms, rec = doc.get("platforms"), doc.get("recommended")
    if not platforms or rec is None:
        return
    sides = [platforms["baremetal"], platforms["guest"], *platforms["others"]]
    priced = [s for s in sides if s.get("total") is not None]
    if platforms.get("extra_cost") is not None:
        extra = platforms["guest"]["total"] - platforms["baremetal"]["total"]
        assert platforms["extra_cost"] == pytest.approx(extra, abs=0.001), platforms
    base = next((s for s in priced if s["platform"] == rec["platform"]), None)
    if base is None:
        return
    for s in priced:
        diff = round(s["total"] - base["total"], 2)
        if s is not base and diff >= 0.005:
            assert f"costs {amount(diff, case.currency)} more than on" in guide, (s, diff)
